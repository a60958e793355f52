/**
 * Home: today's and the last 30 days' revenue and order count, and a bar chart of the 30 days
 * (orders.dashboardStats: one SQL aggregate on the server; days are UTC days). The chart is an
 * inline SVG drawn here (no chart library): its figures are also in a visually hidden table, so a
 * screen reader gets the numbers, and its colour follows the scheme (currentColor = --accent).
 */
import { useQuery } from '@tanstack/react-query';
import { trpc, type RouterOutputs } from '../../api';
import { useStore, useStoreId } from '../../store';
import { Loaded } from '../../ui/feedback';
import { ViewStoreLink } from '../../ui/view-store';
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
      <h1>Home</h1>
      {store && <ViewStoreLink subdomain={store.subdomain} />}
      {store && !can('viewOrders') ? (
        <p>Sales figures need the View orders permission. Use the menu to reach what you may manage.</p>
      ) : (
        <Figures />
      )}
    </>
  );
}

function Figures() {
  const storeId = useStoreId();
  const stats = useQuery(trpc.orders.dashboardStats.queryOptions({ storeId }));
  return (
    <Loaded query={stats} label="Loading figures…">
      {(data) => (
        <>
          <div className="cards">
            <Card
              title="Today"
              note="since midnight UTC"
              revenue={data.today.revenue}
              orders={data.today.orders}
              currency={data.currency}
            />
            <Card
              title="Last 30 days"
              revenue={data.last30Days.revenue}
              orders={data.last30Days.orders}
              currency={data.currency}
            />
          </div>
          <h2 id="chart-heading">Revenue per day</h2>
          <DailyChart days={data.daily} currency={data.currency} />
          <p className="muted">Paid orders that were not refunded, in {data.currency}; days are UTC days.</p>
        </>
      )}
    </Loaded>
  );
}

function Card({
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
  return (
    <figure className="chart">
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT + 1}`}
        role="img"
        aria-labelledby="chart-title"
        preserveAspectRatio="none"
        focusable="false"
      >
        <title id="chart-title">{summary}</title>
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
        <line x1={0} x2={WIDTH} y1={HEIGHT + 0.5} y2={HEIGHT + 0.5} />
      </svg>
      {first && last && (
        <div className="chart-axis muted" aria-hidden="true">
          <span>{formatDay(first.date)}</span>
          <span>{formatDay(last.date)}</span>
        </div>
      )}
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
