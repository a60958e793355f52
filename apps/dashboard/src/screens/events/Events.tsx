/** The store's events (kept 30 days), newest first, with type and date filters held in the URL. */
import { WEBHOOK_EVENTS, WEBHOOK_TEST_EVENT } from '@svc/schemas';
import { useQuery } from '@tanstack/react-query';
import { getRouteApi, Link } from '@tanstack/react-router';
import { trpc } from '../../api';
import { useStoreId } from '../../store';
import { Loaded } from '../../ui/feedback';
import { formatDateTime } from '../../ui/format';
import { KeysetPager } from '../../ui/pager';
import { DataTable } from '../../ui/table';
import type { EventsSearch } from './search';
import { PageHeader } from '../../ui/layout';

const eventsRoute = getRouteApi('/app/stores/$storeId/events');

const EVENT_TYPES = [...WEBHOOK_EVENTS, WEBHOOK_TEST_EVENT] as const;
type EventType = (typeof EVENT_TYPES)[number];
const isEventType = (value: string | undefined): value is EventType =>
  value !== undefined && (EVENT_TYPES as readonly string[]).includes(value);

/** A day of the date inputs (the seller's time zone) as the API's instant: its start, or its end. */
function dayBound(day: string | undefined, end: boolean): string | undefined {
  if (!day || !/^\d{4}-\d{2}-\d{2}$/.test(day)) return undefined;
  const date = new Date(`${day}T${end ? '23:59:59.999' : '00:00:00'}`);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** What an event is about, in a few words: its order, product or license. */
function subject(data: unknown): string {
  const value = data as {
    order?: { orderId?: string; id?: string };
    product?: { name?: string };
    license?: { masked?: string };
    webhookId?: string;
  };
  if (value.order) return value.order.orderId ?? value.order.id ?? '';
  if (value.product) return value.product.name ?? '';
  if (value.license) return `License ${value.license.masked ?? ''}`;
  if (value.webhookId) return 'Test ping';
  return '';
}

export function Events() {
  const storeId = useStoreId();
  const search = eventsRoute.useSearch();
  const navigate = eventsRoute.useNavigate();
  const from = dayBound(search.from, false);
  const to = dayBound(search.to, true);
  const events = useQuery(
    trpc.events.list.queryOptions({
      storeId,
      limit: 50,
      ...(isEventType(search.type) ? { type: search.type } : {}),
      ...(from ? { from } : {}),
      ...(to ? { to } : {}),
      ...(search.cursor ? { cursor: search.cursor } : {}),
    }),
  );
  const filter = (next: Partial<EventsSearch>) =>
    void navigate({ search: (prev) => ({ ...prev, ...next, cursor: undefined }) });
  return (
    <>
      <PageHeader title="Events" description="What happened in the store, as your webhooks receive it." />
      <p className="muted">Everything your webhooks receive, as they receive it. Kept 30 days.</p>
      <div className="toolbar">
        <div className="field">
          <label htmlFor="event-type">Type</label>
          <select
            id="event-type"
            value={search.type ?? ''}
            onChange={(event) => filter({ type: event.target.value || undefined })}
          >
            <option value="">All types</option>
            {EVENT_TYPES.map((type) => (
              <option key={type} value={type}>
                {type}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="event-from">From</label>
          <input
            id="event-from"
            type="date"
            value={search.from ?? ''}
            onChange={(event) => filter({ from: event.target.value || undefined })}
          />
        </div>
        <div className="field">
          <label htmlFor="event-to">To</label>
          <input
            id="event-to"
            type="date"
            value={search.to ?? ''}
            onChange={(event) => filter({ to: event.target.value || undefined })}
          />
        </div>
      </div>
      <Loaded query={events} label="Loading events…">
        {(page) => (
          <>
            <DataTable
              caption="Events"
              rows={page.events}
              rowKey={(event) => event.id}
              empty="No events match."
              columns={[
                { header: 'Time', cell: (event) => formatDateTime(event.createdAt) },
                { header: 'Type', cell: (event) => <code>{event.event}</code> },
                { header: 'About', cell: (event) => subject(event.data) },
                {
                  header: 'Event id',
                  cell: (event) => (
                    <Link to="/stores/$storeId/events/$eventId" params={{ storeId, eventId: event.id }}>
                      {event.id}
                    </Link>
                  ),
                },
              ]}
            />
            <KeysetPager from="/stores/$storeId/events" cursor={search.cursor} nextCursor={page.nextCursor} />
          </>
        )}
      </Loaded>
    </>
  );
}
