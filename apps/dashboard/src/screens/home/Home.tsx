/**
 * Home: a new store's setup checklist (SetupChecklist, gone once done), today's and the last 30
 * days' revenue and order count, and a bar chart of the 30 days
 * (orders.dashboardStats: one SQL aggregate on the server; days are UTC days). The chart is an
 * inline SVG drawn here (no chart library): its figures are also in a visually hidden table, so a
 * screen reader gets the numbers, and its colour follows the scheme (currentColor = --accent).
 */
import { useQuery } from '@tanstack/react-query';
import { trpc, type RouterOutputs } from '../../api';
import { useStore, useStoreId } from '../../store';
import { Loaded } from '../../ui/feedback';
import { Card, PageHeader, Stack } from '../../ui/layout';
import { ViewStoreLink } from '../../ui/view-store';
import { SetupChecklist } from './SetupChecklist';
import { formatMoney } from '../../ui/format';

type Stats = RouterOutputs['orders']['dashboardStats'];
type Day = Stats['daily'][number];

// The API's days are UTC dates (YYYY-MM-DD): shown as such, whatever the browser's zone.
const dayFormat = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });
const formatDay = (date: string) => dayFormat.format(new Date(`${date}T00:00:00Z`));

function orderCount(count: number): string {
  return count === 1 ? '1 order' : `${count} orders`;
}

export function Home() {
  const { store, can } = useStore();
  return (
    <>
      <PageHeader title="Home" description={store ? `How ${store.name} is selling.` : undefined} />
      {store && <ViewStoreLink subdomain={store.subdomain} />}
      {store && !can('viewOrders') ? (
        <p>Sales figures need the View orders permission. Use the menu to reach what you may manage.</p>
      ) : (
        <Stack>
          {store && <SetupChecklist subdomain={store.subdomain} />}
          <Figures />
        </Stack>
      )}
    </>
  );
}

function Figures() {
  const storeId = useStoreId();
  const stats = useQuery(trpc.orders.dashboardStats.queryOptions({ storeId }));
  return (
    <Loaded query={stats} label="Loading figures…" lines={6}>
      {(data) => (
        <Stack>
          <div className="cards mb-0">
            <FigureCard
              title="Today"
              note="since midnight UTC"
              revenue={data.today.revenue}
              orders={data.today.orders}
              currency={data.currency}
            />
            <FigureCard
              title="Last 30 days"
              revenue={data.last30Days.revenue}
              orders={data.last30Days.orders}
              currency={data.currency}
            />
          </div>
          <Card
            id="chart-heading"
            title="Revenue per day"
            description={`Paid orders that were not refunded, in ${data.currency}; days are UTC days.`}
          >
            <DailyChart days={data.daily} currency={data.currency} />
          </Card>
        </Stack>
      )}
    </Loaded>
  );
}

function FigureCard({
  title,
  note,
  revenue,
  orders,
  currency,
}: {
  title: string;
  note?: string;
  revenue: number;
  orders: number;
  currency: string;
}) {
  return (
    <section className="card">
      <h2 className="card-title">
        {title}
        {note && <span className="muted"> ({note})</span>}
      </h2>
      <dl className="facts">
        <dt>Revenue</dt>
        <dd className="figure">{formatMoney(revenue, currency)}</dd>
        <dt>Orders</dt>
        <dd className="figure">{orders}</dd>
      </dl>
    </section>
  );
}

const WIDTH = 600;
const HEIGHT = 160;
const GAP = 4;

function DailyChart({ days, currency }: { days: readonly Day[]; currency: string }) {
  const max = Math.max(0, ...days.map((day) => day.revenue));
  const slot = WIDTH / Math.max(days.length, 1);
  const total = days.reduce((sum, day) => sum + day.revenue, 0);
  const orders = days.reduce((sum, day) => sum + day.orders, 0);
  const best = days.reduce<Day | undefined>((top, day) => (!top || day.revenue > top.revenue ? day : top), undefined);
  const first = days[0];
  const last = days[days.length - 1];
  const summary =
    first && last
      ? `Revenue per day from ${formatDay(first.date)} to ${formatDay(last.date)}: ${formatMoney(total, currency)} from ${orderCount(orders)}` +
        (best && best.revenue > 0
          ? `; highest ${formatMoney(best.revenue, currency)} on ${formatDay(best.date)}.`
          : '.')
      : 'No days to show.';
  const middle = days[Math.floor((days.length - 1) / 2)];
  // The value axis: nought, half and the highest day, in the store's currency.
  const ticks = [max, max / 2, 0];
  return (
    <figure className="m-0">
      <div className="grid grid-cols-[auto_minmax(0,1fr)] gap-x-3">
        <div
          className="flex h-40 flex-col justify-between text-right text-xs text-muted tabular-nums"
          aria-hidden="true"
        >
          {ticks.map((tick, index) => (
            <span key={index} className="-my-2 leading-4">
              {formatMoney(tick, currency)}
            </span>
          ))}
        </div>
        <svg
          className="block h-40 w-full border-b border-l border-line-strong text-accent"
          viewBox={`0 0 ${WIDTH} ${HEIGHT + 1}`}
          role="img"
          aria-labelledby="chart-title"
          preserveAspectRatio="none"
          focusable="false"
        >
          <title id="chart-title">{summary}</title>
          {[0.5, 0].map((share) => (
            <line
              key={share}
              x1={0}
              x2={WIDTH}
              y1={share * HEIGHT + 0.5}
              y2={share * HEIGHT + 0.5}
              stroke="currentColor"
              strokeOpacity={0.15}
              vectorEffect="non-scaling-stroke"
            />
          ))}
          {days.map((day, index) => {
            const height = max > 0 ? Math.max((day.revenue / max) * HEIGHT, day.revenue > 0 ? 2 : 0) : 0;
            return (
              <rect
                key={day.date}
                x={index * slot + GAP / 2}
                y={HEIGHT - height}
                width={slot - GAP}
                height={height}
                fill="currentColor"
              >
                <title>{`${formatDay(day.date)}: ${formatMoney(day.revenue, currency)}, ${orderCount(day.orders)}`}</title>
              </rect>
            );
          })}
        </svg>
        {first && last && (
          <div className="col-start-2 mt-1 flex justify-between text-xs text-muted" aria-hidden="true">
            <span>{formatDay(first.date)}</span>
            {middle && middle !== first && middle !== last && <span>{formatDay(middle.date)}</span>}
            <span>{formatDay(last.date)}</span>
          </div>
        )}
      </div>
      {/* A table is not clipped by .visually-hidden itself (tables grow to their rows): its wrapper is. */}
      <div className="visually-hidden">
        <table>
          <caption>Revenue and orders per day</caption>
          <thead>
            <tr>
              <th scope="col">Day (UTC)</th>
              <th scope="col">Revenue</th>
              <th scope="col">Orders</th>
            </tr>
          </thead>
          <tbody>
            {days.map((day) => (
              <tr key={day.date}>
                <th scope="row">{formatDay(day.date)}</th>
                <td>{formatMoney(day.revenue, currency)}</td>
                <td>{day.orders}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </figure>
  );
}
