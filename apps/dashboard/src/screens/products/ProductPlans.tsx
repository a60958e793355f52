/**
 * The product page's plans: each plan's period, price and trial, whether it is still sold, and
 * (for staff who may see orders) how many subscriptions it has that are active or in their trial,
 * from one grouped statement (subscriptions.dashboardPlanCounts).
 */
import { useQuery } from '@tanstack/react-query';
import { trpc, type RouterOutputs } from '../../api';
import { StatusBadge } from '../../ui/badge';
import { ErrorNote } from '../../ui/feedback';
import { formatMoney } from '../../ui/format';
import { Card } from '../../ui/layout';
import { DataTable, type ColumnDef } from '../../ui/table';

type Product = RouterOutputs['catalog']['get'];
type Plan = Product['plans'][number];

/** `month`, 1 → `Every month`; `month`, 3 → `Every 3 months`. */
export function planPeriod(plan: Pick<Plan, 'interval' | 'intervalCount'>): string {
  return plan.intervalCount === 1 ? `Every ${plan.interval}` : `Every ${plan.intervalCount} ${plan.interval}s`;
}

export function ProductPlans({
  storeId,
  product,
  showCounts,
}: {
  storeId: string;
  product: Product;
  showCounts: boolean;
}) {
  const counts = useQuery({
    ...trpc.subscriptions.dashboardPlanCounts.queryOptions({ storeId, productId: product.id }),
    enabled: showCounts,
  });
  const byPlan = new Map((counts.data?.plans ?? []).map((row) => [row.planId, row]));
  const subscriptions = (plan: Plan): string => {
    if (counts.isPending) return '…';
    const row = byPlan.get(plan.id);
    const active = `${row?.active ?? 0} active`;
    return row?.trialing ? `${active}, ${row.trialing} in trial` : active;
  };
  const columns: Array<ColumnDef<Plan>> = [
    {
      header: 'Plan',
      wrap: true,
      cell: (plan) => (plan.trialDays > 0 ? `${planPeriod(plan)}, ${plan.trialDays}-day trial` : planPeriod(plan)),
    },
    { header: 'Price', numeric: true, cell: (plan) => formatMoney(plan.price, product.currency) },
    {
      header: 'Status',
      cell: (plan) => (
        <StatusBadge
          kind="product"
          status={plan.active ? 'active' : 'archived'}
          label={plan.active ? 'Sold' : 'Archived'}
        />
      ),
    },
  ];
  if (showCounts) columns.push({ header: 'Subscriptions', wrap: true, cell: subscriptions });
  return (
    <Card
      id="product-plans"
      title="Plans"
      description="Active subscriptions include past-due ones; an archived plan keeps the subscriptions sold on it."
      flush
    >
      <DataTable
        caption="Plans"
        bare
        columns={columns}
        rows={product.plans}
        rowKey={(plan) => plan.id}
        empty="No plans."
      />
      {counts.error && (
        <div className="px-5 pb-4">
          <ErrorNote error={counts.error} />
        </div>
      )}
    </Card>
  );
}
