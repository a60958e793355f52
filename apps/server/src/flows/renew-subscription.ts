/**
 * The billing engine's one step: a subscription's next due move (subscription-machine.ts nextDue),
 * run once, whoever runs it (the engine in `svc serve` and `svc worker`, billing-engine.ts, or a
 * test subscription's `advance`). A move that needs money goes in three parts, so no row lock is
 * held while a gateway answers:
 *
 *   1. under the subscription's row lock: the move, and the period's order (written once: the
 *      unique index on subscription, period start and billing reason) with `order.created`;
 *   2. no transaction: the saved payment method charged with the idempotency key
 *      `(subscription, period start, attempt)`, so a crash and a rerun charge once;
 *   3. under the row lock again: paid (settleOrder settles the order; its subscription hook moves
 *      the subscription, flows/settle-payment.ts) or failed (past due, dunning, the mail with the
 *      pay link).
 *
 * While parts 1-3 run the subscription is leased (`lease_until`): another worker does not claim
 * it, and a cancel, pause, change or resume waits for the charge's outcome (409 until then), so a
 * renewal racing a cancel is one or the other, never half of each (docs/decisions.md, #39 The
 * billing engine).
 */
import type {
  TCancelSubscriptionInput,
  TPreviewSubscriptionUpdateQuery,
  TSubscription,
  TSubscriptionUpdatePreview,
  TSubscriptionIdInput,
  TUpdateSubscriptionInput,
} from '@svc/schemas';
import { randomToken, sha256Hex } from '../lib/crypto.js';
import { minorToAmount } from '../lib/money.js';
import { iso } from '../lib/timestamps.js';
import { AppError, invalidField } from '../lib/errors.js';
import { ProductPlanSchema } from '../modules/catalog/catalog.entities.js';
import { newId } from '../lib/ids.js';
import { CouponSchema } from '../modules/coupons/coupons.entities.js';
import { releaseCoupons } from '../modules/coupons/coupons.service.js';
import type { OutboxEvent } from '../modules/events/outbox.js';
import { afterEventWrite } from '../modules/events/outbox.js';
import { transition } from '../modules/orders/order-lifecycle.js';
import { lockOrder } from '../modules/orders/order-lookup.js';
import { toOrderDetail, type CheckoutOrderFields } from '../modules/orders/order-views.js';
import { renewalPayToken } from '../modules/orders/renewal-pay-link.js';
import { OrderSchema, type Order } from '../modules/orders/orders.entities.js';
import { insertNewOrder, selectOrderOrigin, selectPeriodOrder } from '../modules/orders/orders.repo.js';
import { lineTaxColumns, taxColumns, taxSettingsFrom, workOutTax } from '../modules/tax/tax.js';
import type { ChargeResult } from '../modules/payments/gateway.js';
import { GATEWAYS } from '../modules/payments/gateways.js';
import { savedMethodOfSubscription } from '../modules/payments/payments.service.js';
import type { ServiceContext } from '../modules/request/context.js';
import { inTransaction } from '../modules/request/transaction.js';
import {
  amountOf,
  move,
  nextDue,
  type BillingTerms,
  type ChargeEffect,
  type MoveResult,
} from '../modules/subscriptions/subscription-machine.js';
import { recordSubscriptionMail } from '../modules/subscriptions/subscription-mails.service.js';
import { stateOf } from '../modules/subscriptions/subscription-views.js';
import type { Subscription } from '../modules/subscriptions/subscriptions.entities.js';
import {
  applyMove,
  cancelSubscription,
  expectsCharge,
  findSubscription,
  getSubscription,
  lockSubscription,
  refuseWhileCharging,
  subscriptionNow,
  resumeOrScheduleResume,
} from '../modules/subscriptions/subscriptions.service.js';
import { checkoutUrl } from './place-order.js';
import { settleOrder } from './settle-payment.js';

export type StepOutcome =
  /** Nothing due (by `until`), or the subscription is leased by another step. */
  | 'idle'
  /** A move ran, and nothing more is due by `until` (or now). */
  | 'moved'
  /** A move ran, and the next is due by `until` (or now) already: run the step again. */
  | 'more'
  /** The gateway could not be reached: the lease runs out and the step runs again, with the same key. */
  | 'gateway_error';

interface PlannedCharge {
  subscriptionId: string;
  /** What the charge is made with and in (the subscription's, as the move left it). */
  paymentMethod: string;
  currency: string;
  orderId: string;
  charge: ChargeEffect;
  attempt: number;
  /** The time the move ran at (the subscription's clock for a test subscription). */
  at: Date;
}

/**
 * The period's order: the one already written for (subscription, period start, reason), or a new
 * pending one at the subscription's terms, with `order.created`. Under the subscription's row lock.
 */
async function periodOrder(
  tx: ServiceContext,
  row: Subscription,
  charge: ChargeEffect,
): Promise<Pick<Order, 'id' | 'number'>> {
  const existing = await selectPeriodOrder(tx.em, {
    subscriptionId: row.id,
    periodStart: charge.periodStart,
    billingReason: charge.reason,
  });
  if (existing) return existing;
  const first = await selectOrderOrigin(tx.em, row.firstOrderId);
  const coupon = row.couponId ? await tx.em.findOne(CouponSchema, { id: row.couponId }, { fields: ['code'] }) : null;
  const wall = tx.clock.now();
  // A renewal bills the period at the subscription's price (less its forever coupon and the credit
  // spent); a change bills its prorated difference as one line.
  const cycle = charge.reason === 'subscription_cycle';
  const subtotalMinor = cycle ? row.unitPriceMinor * row.quantity : charge.amountMinor;
  // Taxed as the store is set up now, for the first order's billing details, at the rate of the
  // period's own date (docs/decisions.md, "#42 Tax"); the tax is on what is charged, after the
  // coupon's part and the credit spent.
  const tax = workOutTax(
    taxSettingsFrom(first?.storeTax),
    [{ amountMinor: subtotalMinor, category: first?.taxCategory ?? 'standard', discounted: true }],
    subtotalMinor - charge.amountMinor,
    { country: first?.billingCountry ?? null, taxId: first?.buyerTaxId ?? null },
    charge.periodStart,
  );
  const order: CheckoutOrderFields = {
    id: newId(),
    number: 0,
    store: { id: row.store.id },
    livemode: row.livemode,
    status: 'pending',
    productName: row.productName,
    priceMinor: tax.totalMinor,
    subtotalMinor,
    // The forever coupon's part and the credit balance spent on it.
    discountMinor: subtotalMinor - charge.amountMinor,
    ...taxColumns(tax),
    invoiceNumber: null,
    creditNoteNumber: null,
    couponCode: coupon?.code ?? null,
    paidMinor: 0,
    currency: row.currency,
    paymentMethod: row.paymentMethod,
    customerEmail: row.customerEmail,
    country: first?.country ?? 'XX',
    keyCount: 0,
    subscriptionId: row.id,
    billingReason: charge.reason,
    note: '',
    customFieldResponses: [],
    createdAt: wall,
    completedAt: null,
    updatedAt: wall,
  };
  const event: OutboxEvent = {
    storeId: row.store.id,
    livemode: row.livemode,
    type: 'order.created',
    payload: { order: toOrderDetail(order) },
    at: wall,
  };
  order.number = await insertNewOrder(
    tx.em,
    {
      ...order,
      subscriptionId: row.id,
      // The coupon's use was claimed once, by the checkout; a renewal names its code but holds no use.
      couponId: null,
      couponCode: order.couponCode ?? null,
      buyerIp: first?.buyerIp ?? '',
      userAgent: null,
      // Never shown: the buyer pays a failed renewal by its pay link (orders/renewal-pay-link.ts).
      checkoutTokenHash: sha256Hex(randomToken(32)),
      periodStart: charge.periodStart,
      buyerTaxId: tax.taxId,
      billingCountry: first?.billingCountry ?? null,
      billingName: first?.billingName ?? null,
      billingAddress: first?.billingAddress ?? null,
      lines: [
        {
          id: newId(),
          productId: row.productId ?? '',
          productName: cycle ? row.productName : `${row.productName} (plan change)`,
          quantity: cycle ? row.quantity : 1,
          unitPriceMinor: cycle ? row.unitPriceMinor : charge.amountMinor,
          planId: row.planId,
          planInterval: row.interval,
          planIntervalCount: row.intervalCount,
          planTrialDays: 0,
          taxCategory: first?.taxCategory ?? 'standard',
          ...lineTaxColumns(tax.lines[0]!),
        },
      ],
    },
    event,
  );
  afterEventWrite(tx);
  return { id: order.id, number: order.number };
}

/**
 * Part 1: under the row lock, the due move. One without money is done here; one with a charge
 * answers the charge to make (its order written, the subscription leased).
 */
async function beginStep(
  ctx: ServiceContext,
  subscriptionId: string,
  options: StepOptions,
): Promise<PlannedCharge | 'idle' | 'moved' | 'more'> {
  return inTransaction(ctx, async (tx) => {
    const row = await lockSubscription(tx, subscriptionId);
    if (!row) return 'idle';
    const wall = tx.clock.now();
    // Another step holds it (its charge is in flight): that step finishes the move.
    if (!options.claimed && row.leaseUntil && row.leaseUntil > wall) return 'idle';
    const due = nextDue(stateOf(row));
    // A live subscription's moves run now; a test subscription's at its clock, which `advance`
    // moves to each due time in turn (never past `until`).
    const at = row.livemode ? wall : due?.at;
    if (!due || !at || due.at > (options.until ?? wall)) {
      if (options.claimed && row.leaseUntil) row.leaseUntil = null;
      return 'idle';
    }
    if (!row.livemode && row.clockTime && row.clockTime < due.at) row.clockTime = due.at;
    const result: MoveResult = await applyMove(tx, row, due.move, at);
    // The row's changes are written by the transaction's closing flush.
    if (!result.charge) {
      row.leaseUntil = null;
      return afterMove(row, options.until ?? wall);
    }
    const order = await periodOrder(tx, row, result.charge);
    row.latestOrderNumber = order.number;
    row.leaseUntil = new Date(wall.getTime() + tx.deps.config.billingLeaseMs);
    return {
      subscriptionId,
      paymentMethod: row.paymentMethod,
      currency: row.currency,
      orderId: order.id,
      charge: result.charge,
      // The first charge of a period is attempt 0; each dunning retry the next.
      attempt: row.status === 'past_due' ? row.retries + 1 : 0,
      at,
    };
  });
}

/** Part 2: the charge, outside any transaction. Manual payments (and no saved method) never succeed by themselves. */
async function charge(ctx: ServiceContext, planned: PlannedCharge): Promise<ChargeResult> {
  if (planned.charge.amountMinor === 0) return { status: 'succeeded', providerRef: '' };
  const gateway = GATEWAYS[planned.paymentMethod as keyof typeof GATEWAYS];
  const method = await savedMethodOfSubscription(ctx, planned.subscriptionId);
  if (!gateway?.chargeSaved || !method)
    // Manual, as an invoice: the renewal order waits for the seller to mark it paid (or the
    // buyer to pay by the link), and dunning counts its days.
    return { status: 'failed', declineCode: 'invoice_unpaid', providerRef: null };
  // A period's charges by attempt (0, then each retry); a plan change's by its own name.
  const attempt = planned.charge.reason === 'subscription_update' ? 'update' : String(planned.attempt);
  const key = `sub_${planned.subscriptionId}_${planned.charge.periodStart.toISOString()}_${attempt}`;
  return gateway.chargeSaved(method, planned.charge.amountMinor, planned.currency, key, ctx);
}

/** Whether the subscription's next move is due by `until` already (a long-overdue one's, a test clock's). */
function afterMove(row: Subscription, until: Date): 'moved' | 'more' {
  const due = nextDue(stateOf(row));
  return due && due.at <= until ? 'more' : 'moved';
}

/** Part 3: the charge's outcome, under the row lock. */
async function finishStep(
  ctx: ServiceContext,
  planned: PlannedCharge,
  outcome: ChargeResult,
  until: Date | undefined,
): Promise<'moved' | 'more'> {
  return inTransaction(ctx, async (tx) => {
    // The order's lock first, then the subscription's: the order a settlement locks before its
    // subscription hook does (flows/settle-payment.ts), so the two never wait on each other.
    const order = await lockOrder(tx, planned.orderId);
    const row = await lockSubscription(tx, planned.subscriptionId);
    if (!row) return 'moved';
    row.leaseUntil = null;
    const untilNow = until ?? tx.clock.now();
    // Paid meanwhile (the buyer by the link, the seller by hand): the settlement moved it already.
    if (order.status !== 'pending') return afterMove(row, untilNow);
    if (outcome.status === 'succeeded') {
      await settleOrder(tx, {
        orderId: order.id,
        payment: {
          gateway: planned.paymentMethod,
          providerRef: outcome.providerRef || null,
          amountMinor: order.priceMinor,
          currency: order.currency,
        },
        now: tx.clock.now(),
      });
      return afterMove(row, untilNow);
    }
    if (!expectsCharge(row, order)) return afterMove(row, untilNow);
    const result = await applyMove(tx, row, 'failed', planned.at, planned.charge);
    if (result.mail === 'payment_failed') {
      // The e-mailed link: the order's checkout, where the buyer pays (or authenticates) with the
      // card of their choice, which renewals then use. Its token is derived, not stored, so the
      // customer area's Pay now gives the same link and neither revokes the other.
      const payUrl = checkoutUrl(tx.deps.config.publicUrl, order.id, renewalPayToken(tx.deps.config, order.id));
      await recordSubscriptionMail(tx, { subscription: row, kind: 'payment_failed', now: planned.at, payUrl });
    }
    // Dunning ran out: the unpaid period's order is no longer payable.
    if (row.status === 'canceled') await transition(tx, order, 'expire', tx.clock.now(), { releaseCoupons });
    return afterMove(row, untilNow);
  });
}

export interface StepOptions {
  /** Run what is due by then (a test subscription's advance); now when absent. */
  until?: Date;
  /** The caller holds the subscription's lease (the engine claimed it). */
  claimed?: boolean;
}

/**
 * Runs the subscription's next due move, by `until` (a test subscription's advance) or now (a
 * live one, from the engine). Answers what it did. Transactions: up to two of its own (the move
 * and the order; the charge's outcome), none held while the gateway answers.
 */
export async function runNextMove(
  ctx: ServiceContext,
  subscriptionId: string,
  options: StepOptions = {},
): Promise<StepOutcome> {
  const planned = await beginStep(ctx, subscriptionId, options);
  if (typeof planned === 'string') return planned;
  let outcome: ChargeResult;
  try {
    outcome = await charge({ ...ctx, em: ctx.em.fork() }, planned);
  } catch (error) {
    if (error instanceof AppError && error.appCode === 'gateway_error') return 'gateway_error';
    throw error;
  }
  return finishStep(ctx, planned, outcome, options.until);
}

/**
 * `POST .../subscriptions/{id}/resume`: undoes a scheduled cancel or pause, or resumes a paused
 * subscription now, charging its new period as a renewal is charged. Answers the subscription.
 * Transactions: one for the move, then runNextMove's for a paused one's charge.
 */
export async function resumeSubscription(ctx: ServiceContext, input: TSubscriptionIdInput): Promise<TSubscription> {
  if (await resumeOrScheduleResume(ctx, input)) {
    const row = await findSubscription(ctx, input);
    const outcome = await runNextMove(ctx, row.id, row.livemode ? {} : { until: row.clockTime ?? undefined });
    if (outcome === 'gateway_error')
      throw new AppError('gateway_error', 'The payment gateway did not answer; the subscription resumes when it does.');
  }
  return getSubscription(ctx, input);
}

/**
 * `PATCH .../subscriptions/{id}`: another plan of the same product or another seat count. Without
 * proration (or in a trial, or when it nets a credit) it is one move. With a prorated amount to
 * pay, the difference is charged first, on the saved method, as one `subscription_update` order
 * (the subscription leased meanwhile); only a paid charge applies the change, so a declined card
 * changes nothing (402 `payment_failed`). Transactions: one writing the order (or the whole change
 * when nothing is charged), none during the charge, one settling and applying it.
 */
export async function updateSubscription(ctx: ServiceContext, input: TUpdateSubscriptionInput): Promise<TSubscription> {
  const planned = await inTransaction(ctx, async (tx) => {
    const row = await findSubscription(tx, input, true);
    refuseWhileCharging(tx, row);
    const terms = await changedTerms(tx, row, input);
    const prorate = input.prorate ?? true;
    const at = subscriptionNow(tx, row);
    const preview = move(stateOf(row), 'change', at, terms, prorate);
    if (!preview.charge) {
      await applyMove(tx, row, 'change', at, terms, prorate);
      return null;
    }
    const order = await periodOrder(tx, row, preview.charge);
    row.latestOrderNumber = order.number;
    row.leaseUntil = new Date(tx.clock.now().getTime() + tx.deps.config.billingLeaseMs);
    await tx.em.flush();
    return {
      subscriptionId: row.id,
      paymentMethod: row.paymentMethod,
      currency: row.currency,
      orderId: order.id,
      charge: preview.charge,
      attempt: 0,
      terms,
      prorate,
      at,
    };
  });
  if (planned) {
    let outcome: ChargeResult;
    try {
      outcome = await charge({ ...ctx, em: ctx.em.fork() }, planned);
    } catch (error) {
      await abandonChange(ctx, planned.orderId, planned.subscriptionId);
      throw error;
    }
    if (outcome.status !== 'succeeded') {
      await abandonChange(ctx, planned.orderId, planned.subscriptionId);
      throw new AppError(
        'payment_failed',
        'The saved payment method was declined for the difference; nothing was changed.',
      );
    }
    await inTransaction(ctx, async (tx) => {
      const order = await lockOrder(tx, planned.orderId);
      const locked = (await lockSubscription(tx, planned.subscriptionId))!;
      locked.leaseUntil = null;
      await settleOrder(tx, {
        orderId: order.id,
        payment: {
          gateway: locked.paymentMethod,
          providerRef: outcome.providerRef || null,
          amountMinor: order.priceMinor,
          currency: order.currency,
        },
        now: tx.clock.now(),
      });
      await applyMove(tx, locked, 'change', planned.at, planned.terms, planned.prorate);
    });
  }
  return getSubscription(ctx, input);
}

/**
 * `GET .../subscriptions/{id}/preview-update`: what the PATCH with the same plan and seats would
 * charge now and bill afterwards, from the same terms (changedTerms) and the same move at the
 * subscription's own time (a test subscription's clock), with proration as the PATCH defaults to.
 * Reads only, in no transaction (the row as it stands; nothing is locked or written); a change
 * the PATCH would refuse (409, 400) is refused here the same way.
 */
export async function previewSubscriptionUpdate(
  ctx: ServiceContext,
  input: TPreviewSubscriptionUpdateQuery,
): Promise<TSubscriptionUpdatePreview> {
  const row = await findSubscription(ctx, input);
  const terms = await changedTerms(ctx, row, input);
  const result = move(stateOf(row), 'change', subscriptionNow(ctx, row), terms, true);
  const money = (minor: number) => minorToAmount(minor, row.currency);
  const next = result.next;
  return {
    planId: terms.planId,
    interval: terms.cadence.interval,
    intervalCount: terms.cadence.intervalCount,
    quantity: terms.quantity,
    amountDue: money(result.charge?.amountMinor ?? 0),
    creditBalance: money(next.creditMinor),
    amount: money(amountOf(next.terms)),
    currency: row.currency,
    currentPeriodEnd: iso(next.currentPeriodEnd),
    nextChargeAt: next.cancelAtPeriodEnd || next.pauseAtPeriodEnd ? null : iso(next.currentPeriodEnd),
  };
}

/** A change whose difference was not paid: its order expires and the subscription is free again. */
async function abandonChange(ctx: ServiceContext, orderId: string, subscriptionId: string): Promise<void> {
  await inTransaction(ctx, async (tx) => {
    const order = await lockOrder(tx, orderId);
    const row = await lockSubscription(tx, subscriptionId);
    if (row) row.leaseUntil = null;
    if (order.status === 'pending') await transition(tx, order, 'expire', tx.clock.now(), { releaseCoupons });
  });
}

/** The terms a change asks for: a plan of the subscription's own product that is on sale, and the seats. */
async function changedTerms(
  ctx: ServiceContext,
  row: Subscription,
  input: TUpdateSubscriptionInput,
): Promise<BillingTerms> {
  const current = stateOf(row).terms;
  if (input.planId === undefined && input.quantity === undefined)
    throw invalidField('planId', 'Choose another plan or another number of seats.');
  let plan = { id: current.planId, cadence: current.cadence, priceMinor: current.unitPriceMinor };
  if (input.planId !== undefined && input.planId !== current.planId) {
    const found = await ctx.em.findOne(ProductPlanSchema, { id: input.planId, livemode: row.livemode });
    if (!found || found.product.id !== row.productId)
      throw invalidField('planId', "Choose a plan of this subscription's product.");
    if (!found.active) throw invalidField('planId', 'This plan is archived: choose a plan that is on sale.');
    plan = {
      id: found.id,
      cadence: { interval: found.interval, intervalCount: found.intervalCount },
      priceMinor: found.priceMinor,
    };
  }
  return {
    planId: plan.id,
    cadence: plan.cadence,
    unitPriceMinor: plan.priceMinor,
    quantity: input.quantity ?? current.quantity,
    discountMinor: current.discountMinor,
  };
}

/**
 * `POST .../subscriptions/{id}/cancel`: the subscription's cancel (subscriptions.service), and,
 * when it ends now, its unpaid renewal order expires with it (no longer payable by the e-mailed
 * link). Transaction: one, holding the subscription's lock and then its pending orders'.
 */
export async function cancelSubscriptionNow(
  ctx: ServiceContext,
  input: TCancelSubscriptionInput,
  requestedBy?: 'requested_by_merchant' | 'requested_by_customer',
): Promise<TSubscription> {
  return inTransaction(ctx, async (tx) => {
    const view = await cancelSubscription(tx, input, requestedBy);
    if (view.status === 'canceled') {
      const unpaid = await tx.em.find(OrderSchema, {
        subscriptionId: view.id,
        status: 'pending',
        periodStart: { $ne: null },
      });
      for (const { id } of unpaid)
        await transition(tx, await lockOrder(tx, id), 'expire', tx.clock.now(), { releaseCoupons });
    }
    return view;
  });
}
