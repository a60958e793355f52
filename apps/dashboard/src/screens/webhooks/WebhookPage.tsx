/**
 * One webhook endpoint: its settings (edit, enable, rotate the secret, send a test, delete), the
 * last 24 hours' successes and failures, a replay of a time range, and its delivery log (status
 * filter and cursor in the URL, every attempt's request and response as the API keeps them, `Retry`).
 */
import { zodResolver } from '@hookform/resolvers/zod';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { z } from 'zod';
import { trpc, type RouterOutputs } from '../../api';
import { useStoreId } from '../../store';
import { ConfirmAction, FormDialog, SecretDialog } from '../../ui/dialogs';
import { ErrorNote, Loaded } from '../../ui/feedback';
import { TextInput } from '../../ui/fields';
import { formatDateTime } from '../../ui/format';
import { onValid } from '../../ui/forms';
import { KeysetPager } from '../../ui/pager';
import { DataTable } from '../../ui/table';
import { DELIVERY_STATUSES, type DeliveriesSearch } from './search';
import { WebhookForm } from './WebhookForm';
import { buttonClass } from '../../ui/button';
import { StatusBadge } from '../../ui/badge';

const webhookRoute = getRouteApi('/app/stores/$storeId/webhooks/$webhookId');

type Webhook = RouterOutputs['webhooks']['get'];
type Delivery = RouterOutputs['webhooks']['deliveries']['deliveries'][number];
type Stats = RouterOutputs['webhooks']['dashboardStats'];

/** Refetch what a change to this endpoint or its log may have changed. */
function useRefresh(storeId: string, webhookId: string) {
  const queryClient = useQueryClient();
  return () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: trpc.webhooks.get.queryKey({ storeId, webhookId }) }),
      queryClient.invalidateQueries({ queryKey: trpc.webhooks.list.queryKey({ storeId }) }),
      queryClient.invalidateQueries({ queryKey: trpc.webhooks.deliveries.queryKey() }),
      queryClient.invalidateQueries({ queryKey: trpc.webhooks.dashboardStats.queryKey() }),
    ]);
}

function DisabledNote({ hook }: { hook: Webhook }) {
  const refresh = useRefresh(hook.storeId, hook.id);
  const enable = useMutation(trpc.webhooks.update.mutationOptions({ onSuccess: refresh }));
  return (
    <section className="notice" aria-labelledby="disabled-title">
      <h2 id="disabled-title">This endpoint is disabled</h2>
      <p>
        {hook.disabledReason
          ? `svc disabled it on ${formatDateTime(hook.disabledAt)}: ${hook.disabledReason}`
          : `A member of the store disabled it on ${formatDateTime(hook.disabledAt)}.`}{' '}
        No events are sent to it until it is enabled again; the failure streak then starts from zero.
      </p>
      <button
        type="button"
        className={buttonClass('primary')}
        disabled={enable.isPending}
        onClick={() => enable.mutate({ storeId: hook.storeId, webhookId: hook.id, enabled: true })}
      >
        Enable
      </button>
      <ErrorNote error={enable.error} />
    </section>
  );
}

function EndpointActions({ hook }: { hook: Webhook }) {
  const ref = { storeId: hook.storeId, webhookId: hook.id };
  const refresh = useRefresh(hook.storeId, hook.id);
  const navigate = useNavigate();
  const [secret, setSecret] = useState<string | null>(null);
  const update = useMutation(trpc.webhooks.update.mutationOptions({ onSuccess: refresh }));
  const rotate = useMutation(
    trpc.webhooks.rotate.mutationOptions({
      onSuccess: async (rotated) => {
        await refresh();
        setSecret(rotated.secret);
      },
    }),
  );
  const test = useMutation(trpc.webhooks.test.mutationOptions({ onSettled: refresh }));
  const remove = useMutation(
    trpc.webhooks.delete.mutationOptions({
      onSuccess: () => navigate({ to: '/stores/$storeId/webhooks', params: { storeId: hook.storeId }, replace: true }),
    }),
  );
  const tested = test.data?.delivery;
  return (
    <>
      <div className="actions">
        <FormDialog trigger="Edit" title="Edit the endpoint">
          {(close) => (
            <WebhookForm
              initial={{ name: hook.name, url: hook.url, events: hook.events, enabled: hook.enabled }}
              submitLabel="Save"
              pending={update.isPending}
              error={update.error}
              close={close}
              onSubmit={(values) => update.mutate({ ...ref, ...values }, { onSuccess: close })}
            />
          )}
        </FormDialog>
        {hook.enabled && (
          <button
            type="button"
            className={buttonClass('secondary')}
            disabled={test.isPending}
            onClick={() => test.mutate(ref)}
          >
            Send test
          </button>
        )}
        <ConfirmAction
          verb="Rotate"
          triggerLabel="Rotate secret"
          title="Rotate the signing secret?"
          destructive={false}
          onConfirm={() => rotate.mutateAsync(ref)}
          pending={rotate.isPending}
          error={rotate.error}
        >
          <p>Signatures made with the current secret stop verifying at once. The new secret is shown once.</p>
        </ConfirmAction>
        <ConfirmAction
          verb="Delete"
          title={`Delete the endpoint "${hook.name}"?`}
          onConfirm={() => remove.mutateAsync(ref)}
          pending={remove.isPending}
          error={remove.error}
        >
          <p>Its delivery log goes with it. Events are no longer sent to {hook.url}.</p>
        </ConfirmAction>
      </div>
      <ErrorNote error={test.error} />
      <p role="status">
        {tested &&
          (tested.status === 'success'
            ? `Test delivered: ${tested.responseCode ?? ''} in ${tested.durationMs ?? 0} ms.`
            : `Test failed: ${tested.responseCode ? `HTTP ${tested.responseCode}` : (tested.errorMessage ?? 'no answer')}.`)}
      </p>
      {secret && <SecretDialog title="New signing secret" secret={secret} onClose={() => setSecret(null)} />}
    </>
  );
}

/** 24 bars per outcome; the figures are also in the chart's accessible name and in each bar's title. */
function DeliveryChart({ stats }: { stats: Stats }) {
  const totals = stats.hours.reduce(
    (sum, hour) => ({ success: sum.success + hour.success, failed: sum.failed + hour.failed }),
    { success: 0, failed: 0 },
  );
  const max = Math.max(1, ...stats.hours.map((hour) => hour.success + hour.failed));
  const height = 80;
  const barWidth = 12;
  const hourLabel = new Intl.DateTimeFormat(undefined, { hour: 'numeric' });
  return (
    <figure className="delivery-chart">
      <svg
        role="img"
        aria-label={`Last 24 hours: ${totals.success} successful and ${totals.failed} failed attempts`}
        viewBox={`0 0 ${stats.hours.length * (barWidth + 2)} ${height}`}
        width="100%"
        height={height}
        preserveAspectRatio="none"
      >
        {stats.hours.map((hour, index) => {
          const ok = (hour.success / max) * height;
          const bad = (hour.failed / max) * height;
          const x = index * (barWidth + 2);
          return (
            <g key={hour.hour}>
              <title>{`${hourLabel.format(new Date(hour.hour))}: ${hour.success} successful, ${hour.failed} failed`}</title>
              <rect className="bar-ok" x={x} y={height - ok} width={barWidth} height={ok} />
              <rect className="bar-failed" x={x} y={height - ok - bad} width={barWidth} height={bad} />
            </g>
          );
        })}
      </svg>
      <figcaption className="muted">
        Last 24 hours: <span className="ok-text">{totals.success} successful</span>,{' '}
        <span className="failed-text">{totals.failed} failed</span>.
      </figcaption>
    </figure>
  );
}

const ZReplayForm = z
  .object({ from: z.string().min(1, 'Required.'), to: z.string().min(1, 'Required.'), onlyFailed: z.boolean() })
  .refine((value) => !value.from || !value.to || Date.parse(value.from) <= Date.parse(value.to), {
    message: '`From` is after `To`.',
    path: ['from'],
  });

function ReplayRange({ hook }: { hook: Webhook }) {
  const refresh = useRefresh(hook.storeId, hook.id);
  const form = useForm<z.infer<typeof ZReplayForm>>({
    resolver: zodResolver(ZReplayForm),
    defaultValues: { from: '', to: '', onlyFailed: false },
  });
  const replay = useMutation(trpc.webhooks.replay.mutationOptions({ onSuccess: refresh }));
  return (
    <form
      noValidate
      className="toolbar"
      aria-label="Replay a time range"
      onSubmit={onValid(form, (values) =>
        replay.mutate({
          storeId: hook.storeId,
          webhookId: hook.id,
          from: new Date(values.from).toISOString(),
          to: new Date(values.to).toISOString(),
          ...(values.onlyFailed ? { status: 'failed' as const } : {}),
        }),
      )}
    >
      <TextInput
        label="From"
        type="datetime-local"
        step="1"
        registration={form.register('from')}
        error={form.formState.errors.from}
      />
      <TextInput
        label="To"
        type="datetime-local"
        step="1"
        registration={form.register('to')}
        error={form.formState.errors.to}
      />
      <label className="check field">
        <input type="checkbox" {...form.register('onlyFailed')} /> Only events whose last attempt failed
      </label>
      <button type="submit" className={buttonClass('secondary')} disabled={replay.isPending || !hook.enabled}>
        Replay
      </button>
      <ErrorNote error={replay.error} />
      <p role="status" className="muted">
        {replay.data ? `Queued ${replay.data.queued} ${replay.data.queued === 1 ? 'event' : 'events'} again.` : ''}
      </p>
    </form>
  );
}

function RetryDelivery({ hook, delivery }: { hook: Webhook; delivery: Delivery }) {
  const refresh = useRefresh(hook.storeId, hook.id);
  const retry = useMutation(trpc.webhooks.retry.mutationOptions({ onSuccess: refresh }));
  if (!hook.enabled || delivery.status === 'queued' || delivery.status === 'pending') return null;
  return (
    <>
      <button
        type="button"
        className={buttonClass('secondary')}
        aria-label={`Retry ${delivery.event} attempt ${delivery.attempt}`}
        disabled={retry.isPending}
        onClick={() => retry.mutate({ storeId: hook.storeId, webhookId: hook.id, deliveryId: delivery.id })}
      >
        Retry
      </button>
      <ErrorNote error={retry.error} />
      {retry.data && <span role="status">Queued as attempt {retry.data.delivery.attempt}.</span>}
    </>
  );
}

function AttemptDetails({ hook, delivery }: { hook: Webhook; delivery: Delivery }) {
  return (
    <details>
      <summary>Details</summary>
      <h3 className="small-heading">Request</h3>
      <p>
        POST <code>{hook.url}</code>
      </p>
      {delivery.requestHeaders ? (
        <pre
          className="code-block"
          tabIndex={0}
          role="region"
          aria-label={`Request headers of ${delivery.event} attempt ${delivery.attempt}`}
        >
          {Object.entries(delivery.requestHeaders)
            .map(([name, value]) => `${name}: ${value}`)
            .join('\n')}
        </pre>
      ) : (
        <p className="muted">
          {delivery.status === 'queued' || delivery.status === 'pending'
            ? 'Not sent yet: the headers, signatures included, are kept once it is.'
            : 'No headers kept: nothing was sent, or the attempt was logged before svc kept them.'}
        </p>
      )}
      <p>
        Body: the event{' '}
        <Link to="/stores/$storeId/events/$eventId" params={{ storeId: hook.storeId, eventId: delivery.eventId }}>
          {delivery.eventId}
        </Link>
        , byte for byte.
      </p>
      <h3 className="small-heading">Response</h3>
      <dl className="facts">
        <dt>Status</dt>
        <dd>{delivery.responseCode ?? 'No answer'}</dd>
        <dt>Time</dt>
        <dd>{delivery.durationMs === null ? '—' : `${delivery.durationMs} ms`}</dd>
        {delivery.errorMessage && (
          <>
            <dt>Error</dt>
            <dd>{delivery.errorMessage}</dd>
          </>
        )}
      </dl>
      <pre className="code-block" tabIndex={0}>
        {delivery.responseBodyPreview ?? '(no body)'}
      </pre>
    </details>
  );
}

/** The log's page the URL names: asked for beside the endpoint itself, so both go in one batched request. */
function useDeliveries(storeId: string, webhookId: string) {
  const search = webhookRoute.useSearch();
  return useQuery(
    trpc.webhooks.deliveries.queryOptions({
      storeId,
      webhookId,
      limit: 25,
      ...(search.status ? { status: search.status } : {}),
      ...(search.cursor ? { cursor: search.cursor } : {}),
    }),
  );
}

function DeliveryLog({ hook, deliveries }: { hook: Webhook; deliveries: ReturnType<typeof useDeliveries> }) {
  const refresh = useRefresh(hook.storeId, hook.id);
  const search = webhookRoute.useSearch();
  const navigate = webhookRoute.useNavigate();
  return (
    <>
      <div className="toolbar">
        <div className="field">
          <label htmlFor="delivery-status">Status</label>
          <select
            id="delivery-status"
            value={search.status ?? ''}
            onChange={(event) =>
              void navigate({
                search: { status: (event.target.value || undefined) as DeliveriesSearch['status'] },
              })
            }
          >
            <option value="">Any status</option>
            {DELIVERY_STATUSES.map((status) => (
              <option key={status} value={status}>
                {status}
              </option>
            ))}
          </select>
        </div>
        <button type="button" className={buttonClass('secondary')} onClick={() => void refresh()}>
          Refresh
        </button>
      </div>
      <Loaded query={deliveries} label="Loading deliveries…">
        {(page) => (
          <>
            <DataTable
              caption="Deliveries"
              rows={page.deliveries}
              rowKey={(delivery) => delivery.id}
              empty="No deliveries."
              columns={[
                { header: 'Time', cell: (delivery) => formatDateTime(delivery.createdAt) },
                { header: 'Event', cell: (delivery) => <code>{delivery.event}</code> },
                { header: 'Attempt', numeric: true, cell: (delivery) => delivery.attempt },
                { header: 'Status', cell: (delivery) => <StatusBadge kind="delivery" status={delivery.status} /> },
                { header: 'Response', cell: (delivery) => delivery.responseCode ?? '—' },
                {
                  header: 'Duration',
                  numeric: true,
                  cell: (delivery) => (delivery.durationMs === null ? '—' : `${delivery.durationMs} ms`),
                },
                { header: 'Details', cell: (delivery) => <AttemptDetails hook={hook} delivery={delivery} /> },
                { header: 'Actions', cell: (delivery) => <RetryDelivery hook={hook} delivery={delivery} /> },
              ]}
            />
            <KeysetPager
              from="/stores/$storeId/webhooks/$webhookId"
              cursor={search.cursor}
              nextCursor={page.nextCursor}
            />
          </>
        )}
      </Loaded>
    </>
  );
}

export function WebhookPage() {
  const storeId = useStoreId();
  const { webhookId } = webhookRoute.useParams();
  const hook = useQuery(trpc.webhooks.get.queryOptions({ storeId, webhookId }));
  const stats = useQuery(trpc.webhooks.dashboardStats.queryOptions({ storeId, webhookId }));
  const deliveries = useDeliveries(storeId, webhookId);
  return (
    <>
      <p>
        <Link to="/stores/$storeId/webhooks" params={{ storeId }}>
          Webhooks
        </Link>
      </p>
      <Loaded query={hook} label="Loading the endpoint…">
        {(data) => (
          <>
            <h1>{data.name}</h1>
            {!data.enabled && <DisabledNote hook={data} />}
            <dl className="facts">
              <dt>URL</dt>
              <dd>
                <code>{data.url}</code>
              </dd>
              <dt>Events</dt>
              <dd>{data.events.join(', ')}</dd>
              <dt>Status</dt>
              <dd>{data.enabled ? 'Enabled' : 'Disabled'}</dd>
              <dt>Failures in a row</dt>
              <dd>{data.failureCount}</dd>
              <dt>Last delivered</dt>
              <dd>{data.lastDeliveredAt ? formatDateTime(data.lastDeliveredAt) : 'Never'}</dd>
              <dt>Signing secret</dt>
              <dd>
                <code>{data.secretPrefix}…</code>
              </dd>
            </dl>
            <EndpointActions hook={data} />
            <h2>Last 24 hours</h2>
            <Loaded query={stats} label="Loading the chart…">
              {(figures) => <DeliveryChart stats={figures} />}
            </Loaded>
            <h2>Replay</h2>
            <p className="muted">Send every subscribed event of a time range again, with the same event ids.</p>
            <ReplayRange hook={data} />
            <h2>Delivery log</h2>
            <DeliveryLog hook={data} deliveries={deliveries} />
          </>
        )}
      </Loaded>
    </>
  );
}
