/**
 * Coupon rules against the real database, without HTTP: a store's coupons are its own, codes are
 * unique per store whatever their case, discounts are computed in integer minor units (never
 * above what the coupon may discount), the buyer's check says why a code does not apply, and
 * concurrent orders never take more uses than the coupon has. Every test makes its own stores.
 */
import { randomBytes } from 'node:crypto';
import type { TCouponValidation } from '@svc/schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../../test/support/env.js';
import { createStore } from '../../../../../test/support/factories.js';
import { serviceContext, contextOn } from '../../../../../test/support/in-process.js';
import { openOrm, type Orm } from '../../db/orm.js';
import { ManualClock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { ServiceContext } from '../request/context.js';
import { createProduct, deleteProduct } from '../catalog/catalog.service.js';
import { CouponSchema } from './coupons.entities.js';
import {
  claimCouponUse,
  couponRefusalText,
  createCoupon,
  deleteCoupon,
  getCoupon,
  listCoupons,
  updateCoupon,
  validateCoupon,
} from './coupons.service.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 2 });
});
afterAll(() => orm?.close());

const START = Date.UTC(2026, 3, 1, 12, 0);
const clockAtStart = () => new ManualClock(START);
const ctxOn = (clock = clockAtStart()): ServiceContext => serviceContext(orm, clock);
const uniqueCode = (prefix = 'SAVE') => `${prefix}${randomBytes(4).toString('hex').toUpperCase()}`;

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

async function productIn(ctx: ServiceContext, storeId: string, price: number): Promise<string> {
  return (await createProduct(ctx, { storeId, name: `P ${price}`, price, deliveryMethods: ['manualDelivery'] })).id;
}

const storedCoupon = (id: string) => orm.em.fork().findOneOrFail(CouponSchema, { id });

describe('coupon management stays inside one store', () => {
  it('creates, reads, lists, changes and deletes a coupon of the store', async () => {
    const clock = clockAtStart();
    const store = await createStore(orm.em.fork());
    const other = await createStore(orm.em.fork());
    const code = uniqueCode();
    const created = await createCoupon(ctxOn(clock), {
      storeId: store.id,
      code,
      discountType: 'percent',
      discountValue: 15,
      maxUses: 10,
    });
    expect(created).toMatchObject({
      storeId: store.id,
      code,
      discountType: 'percent',
      discountValue: 15,
      maxUses: 10,
      uses: 0,
      active: true,
      minAmount: null,
    });
    expect(created.createdAt).toBe(new Date(START).toISOString());

    expect(await getCoupon(ctxOn(), { storeId: store.id, couponId: created.id })).toEqual(created);
    expect(await listCoupons(ctxOn(), { storeId: store.id })).toEqual([created]);
    expect(await listCoupons(ctxOn(), { storeId: other.id })).toEqual([]);

    clock.advance(5_000);
    const changed = await updateCoupon(ctxOn(clock), {
      storeId: store.id,
      couponId: created.id,
      discountValue: 20,
      active: false,
    });
    expect(changed).toMatchObject({ discountValue: 20, active: false, code });
    expect(changed.updatedAt).toBe(new Date(START + 5_000).toISOString());

    await deleteCoupon(ctxOn(), { storeId: store.id, couponId: created.id });
    await appError(getCoupon(ctxOn(), { storeId: store.id, couponId: created.id }), 'not_found');
    expect(await listCoupons(ctxOn(), { storeId: store.id })).toEqual([]);
  });

  it("answers not_found for another store's coupon on get, update and delete, and leaves it alone", async () => {
    const store = await createStore(orm.em.fork());
    const other = await createStore(orm.em.fork());
    const coupon = await createCoupon(ctxOn(), {
      storeId: store.id,
      code: uniqueCode(),
      discountType: 'fixed',
      discountValue: 5,
    });
    const foreign = { storeId: other.id, couponId: coupon.id };

    await appError(getCoupon(ctxOn(), foreign), 'not_found');
    await appError(updateCoupon(ctxOn(), { ...foreign, discountValue: 1, active: false }), 'not_found');
    await appError(deleteCoupon(ctxOn(), foreign), 'not_found');
    await appError(getCoupon(ctxOn(), { storeId: store.id, couponId: newId() }), 'not_found');

    expect(await getCoupon(ctxOn(), { storeId: store.id, couponId: coupon.id })).toEqual(coupon);
  });
});

describe('coupon codes', () => {
  it('are unique per store whatever their case, and the same code may live in two stores', async () => {
    const store = await createStore(orm.em.fork());
    const other = await createStore(orm.em.fork());
    const code = uniqueCode('Spring');
    await createCoupon(ctxOn(), { storeId: store.id, code, discountType: 'percent', discountValue: 10 });

    await appError(
      createCoupon(ctxOn(), { storeId: store.id, code: code.toUpperCase(), discountType: 'percent', discountValue: 5 }),
      'conflict',
    );
    await appError(
      createCoupon(ctxOn(), { storeId: store.id, code: code.toLowerCase(), discountType: 'fixed', discountValue: 5 }),
      'conflict',
    );
    expect(await listCoupons(ctxOn(), { storeId: store.id })).toHaveLength(1);

    const elsewhere = await createCoupon(ctxOn(), {
      storeId: other.id,
      code: code.toLowerCase(),
      discountType: 'percent',
      discountValue: 10,
    });
    expect(elsewhere.storeId).toBe(other.id);
  });

  it('refuse a rename onto another coupon of the store, but allow re-casing its own code', async () => {
    const store = await createStore(orm.em.fork());
    const taken = uniqueCode();
    await createCoupon(ctxOn(), { storeId: store.id, code: taken, discountType: 'percent', discountValue: 10 });
    const second = await createCoupon(ctxOn(), {
      storeId: store.id,
      code: uniqueCode(),
      discountType: 'percent',
      discountValue: 10,
    });

    await appError(
      updateCoupon(ctxOn(), { storeId: store.id, couponId: second.id, code: taken.toLowerCase() }),
      'conflict',
    );
    expect((await getCoupon(ctxOn(), { storeId: store.id, couponId: second.id })).code).toBe(second.code);

    const recased = await updateCoupon(ctxOn(), {
      storeId: store.id,
      couponId: second.id,
      code: second.code.toLowerCase(),
    });
    expect(recased.code).toBe(second.code.toLowerCase());
  });

  it('treat _ and % in what is typed as characters, not pattern wildcards', async () => {
    const store = await createStore(orm.em.fork());
    const suffix = randomBytes(3).toString('hex').toUpperCase();
    await createCoupon(ctxOn(), {
      storeId: store.id,
      code: `SAVEX${suffix}`,
      discountType: 'percent',
      discountValue: 10,
    });

    // The buyer's code is free text: a wildcard must not find (and so reveal) other codes.
    for (const code of [`SAVE_${suffix}`, '%', `SAVE%`, '_%']) {
      expect(await validateCoupon(ctxOn(), { storeId: store.id, code })).toMatchObject({
        valid: false,
        discountType: null,
      });
    }
    const created = await createCoupon(ctxOn(), {
      storeId: store.id,
      code: `SAVE_${suffix}`,
      discountType: 'percent',
      discountValue: 20,
    });
    expect(created.code).toBe(`SAVE_${suffix}`);
    expect(
      (await validateCoupon(ctxOn(), { storeId: store.id, code: `save_${suffix.toLowerCase()}` })).discountValue,
    ).toBe(20);
    expect(
      (await validateCoupon(ctxOn(), { storeId: store.id, code: `savex${suffix.toLowerCase()}` })).discountValue,
    ).toBe(10);
  });
});

describe('discount values', () => {
  it('refuses percent values outside 1..100 or not whole, and fixed values at or below zero or finer than the currency', async () => {
    const usd = await createStore(orm.em.fork());
    const jpy = await createStore(orm.em.fork(), { currency: 'JPY' });
    const bad: Array<{ storeId: string; discountType: 'percent' | 'fixed'; discountValue: number }> = [
      { storeId: usd.id, discountType: 'percent', discountValue: 0 },
      { storeId: usd.id, discountType: 'percent', discountValue: 101 },
      { storeId: usd.id, discountType: 'percent', discountValue: 12.5 },
      { storeId: usd.id, discountType: 'percent', discountValue: -10 },
      { storeId: usd.id, discountType: 'fixed', discountValue: 0 },
      { storeId: usd.id, discountType: 'fixed', discountValue: -1 },
      { storeId: usd.id, discountType: 'fixed', discountValue: 9.999 },
      { storeId: jpy.id, discountType: 'fixed', discountValue: 9.5 },
    ];
    for (const input of bad) {
      const error = await appError(createCoupon(ctxOn(), { ...input, code: uniqueCode() }), 'validation_failed');
      expect(error.issues?.map((issue) => issue.path)).toEqual(['discountValue']);
    }
    const minimum = await appError(
      createCoupon(ctxOn(), {
        storeId: usd.id,
        code: uniqueCode(),
        discountType: 'percent',
        discountValue: 10,
        minAmount: 1.001,
      }),
      'validation_failed',
    );
    expect(minimum.issues?.map((issue) => issue.path)).toEqual(['minAmount']);
    expect(await listCoupons(ctxOn(), { storeId: usd.id })).toEqual([]);
    expect(await listCoupons(ctxOn(), { storeId: jpy.id })).toEqual([]);
  });

  it('refuses bad values on update too, and a type change without a new value', async () => {
    const store = await createStore(orm.em.fork());
    const coupon = await createCoupon(ctxOn(), {
      storeId: store.id,
      code: uniqueCode(),
      discountType: 'fixed',
      discountValue: 5,
    });
    const ids = { storeId: store.id, couponId: coupon.id };

    // 500 minor units would mean 500 % once the type is percent.
    await appError(updateCoupon(ctxOn(), { ...ids, discountType: 'percent' }), 'validation_failed');
    await appError(updateCoupon(ctxOn(), { ...ids, discountType: 'percent', discountValue: 150 }), 'validation_failed');
    await appError(updateCoupon(ctxOn(), { ...ids, discountValue: 0 }), 'validation_failed');
    await appError(updateCoupon(ctxOn(), { ...ids, discountValue: 1.005 }), 'validation_failed');
    expect(await getCoupon(ctxOn(), ids)).toEqual(coupon);

    const retyped = await updateCoupon(ctxOn(), { ...ids, discountType: 'percent', discountValue: 25 });
    expect(retyped).toMatchObject({ discountType: 'percent', discountValue: 25 });
    expect((await storedCoupon(coupon.id)).discountValue).toBe(25);
  });

  it('stores fixed amounts in minor units of the store currency', async () => {
    const usd = await createStore(orm.em.fork());
    const jpy = await createStore(orm.em.fork(), { currency: 'JPY' });
    const dollars = await createCoupon(ctxOn(), {
      storeId: usd.id,
      code: uniqueCode(),
      discountType: 'fixed',
      discountValue: 12.34,
      minAmount: 0.29,
    });
    const yen = await createCoupon(ctxOn(), {
      storeId: jpy.id,
      code: uniqueCode(),
      discountType: 'fixed',
      discountValue: 500,
    });

    expect(dollars).toMatchObject({ discountValue: 12.34, minAmount: 0.29 });
    expect(await storedCoupon(dollars.id)).toMatchObject({ discountValue: 1234, minAmountMinor: 29 });
    expect(yen.discountValue).toBe(500);
    expect((await storedCoupon(yen.id)).discountValue).toBe(500);
  });

  it('accepts only products of the same store (not deleted), deduplicated', async () => {
    const ctx = ctxOn();
    const store = await createStore(orm.em.fork());
    const other = await createStore(orm.em.fork());
    const mine = await productIn(ctx, store.id, 5);
    const theirs = await productIn(ctx, other.id, 5);
    const gone = await productIn(ctx, store.id, 5);
    await deleteProduct(ctxOn(), { storeId: store.id, productId: gone });

    const foreign = await appError(
      createCoupon(ctxOn(), {
        storeId: store.id,
        code: uniqueCode(),
        discountType: 'percent',
        discountValue: 10,
        productIds: [mine, theirs],
      }),
      'validation_failed',
    );
    expect(foreign.issues?.map((issue) => issue.path)).toEqual(['productIds.1']);
    await appError(
      createCoupon(ctxOn(), {
        storeId: store.id,
        code: uniqueCode(),
        discountType: 'percent',
        discountValue: 10,
        productIds: [gone],
      }),
      'validation_failed',
    );

    const coupon = await createCoupon(ctxOn(), {
      storeId: store.id,
      code: uniqueCode(),
      discountType: 'percent',
      discountValue: 10,
      productIds: [mine, mine],
    });
    expect(coupon.productIds).toEqual([mine]);
    await appError(
      updateCoupon(ctxOn(), { storeId: store.id, couponId: coupon.id, productIds: [theirs] }),
      'validation_failed',
    );
  });
});

describe('validateCoupon: the discount on a cart, in minor units', () => {
  it('floors a percent of the exact minor-unit total (no float drift)', async () => {
    const ctx = ctxOn();
    const store = await createStore(orm.em.fork());
    const cheap = await productIn(ctx, store.id, 0.29);
    const usual = await productIn(ctx, store.id, 9.99);
    const all = await createCoupon(ctx, {
      storeId: store.id,
      code: uniqueCode('ALL'),
      discountType: 'percent',
      discountValue: 100,
    });
    const half = await createCoupon(ctx, {
      storeId: store.id,
      code: uniqueCode('HALF'),
      discountType: 'percent',
      discountValue: 50,
    });
    const fifteen = await createCoupon(ctx, {
      storeId: store.id,
      code: uniqueCode('FIFTEEN'),
      discountType: 'percent',
      discountValue: 15,
    });
    const priced = async (code: string, cart: Array<{ productId: string; quantity: number }>) =>
      (await validateCoupon(ctxOn(), { storeId: store.id, code, cart })).discount;

    // In floats 0.29 * 100 is 28.999999999999996: flooring that would give 0.28.
    expect(await priced(all.code, [{ productId: cheap, quantity: 1 }])).toBe(0.29);
    expect(await priced(half.code, [{ productId: cheap, quantity: 1 }])).toBe(0.14); // 14.5 minor -> 14
    expect(await priced(fifteen.code, [{ productId: usual, quantity: 2 }])).toBe(2.99); // 299.7 minor -> 299
    expect(await priced(all.code, [{ productId: usual, quantity: 3 }])).toBe(29.97);
  });

  it('gives a fixed discount exactly, and never more than the cart (the total never goes below zero)', async () => {
    const ctx = ctxOn();
    const store = await createStore(orm.em.fork());
    const dime = await productIn(ctx, store.id, 0.1);
    const tenner = await productIn(ctx, store.id, 10);
    const thirty = await createCoupon(ctx, {
      storeId: store.id,
      code: uniqueCode(),
      discountType: 'fixed',
      discountValue: 0.3,
    });
    const fifty = await createCoupon(ctx, {
      storeId: store.id,
      code: uniqueCode(),
      discountType: 'fixed',
      discountValue: 50,
    });

    const exact = await validateCoupon(ctxOn(), {
      storeId: store.id,
      code: thirty.code,
      cart: [{ productId: dime, quantity: 3 }],
    });
    expect(exact).toEqual({ valid: true, code: thirty.code, discountType: 'fixed', discountValue: 0.3, discount: 0.3 });
    const capped = await validateCoupon(ctxOn(), {
      storeId: store.id,
      code: fifty.code,
      cart: [{ productId: tenner, quantity: 1 }],
    });
    expect(capped).toEqual({ valid: true, code: fifty.code, discountType: 'fixed', discountValue: 50, discount: 10 });
  });

  it('works in a currency without minor units', async () => {
    const ctx = ctxOn();
    const store = await createStore(orm.em.fork(), { currency: 'JPY' });
    const item = await productIn(ctx, store.id, 999);
    const percent = await createCoupon(ctx, {
      storeId: store.id,
      code: uniqueCode(),
      discountType: 'percent',
      discountValue: 10,
    });
    const fixed = await createCoupon(ctx, {
      storeId: store.id,
      code: uniqueCode(),
      discountType: 'fixed',
      discountValue: 500,
    });
    const cart = [{ productId: item, quantity: 1 }];
    expect((await validateCoupon(ctxOn(), { storeId: store.id, code: percent.code, cart })).discount).toBe(99); // 99.9 -> 99
    expect((await validateCoupon(ctxOn(), { storeId: store.id, code: fixed.code, cart })).discount).toBe(500);
  });

  it('discounts only the products a restricted coupon names', async () => {
    const ctx = ctxOn();
    const store = await createStore(orm.em.fork());
    const named = await productIn(ctx, store.id, 5);
    const unnamed = await productIn(ctx, store.id, 20);
    const percent = await createCoupon(ctx, {
      storeId: store.id,
      code: uniqueCode(),
      discountType: 'percent',
      discountValue: 10,
      productIds: [named],
    });
    const fixed = await createCoupon(ctx, {
      storeId: store.id,
      code: uniqueCode(),
      discountType: 'fixed',
      discountValue: 8,
      productIds: [named],
    });
    const both = [
      { productId: named, quantity: 1 },
      { productId: unnamed, quantity: 1 },
    ];

    expect((await validateCoupon(ctxOn(), { storeId: store.id, code: percent.code, cart: both })).discount).toBe(0.5);
    // Capped at the named product's 5.00, not the cart's 25.00.
    expect((await validateCoupon(ctxOn(), { storeId: store.id, code: fixed.code, cart: both })).discount).toBe(5);

    const none = await validateCoupon(ctxOn(), {
      storeId: store.id,
      code: percent.code,
      cart: [{ productId: unnamed, quantity: 2 }],
    });
    expect(none).toEqual({
      valid: false,
      code: percent.code,
      discountType: 'percent',
      discountValue: 10,
      reason: couponRefusalText('no_eligible_products'),
    });
    // Without a cart there is nothing to be ineligible.
    expect(await validateCoupon(ctxOn(), { storeId: store.id, code: percent.code })).toEqual({
      valid: true,
      code: percent.code,
      discountType: 'percent',
      discountValue: 10,
    });
  });

  it('refuses a cart below the minimum, and accepts one exactly at it', async () => {
    const ctx = ctxOn();
    const store = await createStore(orm.em.fork());
    const small = await productIn(ctx, store.id, 9.99);
    const exact = await productIn(ctx, store.id, 10);
    const coupon = await createCoupon(ctx, {
      storeId: store.id,
      code: uniqueCode(),
      discountType: 'fixed',
      discountValue: 1,
      minAmount: 10,
    });

    const below = await validateCoupon(ctxOn(), {
      storeId: store.id,
      code: coupon.code,
      cart: [{ productId: small, quantity: 1 }],
    });
    expect(below).toMatchObject({ valid: false, reason: couponRefusalText('minimum_not_met') });
    expect(below.discount).toBeUndefined();
    const at = await validateCoupon(ctxOn(), {
      storeId: store.id,
      code: coupon.code,
      cart: [{ productId: exact, quantity: 1 }],
    });
    expect(at).toMatchObject({ valid: true, discount: 1 });
    expect(
      (
        await validateCoupon(ctxOn(), {
          storeId: store.id,
          code: coupon.code,
          cart: [{ productId: small, quantity: 2 }],
        })
      ).valid,
    ).toBe(true);
    expect((await validateCoupon(ctxOn(), { storeId: store.id, code: coupon.code })).valid).toBe(true);
  });
});

describe('validateCoupon: refusals', () => {
  it('expires a coupon at its expiresAt by the clock, not a millisecond earlier', async () => {
    const clock = clockAtStart();
    const store = await createStore(orm.em.fork());
    const expiresAt = new Date(START + 3600_000).toISOString();
    const coupon = await createCoupon(ctxOn(clock), {
      storeId: store.id,
      code: uniqueCode(),
      discountType: 'percent',
      discountValue: 10,
      expiresAt,
    });
    const check = () => validateCoupon(ctxOn(clock), { storeId: store.id, code: coupon.code });

    clock.advance(3600_000 - 1);
    expect(await check()).toEqual({ valid: true, code: coupon.code, discountType: 'percent', discountValue: 10 });
    clock.advance(1);
    expect(await check()).toEqual({
      valid: false,
      code: coupon.code,
      discountType: 'percent',
      discountValue: 10,
      reason: couponRefusalText('expired'),
    });

    await updateCoupon(ctxOn(clock), { storeId: store.id, couponId: coupon.id, expiresAt: null });
    expect((await check()).valid).toBe(true);
  });

  it('answers an inactive coupon exactly like a code the store does not have', async () => {
    const store = await createStore(orm.em.fork());
    const coupon = await createCoupon(ctxOn(), {
      storeId: store.id,
      code: uniqueCode(),
      discountType: 'fixed',
      discountValue: 3,
      active: false,
    });
    const missing = uniqueCode();

    const inactive = await validateCoupon(ctxOn(), { storeId: store.id, code: coupon.code });
    const unknown = await validateCoupon(ctxOn(), { storeId: store.id, code: missing });
    expect(unknown).toEqual({
      valid: false,
      code: missing,
      discountType: null,
      discountValue: null,
      reason: couponRefusalText('unknown'),
    });
    expect({ ...inactive, code: missing }).toEqual(unknown);

    await updateCoupon(ctxOn(), { storeId: store.id, couponId: coupon.id, active: true });
    expect((await validateCoupon(ctxOn(), { storeId: store.id, code: coupon.code })).valid).toBe(true);
  });

  it('refuses a coupon whose uses are all taken, and never shows uses or limits', async () => {
    const store = await createStore(orm.em.fork());
    const coupon = await createCoupon(ctxOn(), {
      storeId: store.id,
      code: uniqueCode(),
      discountType: 'percent',
      discountValue: 10,
      maxUses: 2,
    });
    const check = () => validateCoupon(ctxOn(), { storeId: store.id, code: coupon.code });

    await claimCouponUse(contextOn(orm.em.fork()), coupon.id);
    const open: TCouponValidation = await check();
    expect(open.valid).toBe(true);
    await claimCouponUse(contextOn(orm.em.fork()), coupon.id);
    const usedUp = await check();
    expect(usedUp).toEqual({
      valid: false,
      code: coupon.code,
      discountType: 'percent',
      discountValue: 10,
      reason: couponRefusalText('used_up'),
    });
    for (const answer of [open, usedUp]) expect(Object.keys(answer)).not.toEqual(expect.arrayContaining(['uses']));
    for (const answer of [open, usedUp]) expect(Object.keys(answer)).not.toEqual(expect.arrayContaining(['maxUses']));

    await appError(claimCouponUse(contextOn(orm.em.fork()), coupon.id), 'coupon_invalid');
    expect((await storedCoupon(coupon.id)).uses).toBe(2);

    // The limit cannot go below the uses so far; raising it opens the coupon again.
    await appError(updateCoupon(ctxOn(), { storeId: store.id, couponId: coupon.id, maxUses: 1 }), 'validation_failed');
    await updateCoupon(ctxOn(), { storeId: store.id, couponId: coupon.id, maxUses: 3 });
    expect((await check()).valid).toBe(true);
  });

  it("does not know another store's codes, and refuses unknown and banned stores", async () => {
    const store = await createStore(orm.em.fork());
    const other = await createStore(orm.em.fork());
    const banned = await createStore(orm.em.fork(), { banned: true });
    const coupon = await createCoupon(ctxOn(), {
      storeId: other.id,
      code: uniqueCode(),
      discountType: 'percent',
      discountValue: 10,
    });
    await createCoupon(ctxOn(), { storeId: banned.id, code: coupon.code, discountType: 'percent', discountValue: 10 });

    expect(await validateCoupon(ctxOn(), { storeId: store.id, code: coupon.code })).toMatchObject({
      valid: false,
      discountType: null,
    });
    await appError(validateCoupon(ctxOn(), { storeId: newId(), code: coupon.code }), 'not_found');
    await appError(validateCoupon(ctxOn(), { storeId: banned.id, code: coupon.code }), 'store_banned');
  });
});

describe('claimCouponUse under concurrency', () => {
  let wide: Orm;
  beforeAll(async () => {
    // Its own pool, wide enough that the claims really run at the same time.
    wide = await openOrm(workerDatabaseUrl(), { poolMax: 12 });
  });
  afterAll(() => wide?.close());

  it('lets exactly maxUses of many parallel claims through', async () => {
    const store = await createStore(orm.em.fork());
    const coupon = await createCoupon(ctxOn(), {
      storeId: store.id,
      code: uniqueCode(),
      discountType: 'percent',
      discountValue: 10,
      maxUses: 5,
    });

    const results = await Promise.allSettled(
      Array.from({ length: 12 }, () => wide.em.fork().transactional((em) => claimCouponUse(contextOn(em), coupon.id))),
    );

    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(5);
    const refusals = results.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []));
    expect(refusals).toHaveLength(7);
    for (const reason of refusals) expect(reason).toMatchObject({ appCode: 'coupon_invalid' });
    expect((await storedCoupon(coupon.id)).uses).toBe(5);
  });

  it('lets one of several racing creates of the same code win; the others are conflict', async () => {
    const store = await createStore(orm.em.fork());
    const code = uniqueCode();

    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        createCoupon(serviceContext(wide), {
          storeId: store.id,
          code: i % 2 ? code : code.toLowerCase(),
          discountType: 'percent',
          discountValue: 10,
        }),
      ),
    );

    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    for (const result of results)
      if (result.status === 'rejected') expect(result.reason).toMatchObject({ appCode: 'conflict' });
    expect(await listCoupons(ctxOn(), { storeId: store.id })).toHaveLength(1);
  });

  it('counts every parallel claim of an unlimited coupon', async () => {
    const store = await createStore(orm.em.fork());
    const coupon = await createCoupon(ctxOn(), {
      storeId: store.id,
      code: uniqueCode(),
      discountType: 'fixed',
      discountValue: 1,
    });

    await Promise.all(
      Array.from({ length: 12 }, () => wide.em.fork().transactional((em) => claimCouponUse(contextOn(em), coupon.id))),
    );

    expect((await storedCoupon(coupon.id)).uses).toBe(12);
  });
});
