/** The store's webhook endpoints: the list, and adding one (its signing secret shown once). */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { trpc } from '../../api';
import { useStoreId } from '../../store';
import { FormDialog, SecretDialog } from '../../ui/dialogs';
import { Loaded } from '../../ui/feedback';
import { formatDateTime } from '../../ui/format';
import { DataTable } from '../../ui/table';
import { WebhookForm } from './WebhookForm';

function AddEndpoint({ close, onSecret }: { close: () => void; onSecret: (secret: string) => void }) {
  const storeId = useStoreId();
  const queryClient = useQueryClient();
  const create = useMutation(
    trpc.webhooks.create.mutationOptions({
      onSuccess: async (created) => {
        await queryClient.invalidateQueries({ queryKey: trpc.webhooks.list.queryKey({ storeId }) });
        close();
        onSecret(created.secret);
      },
    }),
  );
  return (
    <WebhookForm
      submitLabel="Add endpoint"
      pending={create.isPending}
      error={create.error}
      close={close}
      onSubmit={(values) => create.mutate({ storeId, name: values.name, url: values.url, events: values.events })}
    />
  );
}

export function Webhooks() {
  const storeId = useStoreId();
  const webhooks = useQuery(trpc.webhooks.list.queryOptions({ storeId }));
  const [secret, setSecret] = useState<string | null>(null);
  return (
    <>
      <h1>Webhooks</h1>
      <p className="muted">
        svc POSTs each event your endpoints subscribe to, signed with the endpoint's secret, and retries failures.
      </p>
      <div className="actions">
        <FormDialog trigger="Add endpoint" title="Add a webhook endpoint" triggerClass="button primary">
          {(close) => <AddEndpoint close={close} onSecret={setSecret} />}
        </FormDialog>
      </div>
      {secret && <SecretDialog title="Signing secret" secret={secret} onClose={() => setSecret(null)} />}
      <Loaded query={webhooks} label="Loading webhooks…">
        {({ webhooks: list }) => (
          <DataTable
            caption="Webhook endpoints"
            rows={list}
            rowKey={(hook) => hook.id}
            empty="No endpoints yet."
            columns={[
              {
                header: 'Name',
                cell: (hook) => (
                  <Link to="/stores/$storeId/webhooks/$webhookId" params={{ storeId, webhookId: hook.id }} search={{}}>
                    {hook.name}
                  </Link>
                ),
              },
              { header: 'URL', cell: (hook) => <code>{hook.url}</code> },
              { header: 'Events', cell: (hook) => hook.events.join(', ') },
              {
                header: 'Status',
                cell: (hook) =>
                  hook.enabled
                    ? hook.failureCount > 0
                      ? `Enabled, ${hook.failureCount} failed in a row`
                      : 'Enabled'
                    : `Disabled ${formatDateTime(hook.disabledAt)}`,
              },
              {
                header: 'Last delivered',
                cell: (hook) => (hook.lastDeliveredAt ? formatDateTime(hook.lastDeliveredAt) : 'Never'),
              },
            ]}
          />
        )}
      </Loaded>
    </>
  );
}
