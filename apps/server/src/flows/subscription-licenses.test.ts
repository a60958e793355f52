/**
 * A subscription's license follows its subscription (docs/decisions.md, "#39 Licenses follow their
 * subscription"), against the real database without HTTP: the key sold by a subscription's first
 * order carries its subscriptionId; validate and activate judge it by the subscription's state
 * and access end (with the store's grace days), a test subscription at its own clock; a one-time
 * license is judged by its validity days as before. The subscription's states are written to its
 * row directly, as the billing engine would leave them.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TSubscriptionStatus } from '@svc/schemas';
import { workerDatabaseUrl } from '../../../../test/support/env.js';
import { createStore } from '../../../../test/support/factories.js';
import { codeOf, contextOn, serviceContext } from '../../../../test/support/in-process.js';
import { openOrm, type Orm } from '../db/orm.js';
import { ManualClock } from '../lib/clock.js';
import type { ServiceContext } from '../modules/request/context.js';
import { createProduct } from '../modules/catalog/catalog.service.js';
import { OrderSchema } from '../modules/orders/orders.entities.js';
import { StoreSchema } from '../modules/stores/stores.entities.js';
import { SubscriptionSchema } from '../modules/subscriptions/subscriptions.entities.js';
import {
  activateLicense,
  disableLicense,
  getLicense,
  listLicenses,
  validateLicense,
} from '../modules/licenses/licenses.service.js';
import { createOrder } from './place-order.js';
import { restock } from './restock.js';
import { settleOrder } from './settle-payment.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 2 });
});
afterAll(() => orm?.close());

const DAY = 86_400_000;
/** A buyer who may see the store's test mode (its seller previewing), so a test product sells to them. */
const buyer = { ip: '203.0.113.9', userAgent: 'test', country: 'DE', testMode: () => Promise.resolve(true) };

interface Sold {
  storeId: string;
  productId: string;
  subscriptionId: string | null;
  licenseId: string;
  key: string;
  clock: ManualClock;
  ctx(): ServiceContext;
}

/**
 * A store selling one license-key product (recurring with a monthly plan, or one-time with
 * `validityDays`), in `livemode`, and its first order paid: the buyer's key is assigned.
 */
async function soldKey(opts: { recurring: boolean; livemode?: boolean; validityDays?: number | null }): Promise<Sold> {
  const clock = new ManualClock(Date.UTC(2026, 10, 28, 12, 0));
  const base = { ...serviceContext(orm, clock), livemode: opts.livemode ?? true };
  const ctx = () => ({ ...base, em: orm.em.fork() });
  const store = await createStore(orm.em.fork());
  const product = await createProduct(ctx(), {
    storeId: store.id,
    name: 'Editor Pro',
    deliveryMethods: ['licenseKeys'],
    ...(opts.recurring
      ? { plans: [{ interval: 'month', intervalCount: 1, price: 9, trialDays: 0, active: true }] }
      : { price: 10, licenseValidityDays: opts.validityDays ?? null }),
  });
  const key = `LIC-${randomBytes(8).toString('hex')}`;
  await restock(ctx(), { storeId: store.id, productId: product.id, keys: [key] });
  const created = await createOrder(
    ctx(),
    {
      store: store.id,
      cart: [{ productId: product.id, quantity: 1, ...(opts.recurring ? { planId: product.plans[0]!.id } : {}) }],
      email: 'buyer@example.test',
    },
    buyer,
  );
  const order = await orm.em.fork().findOneOrFail(OrderSchema, { id: created.order.id });
  expect(
    await settleOrder(contextOn(orm.em.fork(), base.deps), {
      orderId: order.id,
      payment: { gateway: 'test', providerRef: null, amountMinor: order.priceMinor, currency: order.currency },
      now: clock.now(),
    }),
  ).toBe('settled');
  const { license } = await validateLicense(ctx(), { productId: product.id, key });
  return {
    storeId: store.id,
    productId: product.id,
    subscriptionId: order.subscriptionId ?? null,
    licenseId: license.id,
    key,
    clock,
    ctx,
  };
}

/** Writes the subscription's state columns as the billing engine would have left them. */
async function setSubscription(
  sold: Sold,
  fields: {
    status: TSubscriptionStatus;
    currentPeriodEnd?: Date;
    pastDueAt?: Date | null;
    pausedAt?: Date | null;
    endedAt?: Date | null;
    clockTime?: Date | null;
  },
) {
  const em = orm.em.fork();
  await em.nativeUpdate(SubscriptionSchema, { id: sold.subscriptionId! }, fields);
}

const validate = (sold: Sold) => validateLicense(sold.ctx(), { productId: sold.productId, key: sold.key });

describe("a subscription's license", () => {
  it('carries its subscription and is valid until the period ends, as the merchant view says too', async () => {
    const sold = await soldKey({ recurring: true });
    expect(sold.subscriptionId).toEqual(expect.any(String));
    const subscription = await orm.em.fork().findOneOrFail(SubscriptionSchema, { id: sold.subscriptionId! });
    expect(subscription.status).toBe('active');
    const result = await validate(sold);
    expect(result).toMatchObject({ valid: true, reason: null });
    expect(result.license).toMatchObject({
      status: 'active',
      subscriptionId: sold.subscriptionId,
      expiresAt: subscription.currentPeriodEnd.toISOString(),
    });
    expect(await getLicense(sold.ctx(), { storeId: sold.storeId, licenseId: sold.licenseId })).toMatchObject({
      status: 'active',
      subscriptionId: sold.subscriptionId,
      expiresAt: subscription.currentPeriodEnd.toISOString(),
    });
    // Past the period's end (the renewal never came), it is expired.
    sold.clock.set(subscription.currentPeriodEnd.getTime());
    expect(await validate(sold)).toMatchObject({ valid: false, reason: 'expired', license: { status: 'expired' } });
  });

  it('is valid while trialing, and while past_due within the grace (expiresAt the grace end), expired after it', async () => {
    const sold = await soldKey({ recurring: true });
    const now = sold.clock.now().getTime();
    await setSubscription(sold, { status: 'trialing', currentPeriodEnd: new Date(now + 3 * DAY) });
    expect(await validate(sold)).toMatchObject({
      valid: true,
      reason: null,
      license: { status: 'active', expiresAt: new Date(now + 3 * DAY).toISOString() },
    });

    const pastDueAt = new Date(now - 2 * DAY);
    await setSubscription(sold, { status: 'past_due', currentPeriodEnd: pastDueAt, pastDueAt });
    expect(await validate(sold)).toMatchObject({
      valid: true,
      reason: null,
      license: { status: 'active', expiresAt: new Date(pastDueAt.getTime() + 7 * DAY).toISOString() },
    });
    sold.clock.set(pastDueAt.getTime() + 7 * DAY);
    expect(await validate(sold)).toMatchObject({ valid: false, reason: 'expired', license: { status: 'expired' } });
  });

  it("respects the store's grace days: 0 ends access when the renewal fails", async () => {
    const sold = await soldKey({ recurring: true });
    await orm.em.fork().nativeUpdate(StoreSchema, { id: sold.storeId }, { subscriptionGraceDays: 0 });
    const pastDueAt = new Date(sold.clock.now().getTime() - 1000);
    await setSubscription(sold, { status: 'past_due', pastDueAt });
    expect(await validate(sold)).toMatchObject({
      valid: false,
      reason: 'expired',
      license: { status: 'expired', expiresAt: pastDueAt.toISOString() },
    });
  });

  it('is subscription_inactive while paused or incomplete, and refuses activation then', async () => {
    const sold = await soldKey({ recurring: true });
    const pausedAt = new Date(sold.clock.now().getTime() - DAY);
    await setSubscription(sold, { status: 'paused', pausedAt });
    expect(await validate(sold)).toMatchObject({
      valid: false,
      reason: 'subscription_inactive',
      license: { status: 'inactive', expiresAt: pausedAt.toISOString() },
    });
    expect(
      await codeOf(activateLicense(sold.ctx(), { productId: sold.productId, key: sold.key, instanceName: 'laptop' })),
    ).toBe('license_inactive');
    // The merchant's list filters by the same status.
    const listed = async (status: 'inactive' | 'active') =>
      (await listLicenses(sold.ctx(), { storeId: sold.storeId, status })).licenses.map((l) => l.id);
    expect(await listed('inactive')).toEqual([sold.licenseId]);
    expect(await listed('active')).toEqual([]);

    for (const status of ['incomplete', 'incomplete_expired'] as const) {
      await setSubscription(sold, { status });
      expect(await validate(sold)).toMatchObject({
        valid: false,
        reason: 'subscription_inactive',
        license: { status: 'inactive', expiresAt: null },
      });
    }
  });

  it('is expired once canceled, even before the end it was given', async () => {
    const sold = await soldKey({ recurring: true });
    const endedAt = new Date(sold.clock.now().getTime() + DAY);
    await setSubscription(sold, { status: 'canceled', endedAt });
    expect(await validate(sold)).toMatchObject({
      valid: false,
      reason: 'expired',
      license: { status: 'expired', expiresAt: endedAt.toISOString() },
    });
  });

  it('is disabled before anything its subscription says', async () => {
    const sold = await soldKey({ recurring: true });
    await setSubscription(sold, { status: 'paused', pausedAt: sold.clock.now() });
    await disableLicense(sold.ctx(), { storeId: sold.storeId, licenseId: sold.licenseId });
    expect(await validate(sold)).toMatchObject({ valid: false, reason: 'disabled', license: { status: 'disabled' } });
  });

  it("of a test subscription is judged at the subscription's clock, not the wall clock", async () => {
    const sold = await soldKey({ recurring: true, livemode: false });
    const subscription = await orm.em.fork().findOneOrFail(SubscriptionSchema, { id: sold.subscriptionId! });
    expect(subscription.livemode).toBe(false);
    const end = subscription.currentPeriodEnd.getTime();
    // The service's clock is past the period's end; the subscription's clock is not.
    sold.clock.set(end + 30 * DAY);
    await setSubscription(sold, { status: 'active', clockTime: new Date(end - DAY) });
    expect(await validate(sold)).toMatchObject({ valid: true, reason: null, license: { status: 'active' } });
    // The service's clock is before it; the subscription's clock has passed it.
    sold.clock.set(end - 10 * DAY);
    await setSubscription(sold, { status: 'active', clockTime: new Date(end + 1000) });
    expect(await validate(sold)).toMatchObject({ valid: false, reason: 'expired', license: { status: 'expired' } });
  });
});

describe('a one-time license', () => {
  it('has no subscription and expires by its validity days, as before', async () => {
    const sold = await soldKey({ recurring: false, validityDays: 30 });
    const assignedAt = sold.clock.now().getTime();
    expect(await validate(sold)).toMatchObject({
      valid: true,
      reason: null,
      license: { status: 'active', subscriptionId: null, expiresAt: new Date(assignedAt + 30 * DAY).toISOString() },
    });
    sold.clock.set(assignedAt + 30 * DAY);
    expect(await validate(sold)).toMatchObject({ valid: false, reason: 'expired', license: { status: 'expired' } });
  });
});
