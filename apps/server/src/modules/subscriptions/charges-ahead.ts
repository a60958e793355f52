/**
 * What a checkout's subscription charges when its first payment is made now (docs/architecture.md,
 * Checkout): today the order's price (0 in a trial), next the period's amount at the trial's end,
 * or at the first period's end without one. The same moves startSubscription makes (start_trial,
 * activate), so the checkout and pay pages say the date the billing engine will charge on.
 */
import type { Order } from '../orders/orders.entities.js';
import type { ServiceContext } from '../request/context.js';
import type { ChargesAhead } from '../catalog/plan-text.js';
import { boundary } from './billing-period.js';
import { amountOf } from './subscription-machine.js';
import { stateOf } from './subscription-views.js';
import { SubscriptionSchema, type Subscription } from './subscriptions.entities.js';

const DAY_MS = 86_400_000;

/** The charges of `row`'s checkout paid at `now`, with `trialDays` of trial and `todayMinor` due today. */
export function chargesAheadOf(row: Subscription, trialDays: number, todayMinor: number, now: Date): ChargesAhead {
  const { terms } = stateOf(row);
  return {
    todayMinor,
    nextMinor: amountOf(terms),
    nextAt: trialDays > 0 ? new Date(now.getTime() + trialDays * DAY_MS) : boundary(now, terms.cadence, 1),
    interval: terms.cadence.interval,
    intervalCount: terms.cadence.intervalCount,
  };
}

/**
 * The charges ahead of a pending order that starts a subscription, paid now; null for any other
 * order (one-time, a renewal, a subscription already started).
 */
export async function chargesAhead(
  ctx: Pick<ServiceContext, 'em' | 'clock'>,
  order: Pick<Order, 'subscriptionId' | 'billingReason' | 'priceMinor'>,
  trialDays: number,
): Promise<ChargesAhead | null> {
  if (!order.subscriptionId || order.billingReason !== 'subscription_create') return null;
  const row = await ctx.em.findOne(SubscriptionSchema, { id: order.subscriptionId });
  if (!row || row.status !== 'incomplete') return null;
  return chargesAheadOf(row, trialDays, order.priceMinor, ctx.clock.now());
}
