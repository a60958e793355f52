/**
 * The developer's home: where the API is, this store's id, and a first call (list the orders)
 * with `curl` and with `@svc/sdk`, for a key the seller picks. Only a key's prefix is known after
 * it was created, so the snippets hold the prefix with `...` for the seller to replace. The keys
 * offered are of the dashboard's mode: in test mode, test keys (`sk_test_…`).
 *
 * The base URL shown is the origin, which is what the SDK's `baseUrl` takes (it adds `/trpc`
 * itself, and refuses a base ending in `/api`). The curl snippet quotes its URL: an
 * unquoted `?` is a glob to zsh (macOS's shell), which refuses the command.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { trpc } from '../../api';
import { useMode } from '../../mode';
import { useStore, useStoreId } from '../../store';
import { ConfirmAction } from '../../ui/dialogs';
import { Loaded } from '../../ui/feedback';
import { formatDateTime } from '../../ui/format';
import { DataTable } from '../../ui/table';

function Snippet({ label, text }: { label: string; text: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <section aria-label={label}>
      <h3 className="small-heading">{label}</h3>
      <pre className="code-block" tabIndex={0}>
        {text}
      </pre>
      <div className="actions">
        <button
          type="button"
          className="button"
          aria-label={`Copy the ${label} snippet`}
          onClick={() => void navigator.clipboard?.writeText(text).then(() => setCopied(true))}
        >
          Copy
        </button>
        <span role="status" className="muted">
          {copied ? 'Copied.' : ''}
        </span>
      </div>
    </section>
  );
}

/**
 * The keys that sign offline license leases, of the dashboard's mode: the JWKS the merchant's
 * software verifies them with, and `Rotate signing key` (editOrders) behind a dialog.
 */
function LeaseSigningKeys() {
  const storeId = useStoreId();
  const mode = useMode();
  const { can } = useStore();
  const queryClient = useQueryClient();
  const keys = useQuery(trpc.licenses.signingKeys.queryOptions({ storeId }));
  const rotate = useMutation(
    trpc.licenses.rotateSigningKey.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries({ queryKey: trpc.licenses.signingKeys.queryKey({ storeId }) }),
    }),
  );
  const jwks = `${window.location.origin}/api/v1/licenses/jwks/${storeId}`;
  return (
    <section aria-labelledby="lease-keys-heading">
      <h2 id="lease-keys-heading">License signing keys</h2>
      <p>
        Offline license leases are signed with this store&apos;s Ed25519 key{mode === 'test' ? ' for test mode' : ''};
        your software verifies them with the public keys at <code className="wrap-anywhere">{jwks}</code>.
      </p>
      <Loaded query={keys} label="Loading the signing keys…">
        {(data) => (
          <DataTable
            caption="License signing keys"
            empty="No key yet: the first lease makes one."
            rows={data.keys}
            rowKey={(key) => key.kid}
            columns={[
              { header: 'Key id (kid)', cell: (key) => <code>{key.kid}</code> },
              { header: 'Created', cell: (key) => formatDateTime(key.createdAt) },
              {
                header: 'State',
                cell: (key) =>
                  key.retiredAt
                    ? `Retired ${formatDateTime(key.retiredAt)}; in the JWKS until ${formatDateTime(key.publishedUntil ?? key.retiredAt)}`
                    : 'Current',
              },
            ]}
          />
        )}
      </Loaded>
      {can('editOrders') ? (
        <div className="actions">
          <ConfirmAction
            verb="Rotate signing key"
            confirm="Rotate"
            title="Rotate the license signing key?"
            destructive={false}
            pending={rotate.isPending}
            error={rotate.error}
            onConfirm={() => rotate.mutateAsync({ storeId })}
          >
            <p>
              New leases are signed with a new key from now on. Leases signed with the current key keep verifying: its
              public key stays in the JWKS for 90 days, longer than any lease lasts.
            </p>
          </ConfirmAction>
        </div>
      ) : null}
    </section>
  );
}

export function Developers() {
  const storeId = useStoreId();
  const mode = useMode();
  const keys = useQuery(trpc.apiKeys.list.queryOptions());
  const [keyId, setKeyId] = useState('');
  const origin = window.location.origin;
  return (
    <>
      <h1>Developers</h1>
      <dl className="facts">
        <dt>Base URL</dt>
        <dd>
          <code>{origin}</code> <span className="muted">(the SDK's baseUrl; REST paths start with /api/)</span>
        </dd>
        <dt>Store id</dt>
        <dd>
          <code>{storeId}</code>
        </dd>
        <dt>Reference</dt>
        <dd>
          <a href="/docs">API reference (/docs)</a>
        </dd>
      </dl>
      <p>
        Manage{' '}
        <Link to="/stores/$storeId/api-keys" params={{ storeId }}>
          API keys
        </Link>
        ,{' '}
        <Link to="/stores/$storeId/webhooks" params={{ storeId }}>
          webhooks
        </Link>{' '}
        and{' '}
        <Link to="/stores/$storeId/events" params={{ storeId }} search={{}}>
          events
        </Link>
        .
      </p>
      <h2>List orders</h2>
      <Loaded query={keys} label="Loading your API keys…">
        {({ apiKeys }) => {
          const usable = apiKeys.filter(
            (key) =>
              key.mode === mode &&
              !key.revokedAt &&
              (!key.expiresAt || Date.parse(key.expiresAt) > Date.now()) &&
              key.storeIds.includes(storeId) &&
              key.scopes.includes('order:read'),
          );
          const chosen = usable.find((key) => key.id === keyId) ?? usable[0];
          // The key is shown once, at creation: here only its prefix is known.
          const placeholder = chosen ? `${chosen.prefix}...` : `sk_${mode}_...`;
          const curl = [
            `curl '${origin}/api/merchant/v1/stores/${storeId}/orders?limit=10' \\`,
            `  -H "Authorization: Bearer ${placeholder}"`,
          ].join('\n');
          const sdk = [
            "import { createMerchantClient } from '@svc/sdk';",
            '',
            'const svc = createMerchantClient({',
            `  baseUrl: '${origin}',`,
            `  apiKey: process.env.SVC_API_KEY!, // ${placeholder}`,
            '});',
            '',
            `const { orders } = await svc.orders.list({ storeId: '${storeId}', limit: 10 });`,
            'for (const order of orders) console.log(order.orderId, order.status);',
          ].join('\n');
          return (
            <>
              {usable.length === 0 ? (
                <p>
                  No key of yours reaches this store with <code>order:read</code>
                  {mode === 'test' ? ' in test mode' : ''}.{' '}
                  <Link to="/stores/$storeId/api-keys" params={{ storeId }}>
                    Create one
                  </Link>
                  , then come back.
                </p>
              ) : (
                <div className="field">
                  <label htmlFor="snippet-key">API key</label>
                  <select id="snippet-key" value={chosen?.id ?? ''} onChange={(event) => setKeyId(event.target.value)}>
                    {usable.map((key) => (
                      <option key={key.id} value={key.id}>
                        {key.name} ({key.prefix}…)
                      </option>
                    ))}
                  </select>
                  <span className="hint">
                    Replace <code>{placeholder}</code> with the whole key you copied when you created it.
                  </span>
                </div>
              )}
              <Snippet label="curl" text={curl} />
              <Snippet label="@svc/sdk" text={sdk} />
            </>
          );
        }}
      </Loaded>
      <LeaseSigningKeys />
    </>
  );
}
