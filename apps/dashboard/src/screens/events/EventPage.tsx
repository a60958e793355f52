/**
 * One event: its JSON exactly as its deliveries carry it (`Copy` copies those bytes), the attempts
 * it made to the store's endpoints, and `Resend` to one endpoint.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { getRouteApi, Link } from '@tanstack/react-router';
import { useState } from 'react';
import { trpc } from '../../api';
import { useStoreId } from '../../store';
import { ErrorNote, Loaded } from '../../ui/feedback';
import { formatDateTime } from '../../ui/format';
import { DataTable } from '../../ui/table';
import { buttonClass } from '../../ui/button';

const eventRoute = getRouteApi('/app/stores/$storeId/events/$eventId');

function CopyJson({ text }: { text: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <>
      <button
        type="button"
        className={buttonClass('secondary')}
        onClick={() => void navigator.clipboard?.writeText(text).then(() => setCopied(true))}
      >
        Copy
      </button>
      <span role="status" className="muted">
        {copied ? 'Copied.' : ''}
      </span>
    </>
  );
}

function Resend({ storeId, eventId, type }: { storeId: string; eventId: string; type: string }) {
  const queryClient = useQueryClient();
  const webhooks = useQuery(trpc.webhooks.list.queryOptions({ storeId }));
  const [webhookId, setWebhookId] = useState('');
  const resend = useMutation(
    trpc.webhooks.dashboardResend.mutationOptions({
      onSuccess: () =>
        queryClient.invalidateQueries({
          queryKey: trpc.webhooks.dashboardEventDeliveries.queryKey({ storeId, eventId }),
        }),
    }),
  );
  const enabled = (webhooks.data?.webhooks ?? []).filter((hook) => hook.enabled);
  // Endpoints subscribed to this type first; any enabled endpoint may be sent it.
  const sorted = [
    ...enabled.filter((hook) => (hook.events as string[]).includes(type)),
    ...enabled.filter((hook) => !(hook.events as string[]).includes(type)),
  ];
  const chosen = webhookId || sorted[0]?.id || '';
  if (webhooks.data && sorted.length === 0) return <p className="muted">No enabled endpoint to send it to.</p>;
  return (
    <form
      className="toolbar"
      aria-label="Resend"
      onSubmit={(event) => {
        event.preventDefault();
        if (chosen) resend.mutate({ storeId, webhookId: chosen, eventId });
      }}
    >
      <div className="field">
        <label htmlFor="resend-endpoint">Endpoint</label>
        <select id="resend-endpoint" value={chosen} onChange={(event) => setWebhookId(event.target.value)}>
          {sorted.map((hook) => (
            <option key={hook.id} value={hook.id}>
              {hook.name} ({hook.url})
            </option>
          ))}
        </select>
      </div>
      <button type="submit" className={buttonClass('primary')} disabled={resend.isPending || !chosen}>
        Resend
      </button>
      <ErrorNote error={resend.error} />
      <p role="status" className="muted">
        {resend.data ? `Queued as attempt ${resend.data.delivery.attempt}.` : ''}
      </p>
    </form>
  );
}

export function EventPage() {
  const storeId = useStoreId();
  const { eventId } = eventRoute.useParams();
  const event = useQuery(trpc.events.get.queryOptions({ storeId, eventId }));
  const deliveries = useQuery(trpc.webhooks.dashboardEventDeliveries.queryOptions({ storeId, eventId }));
  const webhooks = useQuery(trpc.webhooks.list.queryOptions({ storeId }));
  const endpoint = (id: string) => webhooks.data?.webhooks.find((hook) => hook.id === id);
  return (
    <>
      <p>
        <Link to="/stores/$storeId/events" params={{ storeId }} search={{}}>
          Events
        </Link>
      </p>
      <Loaded query={event} label="Loading the event…">
        {(data) => (
          <>
            <h1>
              Event <code>{data.event}</code>
            </h1>
            <dl className="facts">
              <dt>Id</dt>
              <dd>
                <code>{data.id}</code>
              </dd>
              <dt>Created</dt>
              <dd>{formatDateTime(data.createdAt)}</dd>
            </dl>
            <h2>JSON</h2>
            <p className="muted">Exactly the body its deliveries carry; `Copy` copies it as sent.</p>
            <div className="actions">
              <CopyJson text={JSON.stringify(data)} />
            </div>
            <pre className="code-block" tabIndex={0} role="region" aria-label="Event JSON">
              {JSON.stringify(data, null, 2)}
            </pre>
            <h2>Deliveries</h2>
            <Loaded query={deliveries} label="Loading deliveries…">
              {({ deliveries: list }) => (
                <DataTable
                  caption="Deliveries of this event"
                  rows={list}
                  rowKey={(delivery) => delivery.id}
                  empty="No endpoint received this event."
                  columns={[
                    { header: 'Time', cell: (delivery) => formatDateTime(delivery.createdAt) },
                    {
                      header: 'Endpoint',
                      cell: (delivery) => (
                        <Link
                          to="/stores/$storeId/webhooks/$webhookId"
                          params={{ storeId, webhookId: delivery.webhookId }}
                          search={{}}
                        >
                          {endpoint(delivery.webhookId)?.name ?? delivery.webhookId}
                        </Link>
                      ),
                    },
                    { header: 'Attempt', numeric: true, cell: (delivery) => delivery.attempt },
                    { header: 'Status', cell: (delivery) => delivery.status },
                    { header: 'Response', cell: (delivery) => delivery.responseCode ?? delivery.errorMessage ?? '—' },
                  ]}
                />
              )}
            </Loaded>
            <h2>Resend</h2>
            <Resend storeId={storeId} eventId={data.id} type={data.event} />
          </>
        )}
      </Loaded>
    </>
  );
}
