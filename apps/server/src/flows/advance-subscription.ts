/**
 * A test subscription's clock (test mode's answer to waiting a month): `advance` moves it forward
 * and runs, in order, every move that falls due on the way (trial end, renewals charged on the
 * saved test card, dunning retries, notices and their mail, scheduled cancels and pauses,
 * `resumesAt`), each exactly as the billing engine runs a live one (flows/renew-subscription.ts),
 * then answers what it did once all of it is recorded.
 */
import type { TAdvanceSubscriptionInput, TAdvanceSubscriptionResult, TWebhookEvent } from '@svc/schemas';
import { AppError, invalidField } from '../lib/errors.js';
import { selectEventTypesSince, selectEventWatermark } from '../modules/events/events.repo.js';
import { OrderSchema } from '../modules/orders/orders.entities.js';
import type { ServiceContext } from '../modules/request/context.js';
import { inTransaction } from '../modules/request/transaction.js';
import { toSubscriptionView } from '../modules/subscriptions/subscription-views.js';
import { findSubscription, lockSubscription } from '../modules/subscriptions/subscriptions.service.js';
import { runNextMove } from './renew-subscription.js';
import { sellerOrderDetail } from './seller-order-actions.js';

/** How far one advance may go (2 years: 24 monthly renewals, a yearly plan twice). */
const MAX_ADVANCE_YEARS = 2;
/** A bound on the moves of one advance: a daily plan's two years with every retry is well within. */
const MAX_MOVES = 5_000;

function addYears(at: Date, years: number): Date {
  const next = new Date(at);
  next.setUTCFullYear(next.getUTCFullYear() + years);
  return next;
}

/**
 * `POST .../subscriptions/{id}/advance`: the test clock moved to `to`, each due move run at its own
 * time. Transactions: each step's own (flows/renew-subscription.ts), then one moving the clock.
 */
export async function advanceSubscription(
  ctx: ServiceContext,
  input: TAdvanceSubscriptionInput,
): Promise<TAdvanceSubscriptionResult> {
  if (ctx.livemode)
    throw new AppError(
      'test_key_required',
      "A subscription's clock is advanced with a test-mode key (sk_test_...); this key is live.",
    );
  const found = await findSubscription(ctx, input);
  const from = found.clockTime ?? ctx.clock.now();
  const to = new Date(input.to);
  if (to <= from) throw invalidField('to', `Choose a time after the subscription's clock (${from.toISOString()}).`);
  if (to > addYears(from, MAX_ADVANCE_YEARS))
    throw invalidField(
      'to',
      `Advance at most ${MAX_ADVANCE_YEARS} years at a time (until ${addYears(from, MAX_ADVANCE_YEARS).toISOString()}).`,
    );
  // The events it emits come after the store's newest event so far (the newest's time bounds the
  // index range read; its sequence number excludes what was recorded at the same instant before).
  const since = (await selectEventWatermark(ctx.em, input.storeId, false)) ?? { at: new Date(0), seq: 0 };
  const [last] = await ctx.em.find(
    OrderSchema,
    { subscriptionId: found.id },
    { orderBy: { number: 'desc' }, limit: 1, fields: ['number'] },
  );
  for (let moves = 0; ; moves++) {
    if (moves >= MAX_MOVES) throw new AppError('conflict', 'Too many moves in one advance; advance in smaller steps.');
    const outcome = await runNextMove(ctx, found.id, { until: to });
    if (outcome === 'gateway_error')
      throw new AppError('gateway_error', 'The payment gateway did not answer; advance again to retry.');
    if (outcome !== 'more') break;
  }
  const row = await inTransaction(ctx, async (tx) => {
    const locked = (await lockSubscription(tx, found.id))!;
    if (!locked.clockTime || locked.clockTime < to) locked.clockTime = to;
    await tx.em.flush();
    return locked;
  });
  const orders = await ctx.em
    .fork()
    .find(OrderSchema, { subscriptionId: row.id, number: { $gt: last?.number ?? 0 } }, { orderBy: { number: 'asc' } });
  const events = await selectEventTypesSince(ctx.em, {
    storeId: row.store.id,
    livemode: row.livemode,
    since,
    subscriptionId: row.id,
    orderIds: orders.map((order) => order.id),
  });
  return {
    subscription: toSubscriptionView(row),
    orders: await Promise.all(orders.map((order) => sellerOrderDetail(ctx, order))),
    events: events as TWebhookEvent[],
  };
}
