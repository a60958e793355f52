/**
 * Plans on products and recurring cart lines against the real database, without HTTP
 * (docs/decisions.md, "Plans"):
 * - a product with plans is recurring, priced by its first active plan; `[]` is one-time;
 * - an update matches plans by id, adds new ones, archives the ones left out (never deletes them),
 *   and refuses a period change and a plan of another product (a sold product's switch:
 *   flows/recurring-checkout.test.ts);
 * - a recurring license-key product refuses licenseValidityDays;
 * - a recurring cart line takes its plan (the first active by default), 1..100 seats, alone in
 *   its cart (its order: flows/recurring-checkout.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TCreateProductInput } from '@svc/schemas';
import { workerDatabaseUrl } from '../../../../../test/support/env.js';
import { createStore } from '../../../../../test/support/factories.js';
import { serviceContext } from '../../../../../test/support/in-process.js';
import { openOrm, type Orm } from '../../db/orm.js';
import { ManualClock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import { createCoupon, getCoupon, updateCoupon } from '../coupons/coupons.service.js';
import { ProductPlanSchema } from './catalog.entities.js';
import { createProduct, getProduct, publicProducts, updateProduct } from './catalog.service.js';
import { normaliseCart } from './cart.js';
import { StoreSchema } from '../stores/stores.entities.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 2 });
});
afterAll(() => orm?.close());

const ctxOn = () => serviceContext(orm, new ManualClock(Date.UTC(2026, 10, 28, 12, 0)));
const noTestMode = () => Promise.resolve(false);

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
    deliveryMethods: ['licenseKeys'],
    plans: monthlyAndYearly(),
    ...extra,
  });
}

describe('plans on products', () => {
  it('makes a recurring product priced by its first active plan, and keeps one-time products as they were', async () => {
    const store = await createStore(orm.em.fork());
    const product = await recurringProduct(store.id);
    expect(product.price).toBe(9);
    expect(product.plans).toEqual([
      { id: expect.any(String), interval: 'month', intervalCount: 1, price: 9, trialDays: 7, active: true },
      { id: expect.any(String), interval: 'year', intervalCount: 1, price: 90, trialDays: 0, active: true },
    ]);
    expect(product.plans[0]!.id).toMatch(/^[a-z][0-9a-z]{23}$/);
    expect(await getProduct(ctxOn(), { storeId: store.id, productId: product.id })).toEqual(product);

    const once = await createProduct(ctxOn(), {
      storeId: store.id,
      name: 'Once',
      price: 5,
      deliveryMethods: ['manualDelivery'],
    });
    expect(once.plans).toEqual([]);
    expect(once.price).toBe(5);
  });

  it('matches plans by id on update, adds new ones and archives the ones left out (never deleting them)', async () => {
    const store = await createStore(orm.em.fork());
    const product = await recurringProduct(store.id);
    const [monthly, yearly] = product.plans;
    const updated = await updateProduct(ctxOn(), {
      storeId: store.id,
      productId: product.id,
      plans: [
        { id: yearly!.id, interval: 'year', intervalCount: 1, price: 80, trialDays: 14, active: true },
        { interval: 'month', intervalCount: 3, price: 25, trialDays: 0, active: true },
      ],
    });
    expect(updated.price).toBe(80);
    expect(updated.plans).toEqual([
      { id: yearly!.id, interval: 'year', intervalCount: 1, price: 80, trialDays: 14, active: true },
      { id: expect.any(String), interval: 'month', intervalCount: 3, price: 25, trialDays: 0, active: true },
      { ...monthly!, active: false },
    ]);
    expect(await orm.em.fork().count(ProductPlanSchema, { product: product.id })).toBe(3);
    // The buyer's view shows the active plans only.
    const [shown] = (
      await publicProducts(ctxOn(), await orm.em.fork().findOneOrFail(StoreSchema, { id: store.id }))
    ).filter((p) => p.id === product.id);
    expect(shown!.plans.map((plan) => plan.id)).toEqual([yearly!.id, updated.plans[1]!.id]);
  });

  it("refuses a plan of another product, a changed period, and a recurring license-key product's validity", async () => {
    const store = await createStore(orm.em.fork());
    const product = await recurringProduct(store.id);
    const other = await recurringProduct(store.id, { name: 'Other' });
    const foreign = await appError(
      updateProduct(ctxOn(), {
        storeId: store.id,
        productId: product.id,
        plans: [{ ...other.plans[0]! }],
      }),
      'validation_failed',
    );
    expect(foreign.issues).toEqual([{ path: 'plans.0.id', message: 'No plan of this product has this id.' }]);
    await appError(
      updateProduct(ctxOn(), {
        storeId: store.id,
        productId: product.id,
        plans: [{ ...product.plans[0]!, interval: 'week' }],
      }),
      'validation_failed',
    );
    const validity = await appError(recurringProduct(store.id, { licenseValidityDays: 365 }), 'validation_failed');
    expect(validity.issues?.[0]?.path).toBe('licenseValidityDays');
    await appError(
      updateProduct(ctxOn(), { storeId: store.id, productId: product.id, licenseValidityDays: 30 }),
      'validation_failed',
    );
    // Nothing was half-written.
    expect((await getProduct(ctxOn(), { storeId: store.id, productId: product.id })).plans).toEqual(product.plans);
  });
});

describe('recurring cart lines', () => {
  it('takes the first active plan by default, or the plan named, and prices seats at the plan', async () => {
    const store = await createStore(orm.em.fork());
    const product = await recurringProduct(store.id, { deliveryMethods: ['manualDelivery'] });
    const byDefault = await normaliseCart(ctxOn(), store, [{ productId: product.id, quantity: 3 }], noTestMode);
    expect(byDefault.lines[0]).toMatchObject({ quantity: 3, unitPriceMinor: 900 });
    expect(byDefault.lines[0]!.plan?.id).toBe(product.plans[0]!.id);
    const yearly = await normaliseCart(
      ctxOn(),
      store,
      [{ productId: product.id, planId: product.plans[1]!.id, quantity: 1 }],
      noTestMode,
    );
    expect(yearly.lines[0]).toMatchObject({ unitPriceMinor: 9000 });
  });

  it('refuses a plan of another product, of a one-time product, an archived plan, 101 seats and a line beside another', async () => {
    const store = await createStore(orm.em.fork());
    const product = await recurringProduct(store.id, { deliveryMethods: ['manualDelivery'] });
    const other = await recurringProduct(store.id, { name: 'Other', deliveryMethods: ['manualDelivery'] });
    const once = await createProduct(ctxOn(), {
      storeId: store.id,
      name: 'Once',
      price: 5,
      deliveryMethods: ['manualDelivery'],
    });
    const cart = (lines: Parameters<typeof normaliseCart>[2]) => normaliseCart(ctxOn(), store, lines, noTestMode);
    const foreign = await appError(
      cart([{ productId: product.id, planId: other.plans[0]!.id, quantity: 1 }]),
      'validation_failed',
    );
    expect(foreign.issues).toEqual([
      { path: 'cart.0.planId', message: "This plan is not one of the product's plans." },
    ]);
    await appError(cart([{ productId: once.id, planId: product.plans[0]!.id, quantity: 1 }]), 'validation_failed');
    const seats = await appError(cart([{ productId: product.id, quantity: 101 }]), 'validation_failed');
    expect(seats.issues).toEqual([{ path: 'cart.0.quantity', message: 'A subscription has 1 to 100 seats.' }]);
    await appError(
      cart([
        { productId: product.id, quantity: 1 },
        { productId: once.id, quantity: 1 },
      ]),
      'recurring_alone',
    );
    await appError(
      cart([
        { productId: product.id, quantity: 1 },
        { productId: product.id, planId: product.plans[1]!.id, quantity: 1 },
      ]),
      'recurring_alone',
    );
    await updateProduct(ctxOn(), { storeId: store.id, productId: product.id, plans: [product.plans[1]!] });
    const archived = await appError(
      cart([{ productId: product.id, planId: product.plans[0]!.id, quantity: 1 }]),
      'validation_failed',
    );
    expect(archived.issues?.[0]?.message).toMatch(/no longer sold/);
  });
});

describe('coupon duration', () => {
  it('is once by default, and forever when the seller says so', async () => {
    const store = await createStore(orm.em.fork());
    const coupon = await createCoupon(ctxOn(), {
      storeId: store.id,
      code: `D${Date.now()}`,
      discountType: 'percent',
      discountValue: 10,
    });
    expect(coupon.duration).toBe('once');
    await updateCoupon(ctxOn(), { storeId: store.id, couponId: coupon.id, duration: 'forever' });
    expect((await getCoupon(ctxOn(), { storeId: store.id, couponId: coupon.id })).duration).toBe('forever');
  });
});
