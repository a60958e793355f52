/**
 * Subscriptions' rules over their own rows: reading them, and applying a move of the table
 * (subscription-machine.ts) to a locked row with its events in the same transaction. The moves
 * that need money (a renewal, a retry, a resume from pause, a prorated change) hand their charge
 * back to the caller: making the order and charging the saved method spans modules, so a flow
 * does it (docs/architecture.md, Flows).
 */
import type {
  TCancelSubscriptionInput,
  TListSubscriptionsQuery,
  TPauseSubscriptionInput,
  TSubscription,
  TSubscriptionIdInput,
} from '@svc/schemas';
import { LockMode } from '@mikro-orm/core';
import { cursorScope, decodeCursor, keysetPage } from '../../lib/cursor.js';
import { AppError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { recordEvent } from '../events/outbox.js';
import type { ServiceContext } from '../request/context.js';
import { StoreSchema } from '../stores/stores.entities.js';
import { inTransaction, lockOnce } from '../request/transaction.js';
import { move, type MoveArgs, type MoveName, type MoveResult } from './subscription-machine.js';
import { recordSubscriptionMail } from './subscription-mails.service.js';
import { stateOf, toSubscriptionView, writeState } from './subscription-views.js';
import { SubscriptionSchema, type Subscription } from './subscriptions.entities.js';
import type { Order } from '../orders/orders.entities.js';
import { selectSubscriptionForUpdate, selectSubscriptionPage } from './subscriptions.repo.js';

function notFound(): AppError {
  return new AppError('not_found', 'No such subscription.');
}

/**
 * The time a subscription's moves run at: a test subscription's own clock (it moves only when
 * advanced), the one clock for a live one.
 */
export function subscriptionNow(ctx: ServiceContext, row: Subscription): Date {
  return row.clockTime ?? ctx.clock.now();
}

/** The store's subscription of the caller's mode (another store's, or the other mode's, is 404). */
export async function findSubscription(
  ctx: ServiceContext,
  input: TSubscriptionIdInput,
  lock = false,
): Promise<Subscription> {
  const row = await ctx.em.findOne(
    SubscriptionSchema,
    { id: input.subscriptionId, store: input.storeId, livemode: ctx.livemode },
    lock ? { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true } : {},
  );
  if (!row) throw notFound();
  return row;
}

export async function getSubscription(ctx: ServiceContext, input: TSubscriptionIdInput): Promise<TSubscription> {
  return toSubscriptionView(await findSubscription(ctx, input));
}

export async function listSubscriptions(ctx: ServiceContext, input: TListSubscriptionsQuery) {
  const limit = input.limit ?? 50;
  const key = ctx.deps.config.encryptionKey;
  const filter = {
    storeId: input.storeId,
    livemode: ctx.livemode,
    status: input.status,
    productId: input.productId,
    customerEmail: input.customerEmail,
  };
  const scope = cursorScope('subscriptions', filter);
  const before = input.cursor ? decodeCursor(key, scope, input.cursor) : undefined;
  const rows = await selectSubscriptionPage(ctx.em, filter, before, limit + 1);
  const { page, hasMore, nextCursor } = keysetPage(key, scope, rows, limit, (row) => row.us);
  const found = page.length ? await ctx.em.find(SubscriptionSchema, { id: { $in: page.map((row) => row.id) } }) : [];
  const byId = new Map(found.map((row) => [row.id, row]));
  return {
    subscriptions: page.map((row) => toSubscriptionView(byId.get(row.id)!)),
    hasMore,
    nextCursor,
  };
}

/** What checkout knows of a new subscription: who buys what, at which terms, from which order. */
export interface NewSubscription {
  /** Chosen by the caller when it must name the subscription first (the order that starts it does). */
  id?: string;
  storeId: string;
  livemode: boolean;
  productId: string;
  productName: string;
  planId: string;
  interval: Subscription['interval'];
  intervalCount: number;
  unitPriceMinor: number;
  quantity: number;
  discountMinor: number;
  couponId: string | null;
  currency: string;
  customerEmail: string;
  paymentMethod: string;
  firstOrderId: string;
}

/**
 * The row of a checkout's subscription, `incomplete` until its first payment (or trial) moves it;
 * a test subscription's clock starts at `now`. Written in the caller's transaction.
 */
export function newSubscriptionRow(ctx: ServiceContext, input: NewSubscription, now: Date): Subscription {
  const { storeId, id, ...fields } = input;
  return ctx.em.create(SubscriptionSchema, {
    ...fields,
    id: id ?? newId(),
    store: ctx.em.getReference(StoreSchema, storeId),
    status: 'incomplete',
    latestOrderNumber: null,
    anchor: now,
    currentPeriodStart: now,
    currentPeriodEnd: now,
    trialEnd: null,
    cancelAtPeriodEnd: false,
    pauseAtPeriodEnd: false,
    canceledAt: null,
    endedAt: null,
    pausedAt: null,
    resumesAt: null,
    pastDueAt: null,
    retries: 0,
    unpaidFrom: null,
    nextRetryAt: null,
    cancellationReason: null,
    cancellationComment: null,
    creditMinor: 0,
    pendingTerms: null,
    noticeFor: null,
    clockTime: input.livemode ? null : now,
    dueAt: null,
    leaseUntil: null,
    createdAt: now,
    updatedAt: now,
    version: 1,
  });
}

/**
 * Applies one move to a row the caller has locked in its transaction: the new state, the time
 * the next move falls due, and the move's events in the outbox (each with the subscription as it
 * is after the move), and its mail (but a failed payment's: the caller's, with its pay link).
 * Answers the move's result: its charge is the caller's to make.
 */
export async function applyMove<M extends MoveName>(
  ctx: ServiceContext,
  row: Subscription,
  name: M,
  now: Date,
  ...args: MoveArgs<M>
): Promise<MoveResult> {
  if (!ctx.em.isInTransaction())
    throw new Error(`subscription ${name}: the caller must hold the subscription's row lock in a transaction`);
  const result = move(stateOf(row), name, now, ...args);
  // The move runs at `now` (a test subscription's clock); the record of it (updatedAt, the
  // events' time) is when svc made it, so webhooks and the events list stay in real time.
  const wall = ctx.clock.now();
  writeState(row, result.next, wall);
  if (result.events.length) {
    const view = toSubscriptionView(row);
    for (const type of result.events)
      await recordEvent(ctx, {
        storeId: row.store.id,
        livemode: row.livemode,
        type,
        payload: { subscription: view },
        at: wall,
      });
  }
  // The buyer's mail, once per occasion, with the move. A failed payment's carries the link to pay,
  // which only the billing flow can make (a new checkout token): it records that one itself.
  if (result.mail && result.mail !== 'payment_failed')
    await recordSubscriptionMail(ctx, { subscription: row, kind: result.mail, now });
  return result;
}

/**
 * The subscription by id with its row lock (the billing engine's steps, the settlement's hook),
 * once per transaction (transaction.ts lockOnce); null when gone.
 */
export function lockSubscription(ctx: ServiceContext, subscriptionId: string): Promise<Subscription | null> {
  return lockOnce(ctx, `subscription:${subscriptionId}`, () => selectSubscriptionForUpdate(ctx.em, subscriptionId));
}

/**
 * Whether `order` pays what the subscription waits for: the period after the current one (a
 * renewal in flight), the unpaid period of a past-due one, or a paused one's resume.
 */
export function expectsCharge(row: Subscription, order: Pick<Order, 'periodStart' | 'billingReason'>): boolean {
  if (order.billingReason !== 'subscription_cycle' || !order.periodStart) return false;
  const start = order.periodStart.getTime();
  switch (row.status) {
    case 'trialing':
    case 'active':
      return start === row.currentPeriodEnd.getTime();
    case 'past_due':
      return start === row.unpaidFrom?.getTime();
    case 'paused':
      return true;
    default:
      return false;
  }
}

/**
 * A renewal order of the subscription was paid (the engine's charge, a dunning retry, the buyer by
 * the e-mailed link, the seller marking it paid): the subscription moves on to the period it paid
 * for, anchored to the old end. Nothing when the order is not what it waits for (paid after the
 * subscription ended: the seller may refund it). In the settlement's transaction, after the
 * order's row lock.
 */
export async function subscriptionPaid(ctx: ServiceContext, order: Order): Promise<void> {
  if (!order.subscriptionId) return;
  const row = await lockSubscription(ctx, order.subscriptionId);
  if (!row || !expectsCharge(row, order)) return;
  // The order's discount is the forever coupon's part plus the credit it spent.
  const couponPart = Math.min(row.discountMinor, order.subtotalMinor);
  const creditUsedMinor = Math.max(0, Math.min(row.creditMinor, order.discountMinor - couponPart));
  row.latestOrderNumber = order.number;
  row.leaseUntil = null;
  await applyMove(ctx, row, 'paid', subscriptionNow(ctx, row), {
    reason: 'subscription_cycle',
    amountMinor: order.priceMinor,
    creditUsedMinor,
    periodStart: order.periodStart!,
  });
}

/**
 * While the billing engine charges it (its lease), a subscription's own moves wait: the renewal
 * and a cancel are one or the other, never half of each.
 */
export function refuseWhileCharging(ctx: ServiceContext, row: Subscription): void {
  if (row.leaseUntil && row.leaseUntil > ctx.clock.now())
    throw new AppError(
      'invalid_transition',
      `This subscription is ${row.status.replace('_', ' ')} and a payment for it is being taken; try again in a minute.`,
    );
}

/** Runs `work` on the locked subscription in a transaction and answers it as the API shows it. */
async function withLocked(
  ctx: ServiceContext,
  input: TSubscriptionIdInput,
  work: (tx: ServiceContext, row: Subscription, now: Date) => Promise<unknown>,
): Promise<TSubscription> {
  return inTransaction(ctx, async (tx) => {
    const row = await findSubscription(tx, input, true);
    refuseWhileCharging(tx, row);
    await work(tx, row, subscriptionNow(tx, row));
    await tx.em.flush();
    return toSubscriptionView(row);
  });
}

/**
 * Cancel at the period end (default) or now. The merchant's and the seller's cancels are
 * `requested_by_merchant` unless they say otherwise; the buyer's own is `requested_by_customer`.
 */
export function cancelSubscription(
  ctx: ServiceContext,
  input: TCancelSubscriptionInput,
  requestedBy: 'requested_by_merchant' | 'requested_by_customer' = 'requested_by_merchant',
): Promise<TSubscription> {
  return withLocked(ctx, input, (tx, row, now) =>
    applyMove(tx, row, 'cancel', now, input.atPeriodEnd ?? true, input.reason ?? requestedBy),
  );
}

/**
 * Resume by hand. A scheduled cancel or pause is undone at once (answers false); a paused
 * subscription is made due to resume now (answers true: the caller charges it as the billing
 * engine does, flows/renew-subscription.ts). Anything else is 409 `invalid_transition`.
 */
export async function resumeOrScheduleResume(ctx: ServiceContext, input: TSubscriptionIdInput): Promise<boolean> {
  return inTransaction(ctx, async (tx) => {
    const row = await findSubscription(tx, input, true);
    refuseWhileCharging(tx, row);
    const now = subscriptionNow(tx, row);
    if (row.status !== 'paused') {
      await applyMove(tx, row, 'resume', now);
      // The buyer's reason went with the cancel it explained.
      if (!row.cancelAtPeriodEnd) row.cancellationComment = null;
      await tx.em.flush();
      return false;
    }
    // Due now: the step that runs it charges the period starting now (its start kept in `resumesAt`).
    writeState(row, { ...stateOf(row), resumesAt: now }, tx.clock.now());
    await tx.em.flush();
    return true;
  });
}

/** Pause from the current period's end, until `resumesAt` or a resume. */
export function pauseSubscription(ctx: ServiceContext, input: TPauseSubscriptionInput): Promise<TSubscription> {
  return withLocked(ctx, input, (tx, row, now) =>
    applyMove(tx, row, 'pause', now, input.resumesAt ? new Date(input.resumesAt) : null),
  );
}

/**
 * The first payment of a subscription's checkout was made (the order it was written with is paid):
 * its trial starts, or its first period. A test subscription's clock starts at the payment. Once:
 * a subscription no longer incomplete is left as it is. In the caller's transaction (the
 * settlement's, which holds the order's row lock).
 */
export async function startSubscription(
  ctx: ServiceContext,
  input: {
    subscriptionId: string;
    orderNumber: number;
    customerEmail: string;
    paymentMethod: string;
    trialDays: number;
    now: Date;
  },
): Promise<void> {
  const row = await ctx.em.findOne(
    SubscriptionSchema,
    { id: input.subscriptionId },
    { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
  );
  if (!row || row.status !== 'incomplete') return;
  row.customerEmail = input.customerEmail;
  row.paymentMethod = input.paymentMethod;
  row.latestOrderNumber = input.orderNumber;
  if (!row.livemode) row.clockTime = input.now;
  if (input.trialDays > 0) await applyMove(ctx, row, 'start_trial', input.now, input.trialDays);
  else await applyMove(ctx, row, 'activate', input.now);
}
