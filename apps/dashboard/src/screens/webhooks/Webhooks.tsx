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
import { buttonClass } from '../../ui/button';
import { EmptyState, PageHeader } from '../../ui/layout';

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
      <PageHeader
        title="Webhooks"
        description="svc POSTs each event your endpoints subscribe to, signed with the endpoint's secret, and retries failures."
        actions={
          <FormDialog trigger="Add endpoint" title="Add a webhook endpoint" triggerClass={buttonClass('primary')}>
            {(close) => <AddEndpoint close={close} onSecret={setSecret} />}
          </FormDialog>
        }
      />
      {secret && <SecretDialog title="Signing secret" secret={secret} onClose={() => setSecret(null)} />}
      <Loaded query={webhooks} label="Loading webhooks…">
        {({ webhooks: list }) => (
          <DataTable
            caption="Webhook endpoints"
            rows={list}
            rowKey={(hook) => hook.id}
            empty={
              <EmptyState title="No endpoints yet.">
                Use Add endpoint to give svc a URL of yours; it receives the events you choose, such as order.paid.
              </EmptyState>
            }
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
