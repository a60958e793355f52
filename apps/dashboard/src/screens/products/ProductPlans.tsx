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
  // A native table whose cells wrap, with narrower padding on a phone: it fits 360 px without
  // scrolling, so it needs no scrolling frame (which the keyboard would have to reach).
  const cell = 'px-2 sm:px-4';
  return (
    <Card
      id="product-plans"
      title="Plans"
      description="Active subscriptions include past-due ones; an archived plan is no longer sold and keeps the subscriptions sold on it."
      flush
    >
      <table className="w-full">
        <caption className="visually-hidden">Plans</caption>
        <thead>
          <tr>
            <th scope="col" className={cell}>
              Plan
            </th>
            <th scope="col" className={`numeric ${cell}`}>
              Price
            </th>
            {showCounts && (
              <th scope="col" className={cell}>
                Subscriptions
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {product.plans.map((plan) => (
            <tr key={plan.id}>
              <td className={`break-words ${cell}`}>
                {plan.trialDays > 0 ? `${planPeriod(plan)}, ${plan.trialDays}-day trial` : planPeriod(plan)}
                {!plan.active && (
                  <>
                    {' '}
                    <StatusBadge kind="product" status="archived" />
                  </>
                )}
              </td>
              <td className={`numeric whitespace-nowrap ${cell}`}>{formatMoney(plan.price, product.currency)}</td>
              {showCounts && <td className={cell}>{subscriptions(plan)}</td>}
            </tr>
          ))}
        </tbody>
      </table>
      {counts.error && (
        <div className="px-5 py-4">
          <ErrorNote error={counts.error} />
        </div>
      )}
    </Card>
  );
}
