/**
 * The billing engine's steps against the real database, without HTTP (docs/decisions.md, #39 The
 * billing engine): a test subscription's clock advanced through its renewals, its dunning and
 * its end; one order per period however often a step runs; the engine claiming live
 * subscriptions due now. Every test makes its own store, product and checkout; time comes from a
 * ManualClock (the wall) and each subscription's own clock.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TCreateProductInput } from '@svc/schemas';
import { workerDatabaseUrl } from '../../../../test/support/env.js';
import { createStore } from '../../../../test/support/factories.js';
import { serviceContext } from '../../../../test/support/in-process.js';
import { openOrm, type Orm } from '../db/orm.js';
import { ManualClock } from '../lib/clock.js';
import { AppError } from '../lib/errors.js';
import { keptMail } from '../modules/mail/outbox.js';
import { createProduct } from '../modules/catalog/catalog.service.js';
import { OrderSchema } from '../modules/orders/orders.entities.js';
import type { TestCard } from '../modules/payments/gateway.js';
import { TestGatewayChargeSchema } from '../modules/payments/payments.entities.js';
import type { ServiceContext } from '../modules/request/context.js';
import { SubscriptionSchema } from '../modules/subscriptions/subscriptions.entities.js';
import { cancelSubscription, getSubscription } from '../modules/subscriptions/subscriptions.service.js';
import { advanceSubscription } from './advance-subscription.js';
import { BillingEngine } from './billing-engine.js';
import { createOrder } from './place-order.js';
import { listOrders } from '../modules/orders/orders.service.js';
import {
  cancelSubscriptionNow,
  previewSubscriptionUpdate,
  resumeSubscription,
  runNextMove,
  updateSubscription,
} from './renew-subscription.js';
import { handleNotification } from './settle-payment.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 10 });
});
afterAll(() => orm?.close());

const T0 = Date.UTC(2027, 0, 15, 10, 0);
const DAY = 86_400_000;
const unique = () => randomBytes(6).toString('hex');
const buyer = { ip: '203.0.113.9', userAgent: 'test', country: 'DE', testMode: () => Promise.resolve(true) };

async function appError(promise: Promise<unknown>, code: string): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).appCode).toBe(code);
  return error as AppError;
}

/**
 * A subscription checked out and paid on the test gateway's page with `card`: a monthly plan at
 * 9.00 (with `trialDays`), in test mode unless `livemode`.
 */
async function subscribed(
  card: TestCard,
  options: { trialDays?: number; livemode?: boolean; start?: number; quantity?: number } = {},
) {
  const clock = new ManualClock(options.start ?? T0);
  const livemode = options.livemode ?? false;
  const ctx: ServiceContext = { ...serviceContext(orm, clock), livemode };
  const store = await createStore(orm.em.fork());
  const plans: NonNullable<TCreateProductInput['plans']> = [
    { interval: 'month', intervalCount: 1, price: 9, trialDays: options.trialDays ?? 0, active: true },
    { interval: 'year', intervalCount: 1, price: 90, trialDays: 0, active: true },
  ];
  const product = await createProduct(ctx, {
    storeId: store.id,
    name: 'Editor Pro',
    deliveryMethods: ['deliveryInstructions'],
    deliveryInstructions: 'Sign in with your e-mail.',
    plans,
  });
  const email = `buyer-${unique()}@example.test`;
  const { order } = await createOrder(
    { ...serviceContext(orm, clock), livemode },
    { store: store.id, cart: [{ productId: product.id, quantity: options.quantity ?? 1 }], email },
    buyer,
  );
  const notification = {
    eventId: `page_${unique()}`,
    kind: 'paid' as const,
    orderId: order.id,
    amountMinor: Math.round(order.price * 100),
    currency: 'USD',
    providerRef: `test:${unique()}`,
    savedMethod: { gateway: 'test' as const, customerRef: null, methodRef: card },
  };
  expect(await handleNotification(ctx, { gateway: 'test', notification, now: clock.now() })).toBe('settled');
  const input = { storeId: store.id, subscriptionId: order.subscriptionId! };
  return { clock, ctx, store, product, order, input, email };
}

const ordersOf = (subscriptionId: string) =>
  orm.em.fork().find(OrderSchema, { subscriptionId }, { orderBy: { number: 'asc' } });
const at = (ms: number) => new Date(ms).toISOString();
/** The subjects of the kept mail to `to`, sorted (the wall clock stands still here: no order by time). */
const mailTo = async (ctx: ServiceContext, to: string) =>
  (await keptMail({ ...ctx, em: orm.em.fork() }, { to })).sort((a, b) => a.subject.localeCompare(b.subject));

describe("a test subscription's clock", () => {
  it('renews each month on the saved card, anchored to the first payment, one order and one charge a period', async () => {
    const sale = await subscribed('succeeds');
    const first = await getSubscription(sale.ctx, sale.input);
    expect(first).toMatchObject({ status: 'active', clockTime: at(T0), currentPeriodStart: at(T0) });
    expect(first.currentPeriodEnd).toBe(at(Date.UTC(2027, 1, 15, 10, 0)));

    const result = await advanceSubscription(sale.ctx, { ...sale.input, to: at(Date.UTC(2027, 3, 20)) });
    // February, March and April renewed; each a paid renewal order at the subscription's price.
    expect(result.orders.map((o) => [o.billingReason, o.status, o.price])).toEqual([
      ['subscription_cycle', 'completed', 9],
      ['subscription_cycle', 'completed', 9],
      ['subscription_cycle', 'completed', 9],
    ]);
    expect(result.events.filter((type) => type === 'subscription.renewed')).toHaveLength(3);
    expect(result.events.filter((type) => type === 'order.paid')).toHaveLength(3);
    expect(result.events.indexOf('order.created')).toBeLessThan(result.events.indexOf('order.paid'));
    expect(result.subscription).toMatchObject({
      status: 'active',
      clockTime: at(Date.UTC(2027, 3, 20)),
      currentPeriodStart: at(Date.UTC(2027, 3, 15, 10, 0)),
      currentPeriodEnd: at(Date.UTC(2027, 4, 15, 10, 0)),
      latestOrderId: result.orders[2]!.orderId,
    });
    const charges = await orm.em.fork().find(TestGatewayChargeSchema, { livemode: false, amountMinor: 900 });
    const mine = charges.filter((c) => c.idempotencyKey.includes(sale.order.subscriptionId!));
    expect(mine).toHaveLength(3);
    expect(mine.every((c) => c.status === 'succeeded')).toBe(true);
    // Every step again changes nothing: nothing is due before the clock.
    expect(await runNextMove(sale.ctx, sale.order.subscriptionId!, { until: new Date(Date.UTC(2027, 3, 20)) })).toBe(
      'idle',
    );
    expect(await ordersOf(sale.order.subscriptionId!)).toHaveLength(4);
  });

  it('dunning: past due after a declined renewal, retries at 1, 3, 5 and 7 days, then canceled for payment_failed', async () => {
    const sale = await subscribed('declines_renewals');
    const renewal = Date.UTC(2027, 1, 15, 10, 0);
    const pastDue = await advanceSubscription(sale.ctx, { ...sale.input, to: at(renewal + DAY / 2) });
    expect(pastDue.subscription).toMatchObject({ status: 'past_due', pastDueAt: at(renewal) });
    expect(pastDue.events).toEqual(['order.created', 'subscription.past_due']);
    expect(pastDue.orders).toMatchObject([{ status: 'pending', billingReason: 'subscription_cycle' }]);
    // The buyer is told, once, with a link to pay the renewal order (kept: a test subscription's mail never leaves).
    const failedMail = await mailTo(sale.ctx, sale.email);
    expect(failedMail.map((m) => m.subject)).toEqual([
      'Payment failed for your Editor Pro subscription — Test Store',
      expect.stringMatching(/^Your receipt from Test Store/),
    ]);
    expect(failedMail[0]!.text).toContain(`/checkout/${pastDue.orders[0]!.id}?token=`);

    // Retries on days 1, 4 and 9 fail; still past due, still the one order.
    const still = await advanceSubscription(sale.ctx, { ...sale.input, to: at(renewal + 10 * DAY) });
    expect(still.subscription.status).toBe('past_due');
    expect(still.orders).toEqual([]);
    expect(await ordersOf(sale.order.subscriptionId!)).toHaveLength(2);

    // The fourth retry (day 16) ends it.
    const ended = await advanceSubscription(sale.ctx, { ...sale.input, to: at(renewal + 17 * DAY) });
    expect(ended.subscription).toMatchObject({
      status: 'canceled',
      cancellationReason: 'payment_failed',
      endedAt: at(renewal + 16 * DAY),
    });
    expect(ended.events).toEqual(['subscription.ended']);
    expect((await mailTo(sale.ctx, sale.email)).map((m) => m.subject)).toEqual([
      'Payment failed for your Editor Pro subscription — Test Store',
      'Your Editor Pro subscription has ended — Test Store',
      expect.stringMatching(/^Your receipt from Test Store/),
    ]);
    // The unpaid period's order is no longer payable.
    expect((await ordersOf(sale.order.subscriptionId!)).map((o) => o.status)).toEqual(['completed', 'expired']);
    const keys = (await orm.em.fork().find(TestGatewayChargeSchema, { livemode: false }))
      .filter((c) => c.idempotencyKey.includes(sale.order.subscriptionId!))
      .map((c) => c.idempotencyKey.split('_').at(-1));
    expect(keys.sort()).toEqual(['0', '1', '2', '3', '4']);
  });

  it('a past-due subscription canceled ends now, and its unpaid renewal order is no longer payable', async () => {
    const sale = await subscribed('declines_renewals');
    await advanceSubscription(sale.ctx, { ...sale.input, to: at(Date.UTC(2027, 1, 16)) });
    const canceled = await cancelSubscriptionNow(sale.ctx, { ...sale.input, atPeriodEnd: true });
    expect(canceled).toMatchObject({ status: 'canceled', cancellationReason: 'requested_by_merchant' });
    expect((await ordersOf(sale.order.subscriptionId!)).map((o) => o.status)).toEqual(['completed', 'expired']);
    // Nothing is due any more: no retry charges a canceled subscription.
    const later = await advanceSubscription(sale.ctx, { ...sale.input, to: at(Date.UTC(2027, 3, 1)) });
    expect(later).toMatchObject({ orders: [], events: [] });
  });

  it('a trial ends in the first charge; a scheduled cancel ends it at the period end', async () => {
    const sale = await subscribed('succeeds', { trialDays: 7 });
    expect(sale.order.price).toBe(0);
    const trial = await getSubscription(sale.ctx, sale.input);
    expect(trial).toMatchObject({ status: 'trialing', trialEnd: at(T0 + 7 * DAY) });
    const paid = await advanceSubscription(sale.ctx, { ...sale.input, to: at(T0 + 8 * DAY) });
    expect(paid.events).toEqual([
      'subscription.trial_will_end',
      'order.created',
      'order.paid',
      'subscription.renewed',
      'order.completed',
    ]);
    expect(paid.subscription).toMatchObject({ status: 'active', currentPeriodStart: at(T0 + 7 * DAY) });
    // The trial's notice, then the first charge's receipt (a renewal's wording).
    expect((await mailTo(sale.ctx, sale.email)).map((m) => m.subject)).toEqual([
      'Your Editor Pro subscription from Test Store renewed — ORD-' + paid.orders[0]!.orderId.slice(4),
      'Your Editor Pro trial ends on 22 January 2027 — Test Store',
      expect.stringMatching(/^Your receipt from Test Store/),
    ]);

    await cancelSubscription(sale.ctx, { ...sale.input, atPeriodEnd: true });
    const ended = await advanceSubscription(sale.ctx, { ...sale.input, to: at(T0 + 60 * DAY) });
    expect(ended.events).toEqual(['subscription.ended']);
    expect(ended.subscription).toMatchObject({ status: 'canceled', endedAt: paid.subscription.currentPeriodEnd });
    expect(ended.orders).toEqual([]);
  });

  it('refuses going backwards, more than 2 years, and a live key', async () => {
    const sale = await subscribed('succeeds');
    await appError(advanceSubscription(sale.ctx, { ...sale.input, to: at(T0 - 1000) }), 'validation_failed');
    await appError(advanceSubscription(sale.ctx, { ...sale.input, to: at(T0 + 732 * DAY) }), 'validation_failed');
    await appError(
      advanceSubscription({ ...sale.ctx, livemode: true }, { ...sale.input, to: at(T0 + DAY) }),
      'test_key_required',
    );
    expect((await getSubscription(sale.ctx, sale.input)).clockTime).toBe(at(T0));
  });

  it('pause at the period end, resume by hand: charged at once, a new period from then', async () => {
    const sale = await subscribed('succeeds');
    const { pauseSubscription } = await import('../modules/subscriptions/subscriptions.service.js');
    await pauseSubscription(sale.ctx, sale.input);
    const paused = await advanceSubscription(sale.ctx, { ...sale.input, to: at(T0 + 40 * DAY) });
    expect(paused.subscription).toMatchObject({ status: 'paused' });
    expect(paused.events).toEqual(['subscription.paused']);
    const resumed = await resumeSubscription(sale.ctx, sale.input);
    expect(resumed).toMatchObject({ status: 'active', currentPeriodStart: at(T0 + 40 * DAY) });
    expect(await ordersOf(sale.order.subscriptionId!)).toHaveLength(2);
    await appError(resumeSubscription(sale.ctx, sale.input), 'invalid_transition');
  });
});

describe('changing the plan or the seats', () => {
  // April 2027 has 30 days: the monthly period from 1 April 10:00 runs to 1 May 10:00.
  const APRIL = Date.UTC(2027, 3, 1, 10, 0);

  it('upgrade monthly to yearly on day 10 of 30: 6.00 credited, 90.00 charged, one 84.00 order, a year from now', async () => {
    const sale = await subscribed('succeeds', { start: APRIL });
    const yearly = sale.product.plans[1]!;
    await advanceSubscription(sale.ctx, { ...sale.input, to: at(APRIL + 10 * DAY) });
    const changed = await updateSubscription(sale.ctx, { ...sale.input, planId: yearly.id });
    // Unused: 20 of 30 days of 9.00 = 6.00; the yearly plan starts now at 90.00; 90.00 - 6.00 = 84.00.
    expect(changed).toMatchObject({
      status: 'active',
      planId: yearly.id,
      interval: 'year',
      amount: 90,
      creditBalance: 0,
      currentPeriodStart: at(APRIL + 10 * DAY),
      currentPeriodEnd: at(Date.UTC(2028, 3, 11, 10, 0)),
    });
    const orders = await ordersOf(sale.order.subscriptionId!);
    expect(orders.map((o) => [o.billingReason, o.status, o.priceMinor])).toEqual([
      ['subscription_create', 'completed', 900],
      ['subscription_update', 'completed', 8400],
    ]);
  });

  it('downgrade 3 seats to 1 on day 10 of 30: a 12.00 credit, spent by the next renewals', async () => {
    const sale = await subscribed('succeeds', { start: APRIL, quantity: 3 });
    await advanceSubscription(sale.ctx, { ...sale.input, to: at(APRIL + 10 * DAY) });
    // Unused: 20/30 of 27.00 = 18.00 credited; 20/30 of 9.00 = 6.00 for the rest; net 12.00 credit.
    const changed = await updateSubscription(sale.ctx, { ...sale.input, quantity: 1 });
    expect(changed).toMatchObject({ quantity: 1, amount: 9, creditBalance: 12 });
    expect(await ordersOf(sale.order.subscriptionId!)).toHaveLength(1);
    // 1 May: 9.00 paid from the credit (3.00 left); 1 June: 6.00 charged.
    const may = await advanceSubscription(sale.ctx, { ...sale.input, to: at(Date.UTC(2027, 4, 2)) });
    expect(may.orders.map((o) => [o.price, o.discount, o.status])).toEqual([[0, 9, 'completed']]);
    expect(may.subscription).toMatchObject({ creditBalance: 3, currentPeriodStart: at(Date.UTC(2027, 4, 1, 10, 0)) });
    const june = await advanceSubscription(sale.ctx, { ...sale.input, to: at(Date.UTC(2027, 5, 2)) });
    expect(june.orders.map((o) => [o.price, o.discount, o.status])).toEqual([[6, 3, 'completed']]);
    expect(june.subscription).toMatchObject({ creditBalance: 0 });
  });

  it('without proration waits for the renewal; a declined difference changes nothing; bad plans are 400', async () => {
    const sale = await subscribed('succeeds', { start: APRIL });
    const yearly = sale.product.plans[1]!;
    const pending = await updateSubscription(sale.ctx, { ...sale.input, planId: yearly.id, prorate: false });
    expect(pending).toMatchObject({
      planId: sale.product.plans[0]!.id,
      pendingUpdate: { planId: yearly.id, amount: 90 },
    });
    const renewed = await advanceSubscription(sale.ctx, { ...sale.input, to: at(Date.UTC(2027, 4, 2)) });
    expect(renewed.orders.map((o) => o.price)).toEqual([90]);
    expect(renewed.subscription).toMatchObject({ interval: 'year', pendingUpdate: null });

    const declining = await subscribed('declines_renewals', { start: APRIL });
    await appError(
      updateSubscription(declining.ctx, { ...declining.input, planId: declining.product.plans[1]!.id }),
      'payment_failed',
    );
    expect(await getSubscription(declining.ctx, declining.input)).toMatchObject({ interval: 'month', amount: 9 });
    expect(
      (await orm.em.fork().findOneOrFail(SubscriptionSchema, { id: declining.order.subscriptionId! })).leaseUntil,
    ).toBeNull();
    expect((await ordersOf(declining.order.subscriptionId!)).map((o) => o.status)).toEqual(['completed', 'expired']);
    await appError(
      updateSubscription(declining.ctx, { ...declining.input, planId: sale.product.plans[1]!.id }),
      'validation_failed',
    );
    await appError(updateSubscription(declining.ctx, declining.input), 'validation_failed');
  });
});

describe('previewing a change (subscriptions.previewUpdate)', () => {
  const APRIL = Date.UTC(2027, 3, 1, 10, 0);
  // An odd moment, so the prorated shares have cents to round: day 7, 03:17:11 later.
  const ODD = APRIL + 7 * DAY + 3 * 3_600_000 + 17 * 60_000 + 11_000;

  it('answers what the change then charges, to the cent, and changes nothing itself', async () => {
    const sale = await subscribed('succeeds', { start: APRIL, quantity: 2 });
    const yearly = sale.product.plans[1]!;
    await advanceSubscription(sale.ctx, { ...sale.input, to: at(ODD) });
    const before = await getSubscription(sale.ctx, sale.input);

    const preview = await previewSubscriptionUpdate(sale.ctx, { ...sale.input, planId: yearly.id, quantity: 3 });
    expect(await getSubscription(sale.ctx, sale.input)).toEqual(before);
    expect(await ordersOf(sale.order.subscriptionId!)).toHaveLength(1);

    const changed = await updateSubscription(sale.ctx, { ...sale.input, planId: yearly.id, quantity: 3 });
    const orders = await ordersOf(sale.order.subscriptionId!);
    const charged = orders.find((o) => o.billingReason === 'subscription_update')!;
    expect(preview.amountDue).toBeGreaterThan(0);
    expect(Math.round(preview.amountDue * 100)).toBe(charged.priceMinor);
    expect(preview).toEqual({
      planId: yearly.id,
      interval: 'year',
      intervalCount: 1,
      quantity: 3,
      amountDue: preview.amountDue,
      creditBalance: changed.creditBalance,
      amount: changed.amount,
      currency: 'USD',
      currentPeriodEnd: changed.currentPeriodEnd,
      nextChargeAt: changed.currentPeriodEnd,
    });

    // The subscription's orders, by the list's subscriptionId filter: both (placed at the same
    // instant here, the wall clock standing still, so in no particular order between them).
    const listed = await listOrders(sale.ctx, { storeId: sale.store.id, subscriptionId: sale.order.subscriptionId! });
    expect(listed.orders.map((o) => [o.billingReason, o.price]).sort()).toEqual([
      ['subscription_create', 18],
      ['subscription_update', preview.amountDue],
    ]);
  });

  it('a downgrade previews its credit as the change then keeps it; refused moves are refused alike', async () => {
    const sale = await subscribed('succeeds', { start: APRIL, quantity: 3 });
    await advanceSubscription(sale.ctx, { ...sale.input, to: at(ODD) });
    const preview = await previewSubscriptionUpdate(sale.ctx, { ...sale.input, quantity: 1 });
    const changed = await updateSubscription(sale.ctx, { ...sale.input, quantity: 1 });
    expect(preview).toMatchObject({ amountDue: 0, amount: 9, creditBalance: changed.creditBalance });
    expect(changed.creditBalance).toBeGreaterThan(0);
    expect(await ordersOf(sale.order.subscriptionId!)).toHaveLength(1);

    await appError(previewSubscriptionUpdate(sale.ctx, sale.input), 'validation_failed');
    const other = await subscribed('succeeds', { start: APRIL });
    await appError(
      previewSubscriptionUpdate(sale.ctx, { ...sale.input, planId: other.product.plans[1]!.id }),
      'validation_failed',
    );
    await appError(previewSubscriptionUpdate(sale.ctx, { ...other.input, storeId: sale.store.id }), 'not_found');
    await cancelSubscriptionNow(sale.ctx, { ...sale.input, atPeriodEnd: false });
    await appError(previewSubscriptionUpdate(sale.ctx, { ...sale.input, quantity: 2 }), 'invalid_transition');
  });
});

describe('the billing engine', () => {
  it('a cancel racing a charge in flight waits for it (409), and no other step takes the leased subscription', async () => {
    const sale = await subscribed('succeeds', { livemode: true });
    const id = sale.order.subscriptionId!;
    sale.clock.set(T0 + 32 * DAY);
    // A step's charge in flight: the subscription is leased until its outcome is recorded.
    const em = orm.em.fork();
    const row = await em.findOneOrFail(SubscriptionSchema, { id });
    row.leaseUntil = new Date(T0 + 32 * DAY + 30_000);
    await em.flush();
    const refused = await appError(
      cancelSubscriptionNow(sale.ctx, { ...sale.input, atPeriodEnd: false }),
      'invalid_transition',
    );
    expect(refused.message).toMatch(/payment for it is being taken/);
    expect(await runNextMove(sale.ctx, id)).toBe('idle');
    expect(await ordersOf(id)).toHaveLength(1);
    // Its lease over (the step that held it died), the renewal runs once, then the cancel applies.
    sale.clock.set(T0 + 32 * DAY + 60_000);
    expect(await runNextMove(sale.ctx, id)).toBe('moved');
    expect(await cancelSubscriptionNow(sale.ctx, { ...sale.input, atPeriodEnd: false })).toMatchObject({
      status: 'canceled',
    });
    expect((await ordersOf(id)).map((o) => [o.billingReason, o.status])).toEqual([
      ['subscription_create', 'completed'],
      ['subscription_cycle', 'completed'],
    ]);
  });

  it('leaves what a claim has not started by its lease to the next claim', async () => {
    const sale = await subscribed('succeeds', { livemode: true });
    const id = sale.order.subscriptionId!;
    const wall = T0 + 32 * DAY;
    sale.clock.set(wall);
    const leaseMs = sale.ctx.deps.config.billingLeaseMs;
    // The claim is made at `wall`; by the time a lane would start on it, its lease is over.
    let reads = 0;
    const slow = { now: () => new Date(reads++ === 0 ? wall : wall + leaseMs) };
    const pass = await new BillingEngine({ ...sale.ctx.deps, clock: slow }, { batch: 1000 }).runOnce();
    expect(pass.claimed).toBeGreaterThanOrEqual(1);
    expect(await ordersOf(id)).toHaveLength(1);
    // Its lease over, the next claim renews it, once.
    sale.clock.set(wall + leaseMs + 1);
    expect((await new BillingEngine(sale.ctx.deps, { batch: 1000 }).runOnce()).failed).toBe(0);
    expect((await ordersOf(id)).map((o) => [o.billingReason, o.status])).toEqual([
      ['subscription_create', 'completed'],
      ['subscription_cycle', 'completed'],
    ]);
  });

  it('claims a live subscription due now and renews it once, whatever runs it again', async () => {
    const sale = await subscribed('succeeds', { livemode: true });
    const id = sale.order.subscriptionId!;
    // The period is over on the wall clock.
    sale.clock.set(T0 + 32 * DAY);
    const engine = new BillingEngine(sale.ctx.deps, { batch: 1000 });
    const pass = await engine.runOnce();
    expect(pass.failed).toBe(0);
    const row = await orm.em.fork().findOneOrFail(SubscriptionSchema, { id });
    expect(row).toMatchObject({ status: 'active', leaseUntil: null });
    expect(row.currentPeriodStart.toISOString()).toBe(at(Date.UTC(2027, 1, 15, 10, 0)));
    expect(await runNextMove(sale.ctx, id)).toBe('idle');
    const orders = await ordersOf(id);
    expect(orders.map((o) => [o.billingReason, o.status])).toEqual([
      ['subscription_create', 'completed'],
      ['subscription_cycle', 'completed'],
    ]);
  });
});
