/**
 * A recurring product's checkout against the real database, without HTTP (docs/decisions.md,
 * "Plans"): its order records the plan on its line and `billingReason: 'subscription_create'`
 * (a one-time product's `purchase`), and a product with orders no longer switches between
 * one-time and recurring (409).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TCreateProductInput } from '@svc/schemas';
import { workerDatabaseUrl } from '../../../../test/support/env.js';
import { createStore } from '../../../../test/support/factories.js';
import { serviceContext } from '../../../../test/support/in-process.js';
import { openOrm, type Orm } from '../db/orm.js';
import { ManualClock } from '../lib/clock.js';
import { AppError } from '../lib/errors.js';
import { createProduct, updateProduct } from '../modules/catalog/catalog.service.js';
import { OrderLineSchema, OrderSchema } from '../modules/orders/orders.entities.js';
import { SubscriptionSchema } from '../modules/subscriptions/subscriptions.entities.js';
import { getSubscription } from '../modules/subscriptions/subscriptions.service.js';
import { EventSchema } from '../modules/events/events.entities.js';
import { createCoupon } from '../modules/coupons/coupons.service.js';
import { createOrder } from './place-order.js';
import { settleOrder } from './settle-payment.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 2 });
});
afterAll(() => orm?.close());

const ctxOn = () => serviceContext(orm, new ManualClock(Date.UTC(2026, 10, 28, 12, 0)));
const buyer = { ip: '203.0.113.9', userAgent: 'test', country: 'DE' };

/** The AppError a call rejects with; fails the test when it resolves or throws anything else. */
async function appError(promise: Promise<unknown>, code: string): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).appCode).toBe(code);
  return error as AppError;
}

const monthlyAndYearly = (): NonNullable<TCreateProductInput['plans']> => [
  { interval: 'month', intervalCount: 1, price: 9, trialDays: 7, active: true },
  { interval: 'year', intervalCount: 1, price: 90, trialDays: 0, active: true },
];

async function recurringProduct(storeId: string, extra: Partial<TCreateProductInput> = {}) {
  return createProduct(ctxOn(), {
    storeId,
    name: 'Editor Pro',
    deliveryMethods: ['manualDelivery'],
    plans: monthlyAndYearly(),
    ...extra,
  });
}

describe('a recurring checkout', () => {
  it("records the plan on the order's line and the billing reason on the order", async () => {
    const store = await createStore(orm.em.fork());
    const product = await recurringProduct(store.id, { deliveryMethods: ['manualDelivery'] });
    const yearly = product.plans[1]!;
    const { order } = await createOrder(
      ctxOn(),
      {
        store: store.id,
        cart: [{ productId: product.id, planId: yearly.id, quantity: 2 }],
        email: 'b@example.test',
      },
      buyer,
    );
    expect(order).toMatchObject({ price: 180, billingReason: 'subscription_create' });
    // Its subscription is written with it, incomplete until the first payment.
    expect(order.subscriptionId).toEqual(expect.any(String));
    expect(await orm.em.fork().findOneOrFail(SubscriptionSchema, { id: order.subscriptionId! })).toMatchObject({
      status: 'incomplete',
      planId: yearly.id,
      interval: 'year',
      unitPriceMinor: 9000,
      quantity: 2,
      firstOrderId: order.id,
    });
    expect(order.lines).toEqual([
      {
        productId: product.id,
        productName: 'Editor Pro',
        quantity: 2,
        unitPrice: 90,
        plan: { id: yearly.id, interval: 'year', intervalCount: 1, trialDays: 0 },
      },
    ]);
    const em = orm.em.fork();
    expect(await em.findOneOrFail(OrderSchema, { id: order.id })).toMatchObject({
      billingReason: 'subscription_create',
      subscriptionId: order.subscriptionId,
    });
    expect(await em.findOneOrFail(OrderLineSchema, { order: order.id })).toMatchObject({
      planId: yearly.id,
      planInterval: 'year',
      planIntervalCount: 1,
      planTrialDays: 0,
      unitPriceMinor: 9000,
    });

    const once = await createProduct(ctxOn(), {
      storeId: store.id,
      name: 'Once',
      price: 5,
      deliveryMethods: ['manualDelivery'],
    });
    const bought = await createOrder(
      ctxOn(),
      { store: store.id, cart: [{ productId: once.id, quantity: 1 }], email: 'b@example.test' },
      buyer,
    );
    expect(bought.order).toMatchObject({ billingReason: 'purchase', subscriptionId: null });
    expect(bought.order.lines[0]!.plan).toBeNull();
  });
  it('switches a product without orders between one-time and recurring, and refuses it once sold (409)', async () => {
    const store = await createStore(orm.em.fork());
    const product = await recurringProduct(store.id, { deliveryMethods: ['manualDelivery'] });
    const once = await updateProduct(ctxOn(), { storeId: store.id, productId: product.id, plans: [], price: 12 });
    expect(once).toMatchObject({ plans: [], price: 12 });
    await createOrder(
      ctxOn(),
      { store: store.id, cart: [{ productId: product.id, quantity: 1 }], email: 'b@example.test' },
      buyer,
    );
    const error = await appError(
      updateProduct(ctxOn(), { storeId: store.id, productId: product.id, plans: monthlyAndYearly() }),
      'conflict',
    );
    expect(error.message).toMatch(/has orders/);
  });
});

describe("a subscription's first payment", () => {
  const DAY = 86_400_000;
  async function payOrder(orderId: string, at: Date) {
    const order = await orm.em.fork().findOneOrFail(OrderSchema, { id: orderId });
    return settleOrder(serviceContext(orm, new ManualClock(at)), {
      orderId,
      payment: { gateway: 'test', providerRef: null, amountMinor: order.priceMinor, currency: order.currency },
      now: at,
    });
  }
  const eventTypes = async (storeId: string) =>
    (await orm.em.fork().find(EventSchema, { store: storeId }, { orderBy: { seq: 'asc' } })).map((e) => e.type);

  it('without a trial: the order pays the plan, the subscription is active for one period from the payment', async () => {
    const store = await createStore(orm.em.fork());
    const product = await recurringProduct(store.id);
    const yearly = product.plans[1]!;
    const { order } = await createOrder(
      ctxOn(),
      { store: store.id, cart: [{ productId: product.id, planId: yearly.id, quantity: 1 }], email: 'y@example.test' },
      buyer,
    );
    const paidAt = new Date(Date.UTC(2026, 10, 28, 12, 5));
    expect(await payOrder(order.id, paidAt)).toBe('settled');
    const subscription = await getSubscription(ctxOn(), { storeId: store.id, subscriptionId: order.subscriptionId! });
    expect(subscription).toMatchObject({
      status: 'active',
      amount: 90,
      customerEmail: 'y@example.test',
      paymentMethod: 'test',
      currentPeriodStart: paidAt.toISOString(),
      currentPeriodEnd: new Date(Date.UTC(2027, 10, 28, 12, 5)).toISOString(),
      trialEnd: null,
      latestOrderId: order.orderId,
      clockTime: null,
    });
    // The subscription starts in the settlement's transaction, after the order is paid (a product
    // delivered by hand waits for the seller: no order.completed yet).
    expect(await eventTypes(store.id)).toEqual([
      'product.created',
      'order.created',
      'order.paid',
      'subscription.created',
    ]);
    // Paying again changes nothing (the settlement is once; so is the start).
    expect(await payOrder(order.id, new Date(paidAt.getTime() + DAY))).toBe('already_settled');
  });

  it('with a trial: the first payment is 0 and the first charge falls at the trial end', async () => {
    const store = await createStore(orm.em.fork());
    const product = await recurringProduct(store.id);
    const monthly = product.plans[0]!; // 7-day trial
    const { order } = await createOrder(
      ctxOn(),
      { store: store.id, cart: [{ productId: product.id, planId: monthly.id, quantity: 3 }], email: 't@example.test' },
      buyer,
    );
    expect(order).toMatchObject({ price: 0, billingReason: 'subscription_create' });
    expect(order.lines[0]).toMatchObject({ quantity: 3, unitPrice: 0 });
    const paidAt = new Date(Date.UTC(2026, 10, 28, 13, 0));
    await payOrder(order.id, paidAt);
    const subscription = await getSubscription(ctxOn(), { storeId: store.id, subscriptionId: order.subscriptionId! });
    expect(subscription).toMatchObject({
      status: 'trialing',
      unitPrice: 9,
      quantity: 3,
      amount: 27,
      trialEnd: new Date(paidAt.getTime() + 7 * DAY).toISOString(),
      currentPeriodEnd: new Date(paidAt.getTime() + 7 * DAY).toISOString(),
    });
  });

  it('a forever coupon takes its part off every payment; a once coupon off the first only', async () => {
    const store = await createStore(orm.em.fork());
    const product = await recurringProduct(store.id);
    const yearly = product.plans[1]!;
    const ctx = ctxOn();
    await createCoupon(ctx, {
      storeId: store.id,
      code: 'FOREVER10',
      discountType: 'percent',
      discountValue: 10,
      duration: 'forever',
    });
    await createCoupon(ctx, { storeId: store.id, code: 'ONCE10', discountType: 'percent', discountValue: 10 });
    const forever = await createOrder(
      ctx,
      {
        store: store.id,
        cart: [{ productId: product.id, planId: yearly.id, quantity: 1 }],
        email: 'f@example.test',
        coupon: 'FOREVER10',
      },
      buyer,
    );
    const once = await createOrder(
      ctx,
      {
        store: store.id,
        cart: [{ productId: product.id, planId: yearly.id, quantity: 1 }],
        email: 'o@example.test',
        coupon: 'ONCE10',
      },
      buyer,
    );
    expect(forever.order.price).toBe(81);
    expect(once.order.price).toBe(81);
    const subOf = (id: string) => getSubscription(ctx, { storeId: store.id, subscriptionId: id });
    expect((await subOf(forever.order.subscriptionId!)).amount).toBe(81);
    expect((await subOf(once.order.subscriptionId!)).amount).toBe(90);
    // In a trial, the forever coupon is worked out on the plan's price, not the trial's 0.
    const monthly = product.plans[0]!;
    const trial = await createOrder(
      ctx,
      {
        store: store.id,
        cart: [{ productId: product.id, planId: monthly.id, quantity: 1 }],
        email: 'tf@example.test',
        coupon: 'FOREVER10',
      },
      buyer,
    );
    expect(trial.order.price).toBe(0);
    expect((await subOf(trial.order.subscriptionId!)).amount).toBe(8.1);
  });
});
