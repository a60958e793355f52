/**
 * Home: a new store's setup checklist (SetupChecklist, gone once done), today's and the last 30
 * days' revenue and order count, and a bar chart of the 30 days
 * (orders.dashboardStats: one SQL aggregate on the server; days are UTC days); beside them the
 * recurring figures, MRR, active and churned subscriptions, and a chart of the MRR of 12 months
 * (subscriptions.dashboardStats; docs/decisions.md, "MRR"). The charts are BarChart's inline SVGs
 * with their figures in visually hidden tables.
 */
import { useQuery } from '@tanstack/react-query';
import { trpc, type RouterOutputs } from '../../api';
import { useStore, useStoreId } from '../../store';
import { Loaded } from '../../ui/feedback';
import { Card, PageHeader, Stack } from '../../ui/layout';
import { ViewStoreLink } from '../../ui/view-store';
import { SetupChecklist } from './SetupChecklist';
import { formatMoney } from '../../ui/format';
import { BarChart } from './BarChart';

type Stats = RouterOutputs['orders']['dashboardStats'];
type RecurringStats = RouterOutputs['subscriptions']['dashboardStats'];
type Day = Stats['daily'][number];

// The API's days are UTC dates (YYYY-MM-DD): shown as such, whatever the browser's zone.
const dayFormat = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });
const formatDay = (date: string) => dayFormat.format(new Date(`${date}T00:00:00Z`));
// The API's months are UTC months (YYYY-MM).
const monthFormat = new Intl.DateTimeFormat(undefined, { month: 'short', year: 'numeric', timeZone: 'UTC' });
const formatMonth = (month: string) => monthFormat.format(new Date(`${month}-01T00:00:00Z`));

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
  const sales = useQuery(trpc.orders.dashboardStats.queryOptions({ storeId }));
  const recurring = useQuery(trpc.subscriptions.dashboardStats.queryOptions({ storeId }));
  const both = {
    data: sales.data && recurring.data ? { sales: sales.data, recurring: recurring.data } : undefined,
    error: sales.error ?? recurring.error,
    isPending: sales.isPending || recurring.isPending,
    refetch: () => Promise.all([sales.refetch(), recurring.refetch()]),
  };
  return (
    <Loaded query={both} label="Loading figures…" lines={6}>
      {({ sales: data, recurring: subs }) => (
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
            <section className="card" aria-labelledby="subscriptions-figures">
              <h2 id="subscriptions-figures" className="card-title">
                Subscriptions
              </h2>
              <dl className="facts">
                <dt>MRR</dt>
                <dd className="figure">{formatMoney(subs.mrr, subs.currency)}</dd>
                <dt>Active subscriptions</dt>
                <dd className="figure">{subs.activeSubscriptions}</dd>
                <dt>Churned (30 days)</dt>
                <dd className="figure">{subs.churned30Days}</dd>
              </dl>
            </section>
          </div>
          <Card
            id="chart-heading"
            title="Revenue per day"
            description={`Paid orders that were not refunded, in ${data.currency}; days are UTC days.`}
          >
            <DailyChart days={data.daily} currency={data.currency} />
          </Card>
          <Card
            id="mrr-chart-heading"
            title="MRR per month"
            description={`Monthly recurring revenue of active and past-due subscriptions at each month's end (this month: now), in ${subs.currency}; yearly plans count a twelfth.`}
          >
            <MrrChart months={subs.monthly} currency={subs.currency} />
          </Card>
        </Stack>
      )}
    </Loaded>
  );
}

function MrrChart({ months, currency }: { months: RecurringStats['monthly']; currency: string }) {
  const first = months[0];
  const last = months[months.length - 1];
  const summary =
    first && last
      ? `MRR per month from ${formatMonth(first.month)} to ${formatMonth(last.month)}: ${formatMoney(first.mrr, currency)} then, ${formatMoney(last.mrr, currency)} now.`
      : 'No months to show.';
  return (
    <BarChart
      summary={summary}
      caption="MRR per month"
      columns={['Month (UTC)', 'MRR']}
      formatValue={(value) => formatMoney(value, currency)}
      bars={months.map((month) => ({
        key: month.month,
        value: month.mrr,
        title: `${formatMonth(month.month)}: ${formatMoney(month.mrr, currency)}`,
        axisLabel: formatMonth(month.month),
        row: [formatMonth(month.month), formatMoney(month.mrr, currency)],
      }))}
    />
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

function DailyChart({ days, currency }: { days: readonly Day[]; currency: string }) {
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
    <BarChart
      summary={summary}
      caption="Revenue and orders per day"
      columns={['Day (UTC)', 'Revenue', 'Orders']}
      formatValue={(value) => formatMoney(value, currency)}
      bars={days.map((day) => ({
        key: day.date,
        value: day.revenue,
        title: `${formatDay(day.date)}: ${formatMoney(day.revenue, currency)}, ${orderCount(day.orders)}`,
        axisLabel: formatDay(day.date),
        row: [formatDay(day.date), formatMoney(day.revenue, currency), String(day.orders)],
      }))}
    />
  );
}
