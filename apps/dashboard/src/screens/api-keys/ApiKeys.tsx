/**
 * API keys: the signed-in seller's merchant keys (a key belongs to its user and lists the stores
 * it reaches). Created with a name, a mode (live or test, the dashboard's mode first), scopes,
 * stores and an optional expiry; the key itself (`sk_live_…` / `sk_test_…`) is shown once in a
 * SecretDialog; the list shows only its prefix and its mode. Revoking asks first. Keys are the
 * seller's, not a mode's: the list is the same in both modes.
 */
import { zodResolver } from '@hookform/resolvers/zod';
import { ZCreateApiKeyInput } from '@svc/schemas';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { z } from 'zod';
import { trpc, type RouterOutputs } from '../../api';
import { useMode } from '../../mode';
import { useStore, useStoreId } from '../../store';
import { ConfirmAction, FormDialog, SecretDialog } from '../../ui/dialogs';
import { ErrorNote, Loaded } from '../../ui/feedback';
import { TextInput } from '../../ui/fields';
import { formatDate, formatDateTime } from '../../ui/format';
import { onValid } from '../../ui/forms';
import { DataTable } from '../../ui/table';
import { SCOPE_GROUPS } from './scopes';
import { buttonClass } from '../../ui/button';
import { EmptyState, PageHeader } from '../../ui/layout';

type ApiKey = RouterOutputs['apiKeys']['list']['apiKeys'][number];

// The server's own fields; the expiry is a day here, sent as the end of that day in the seller's time zone.
const ZKeyForm = ZCreateApiKeyInput.pick({ name: true, mode: true, scopes: true, storeIds: true }).extend({
  expiresOn: z.union([z.iso.date(), z.literal('')]).optional(),
});
type KeyForm = z.input<typeof ZKeyForm>;

function endOfDay(day: string): string {
  return new Date(`${day}T23:59:59.999`).toISOString();
}

function keyState(key: ApiKey, now: number): string {
  if (key.revokedAt) return `Revoked ${formatDate(key.revokedAt)}`;
  if (key.expiresAt && Date.parse(key.expiresAt) <= now) return 'Expired';
  return 'Active';
}

function CreateKeyForm({ onCreated, close }: { onCreated: (key: string) => void; close: () => void }) {
  const storeId = useStoreId();
  const mode = useMode();
  const { stores } = useStore();
  const queryClient = useQueryClient();
  const form = useForm<KeyForm>({
    resolver: zodResolver(ZKeyForm),
    defaultValues: { name: '', mode, scopes: [], storeIds: [storeId], expiresOn: '' },
  });
  const create = useMutation(
    trpc.apiKeys.create.mutationOptions({
      onSuccess: async (result) => {
        await queryClient.invalidateQueries({ queryKey: trpc.apiKeys.list.queryKey() });
        close();
        onCreated(result.key);
      },
    }),
  );
  const errors = form.formState.errors;
  return (
    <form
      noValidate
      onSubmit={onValid(form, (values) =>
        create.mutate({
          name: values.name,
          mode: values.mode,
          scopes: values.scopes,
          storeIds: values.storeIds,
          ...(values.expiresOn ? { expiresAt: endOfDay(values.expiresOn) } : {}),
        }),
      )}
    >
      <TextInput label="Name" registration={form.register('name')} error={errors.name} />
      <fieldset className="field" aria-describedby="key-mode-hint">
        <legend>Mode</legend>
        <label className="check">
          <input type="radio" value="live" {...form.register('mode')} /> Live
        </label>
        <label className="check">
          <input type="radio" value="test" {...form.register('mode')} /> Test
        </label>
        <span id="key-mode-hint" className="muted">
          A live key (sk_live_…) reads and writes your live store; a test key (sk_test_…) only test data.
        </span>
      </fieldset>
      <fieldset className="field" aria-describedby={errors.scopes ? 'key-scopes-error' : undefined}>
        <legend>Scopes</legend>
        {SCOPE_GROUPS.map((group) => (
          <fieldset key={group.label} className="scope-group">
            <legend>{group.label}</legend>
            {group.scopes.map((scope) => (
              <label key={scope.value} className="check">
                <input type="checkbox" value={scope.value} {...form.register('scopes')} /> <code>{scope.value}</code>{' '}
                <span className="muted">{scope.description}</span>
              </label>
            ))}
          </fieldset>
        ))}
        {errors.scopes && (
          <span id="key-scopes-error" className="field-error">
            Choose at least one scope.
          </span>
        )}
      </fieldset>
      <fieldset className="field" aria-describedby={errors.storeIds ? 'key-stores-error' : undefined}>
        <legend>Stores</legend>
        {(stores.data?.stores ?? []).map((store) => (
          <label key={store.id} className="check">
            <input type="checkbox" value={store.id} {...form.register('storeIds')} /> {store.name}
          </label>
        ))}
        {errors.storeIds && (
          <span id="key-stores-error" className="field-error">
            Choose at least one store.
          </span>
        )}
      </fieldset>
      <TextInput
        label="Expires on"
        type="date"
        hint="Optional. The key stops working at the end of this day."
        registration={form.register('expiresOn')}
        error={errors.expiresOn}
      />
      <ErrorNote error={create.error} />
      <div className="actions">
        <button type="submit" className={buttonClass('primary')} disabled={create.isPending}>
          Create key
        </button>
        <button type="button" className={buttonClass('secondary')} onClick={close}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function RevokeKey({ apiKey }: { apiKey: ApiKey }) {
  const queryClient = useQueryClient();
  const revoke = useMutation(
    trpc.apiKeys.revoke.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries({ queryKey: trpc.apiKeys.list.queryKey() }),
    }),
  );
  return (
    <ConfirmAction
      verb="Revoke"
      title={`Revoke the key "${apiKey.name}"?`}
      triggerLabel={`Revoke ${apiKey.name}`}
      onConfirm={() => revoke.mutateAsync({ keyId: apiKey.id })}
      pending={revoke.isPending}
      error={revoke.error}
    >
      <p>Requests with this key are refused from the next one on. This cannot be undone.</p>
    </ConfirmAction>
  );
}

export function ApiKeys() {
  const keys = useQuery(trpc.apiKeys.list.queryOptions());
  const { stores } = useStore();
  const [secret, setSecret] = useState<string | null>(null);
  const storeName = (id: string) => stores.data?.stores.find((s) => s.id === id)?.name ?? id;
  const now = Date.now();
  return (
    <>
      <PageHeader
        title="API keys"
        description="Keys for the merchant API. Each belongs to you and reaches only the stores and scopes it lists, within your permissions in each store."
        actions={
          <FormDialog trigger="Create API key" title="Create an API key" triggerClass={buttonClass('primary')}>
            {(close) => <CreateKeyForm close={close} onCreated={setSecret} />}
          </FormDialog>
        }
      />
      {secret && <SecretDialog title="Your new API key" secret={secret} onClose={() => setSecret(null)} />}
      <Loaded query={keys} label="Loading API keys…">
        {({ apiKeys }) => (
          <DataTable
            caption="API keys"
            rows={[...apiKeys].reverse()}
            rowKey={(key) => key.id}
            empty={
              <EmptyState title="No API keys yet.">
                Use Create API key for a key your code or theme sends as a Bearer token; it is shown once.
              </EmptyState>
            }
            columns={[
              { header: 'Name', cell: (key) => key.name },
              { header: 'Key', cell: (key) => <code>{`${key.prefix}…`}</code> },
              { header: 'Mode', cell: (key) => key.mode },
              {
                header: 'Scopes',
                cell: (key) => (
                  <ul className="plain">
                    {key.scopes.map((scope) => (
                      <li key={scope}>
                        <code>{scope}</code>
                      </li>
                    ))}
                  </ul>
                ),
              },
              { header: 'Stores', cell: (key) => key.storeIds.map(storeName).join(', ') },
              { header: 'Last used', cell: (key) => (key.lastUsedAt ? formatDateTime(key.lastUsedAt) : 'Never') },
              { header: 'Expires', cell: (key) => (key.expiresAt ? formatDateTime(key.expiresAt) : 'Never') },
              { header: 'Status', cell: (key) => keyState(key, now) },
              { header: 'Actions', cell: (key) => (key.revokedAt ? null : <RevokeKey apiKey={key} />) },
            ]}
          />
        )}
      </Loaded>
    </>
  );
}
