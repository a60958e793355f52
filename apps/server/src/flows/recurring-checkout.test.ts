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
import { createOrder } from './place-order.js';

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
    expect(order).toMatchObject({ price: 180, subscriptionId: null, billingReason: 'subscription_create' });
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
      subscriptionId: null,
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
