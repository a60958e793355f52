/**
 * What a checkout's subscription charges when its first payment is made now (docs/architecture.md,
 * Checkout): today the order's price (0 in a trial), next the period's amount at the trial's end,
 * or at the first period's end without one. The same moves startSubscription makes (start_trial,
 * activate), so the checkout and pay pages say the date the billing engine will charge on.
 */
import type { Order } from '../orders/orders.entities.js';
import type { ServiceContext } from '../request/context.js';
import type { ChargesAhead } from '../catalog/plan-text.js';
import { lineTax } from '../tax/tax.js';
import { boundary } from './billing-period.js';
import { amountOf } from './subscription-machine.js';
import { stateOf } from './subscription-views.js';
import { SubscriptionSchema, type Subscription } from './subscriptions.entities.js';

const DAY_MS = 86_400_000;

/** The tax the checkout's order was placed with: its behaviour (null: untaxed) and its rate. */
export interface OrderTax {
  behavior: 'exclusive' | 'inclusive' | null;
  ratePpm: number | null;
}

/**
 * The charges of `row`'s checkout paid at `now`, with `trialDays` of trial and `todayMinor` due
 * today. A taxed order's next charge carries its tax as a renewal works it out (tax/tax.ts
 * lineTax): added to the period's amount when prices exclude it, already in it when they include
 * it; at today's rate for the buyer's country (a renewal is taxed at its own date's).
 */
export function chargesAheadOf(
  row: Subscription,
  trialDays: number,
  todayMinor: number,
  now: Date,
  tax: OrderTax = { behavior: null, ratePpm: null },
): ChargesAhead {
  const { terms } = stateOf(row);
  const amount = amountOf(terms);
  const added = tax.behavior === 'exclusive' && tax.ratePpm ? lineTax(amount, tax.ratePpm, 'exclusive').taxMinor : 0;
  return {
    todayMinor,
    nextMinor: amount + added,
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
  order: Pick<Order, 'subscriptionId' | 'billingReason' | 'priceMinor' | 'taxBehavior' | 'taxRatePpm'>,
  trialDays: number,
): Promise<ChargesAhead | null> {
  if (!order.subscriptionId || order.billingReason !== 'subscription_create') return null;
  const row = await ctx.em.findOne(SubscriptionSchema, { id: order.subscriptionId });
  if (!row || row.status !== 'incomplete') return null;
  return chargesAheadOf(row, trialDays, order.priceMinor, ctx.clock.now(), {
    behavior: order.taxBehavior ?? null,
    ratePpm: order.taxRatePpm ?? null,
  });
}
