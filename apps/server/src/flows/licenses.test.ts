/**
 * The License API's rules against the real database, without HTTP (docs/architecture.md, The faces):
 * activation limits under the key's row lock (concurrent activations leave exactly the limit),
 * idempotent names, validity counted from the assignment on the service's clock, disable /
 * enable by the seller, refund disables, one 404 for an unknown product and a wrong key, and
 * the license.* events with the merchant view. Every test makes its own store, product and keys.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../test/support/env.js';
import { createStore } from '../../../../test/support/factories.js';
import { codeOf, serviceContext, contextOn } from '../../../../test/support/in-process.js';
import { openOrm, type Orm } from '../db/orm.js';
import { ManualClock } from '../lib/clock.js';
import { AppError } from '../lib/errors.js';
import type { ServiceContext } from '../modules/request/context.js';
import { createProduct, updateProduct } from '../modules/catalog/catalog.service.js';
import { createOrder } from './place-order.js';
import { EventSchema } from '../modules/events/events.entities.js';
import { restock } from './restock.js';
import { OrderSchema } from '../modules/orders/orders.entities.js';
import { refundOrder } from './refund-order.js';
import { settleOrder } from './settle-payment.js';
import {
  activateLicense,
  deactivateLicense,
  disableLicense,
  enableLicense,
  findLicensesByKey,
  getLicense,
  listLicenses,
  removeLicenseInstance,
  validateLicense,
} from '../modules/licenses/licenses.service.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 8 });
});
afterAll(() => orm?.close());

const DAY = 86_400_000;

interface Sold {
  storeId: string;
  productId: string;
  orderId: string;
  key: string;
  email: string;
  clock: ManualClock;
  ctx(): ServiceContext;
}

/** A store selling one key product with `settings`, and one paid order holding one key. */
async function soldKey(
  settings: { licenseActivationLimit?: number | null; licenseValidityDays?: number | null } = {},
  key = `LIC-${randomBytes(8).toString('hex')}`,
): Promise<Sold> {
  const clock = new ManualClock(Date.UTC(2026, 5, 1, 9, 0));
  const base = serviceContext(orm, clock);
  const ctx = () => ({ ...base, em: orm.em.fork() });
  const store = await createStore(orm.em.fork());
  const product = await createProduct(ctx(), {
    storeId: store.id,
    name: 'App',
    price: 10,
    deliveryMethods: ['licenseKeys'],
    ...settings,
  });
  await restock(ctx(), { storeId: store.id, productId: product.id, keys: [key] });
  const email = `buyer-${randomBytes(4).toString('hex')}@example.test`;
  const created = await createOrder(
    ctx(),
    { store: store.id, cart: [{ productId: product.id, quantity: 1 }], email },
    { ip: '203.0.113.5', userAgent: 'test', country: 'DE' },
  );
  const order = await orm.em.fork().findOneOrFail(OrderSchema, { id: created.order.id });
  expect(
    await settleOrder(contextOn(orm.em.fork(), base.deps), {
      orderId: order.id,
      payment: { gateway: 'test', providerRef: null, amountMinor: order.priceMinor, currency: order.currency },
      now: clock.now(),
    }),
  ).toBe('settled');
  return { storeId: store.id, productId: product.id, orderId: order.id, key, email, clock, ctx };
}

async function licenseEvents(storeId: string) {
  const events = await orm.em
    .fork()
    .find(EventSchema, { store: storeId, type: { $like: 'license.%' } }, { orderBy: { createdAt: 'asc', id: 'asc' } });
  return events.map((event) => ({
    type: event.type,
    license: (event.payload as { license: Record<string, unknown> }).license,
  }));
}

describe('activation', () => {
  it('activates up to the limit, refuses the next name, frees a slot on deactivation, and counts a name once', async () => {
    const sold = await soldKey({ licenseActivationLimit: 2 });
    const a = await activateLicense(sold.ctx(), { productId: sold.productId, key: sold.key, instanceName: 'laptop' });
    expect(a.license).toMatchObject({ status: 'active', activationLimit: 2, activationUsage: 1, expiresAt: null });
    sold.clock.advance(1000);
    const again = await activateLicense(sold.ctx(), {
      productId: sold.productId,
      key: sold.key,
      instanceName: 'laptop',
    });
    expect(again.instance).toEqual(a.instance);
    expect(again.license.activationUsage).toBe(1);
    sold.clock.advance(1000);
    const b = await activateLicense(sold.ctx(), {
      productId: sold.productId,
      key: `  ${sold.key}  `,
      instanceName: 'desktop',
    });
    expect(b.license.activationUsage).toBe(2);
    expect(
      await codeOf(activateLicense(sold.ctx(), { productId: sold.productId, key: sold.key, instanceName: 'tablet' })),
    ).toBe('activation_limit_reached');

    sold.clock.advance(1000);
    const off = await deactivateLicense(sold.ctx(), {
      productId: sold.productId,
      key: sold.key,
      instanceId: a.instance.id,
    });
    expect(off).toEqual({ deactivated: true, license: expect.objectContaining({ activationUsage: 1 }) });
    sold.clock.advance(1000);
    expect(
      (await activateLicense(sold.ctx(), { productId: sold.productId, key: sold.key, instanceName: 'tablet' })).license
        .activationUsage,
    ).toBe(2);
    expect(
      await codeOf(
        deactivateLicense(sold.ctx(), { productId: sold.productId, key: sold.key, instanceId: a.instance.id }),
      ),
    ).toBe('not_found');

    const events = await licenseEvents(sold.storeId);
    expect(events.map((event) => event.type)).toEqual([
      'license.activated',
      'license.activated',
      'license.deactivated',
      'license.activated',
    ]);
    expect(events[0]!.license).toMatchObject({
      customerEmail: sold.email,
      status: 'active',
      activationUsage: 1,
      instances: [{ id: a.instance.id, name: 'laptop' }],
    });
    expect(JSON.stringify(events)).not.toContain(sold.key);
  });

  it('leaves exactly the limit when 30 distinct names activate at once', async () => {
    const sold = await soldKey({ licenseActivationLimit: 5 });
    const results = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) =>
        activateLicense(sold.ctx(), { productId: sold.productId, key: sold.key, instanceName: `machine-${i}` }),
      ),
    );
    const ok = results.filter((result) => result.status === 'fulfilled');
    const refused = results
      .filter((result) => result.status === 'rejected')
      .map((result) => (result.reason as AppError).appCode);
    expect(ok).toHaveLength(5);
    expect(new Set(refused)).toEqual(new Set(['activation_limit_reached']));
    const license = (await listLicenses(sold.ctx(), { storeId: sold.storeId })).licenses[0]!;
    expect(license.activationUsage).toBe(5);
    expect(license.instances).toHaveLength(5);
  });

  it('activates without a limit when the product sets none', async () => {
    const sold = await soldKey();
    for (let i = 0; i < 12; i++)
      await activateLicense(sold.ctx(), { productId: sold.productId, key: sold.key, instanceName: `m${i}` });
    expect((await validateLicense(sold.ctx(), { productId: sold.productId, key: sold.key })).license).toMatchObject({
      activationLimit: null,
      activationUsage: 12,
    });
  });
});

describe('validation', () => {
  it('answers valid with and without an instance, instance_not_found for another, and expired once the validity ran out', async () => {
    const sold = await soldKey({ licenseValidityDays: 30 });
    const { instance } = await activateLicense(sold.ctx(), {
      productId: sold.productId,
      key: sold.key,
      instanceName: 'laptop',
    });
    const assignedAt = sold.clock.now().getTime();
    expect(await validateLicense(sold.ctx(), { productId: sold.productId, key: sold.key })).toMatchObject({
      valid: true,
      reason: null,
      instance: null,
    });
    const withInstance = await validateLicense(sold.ctx(), {
      productId: sold.productId,
      key: sold.key,
      instanceId: instance.id,
    });
    expect(withInstance).toMatchObject({ valid: true, reason: null, instance });
    expect(withInstance.license.expiresAt).toBe(new Date(assignedAt + 30 * DAY).toISOString());
    const other = await soldKey();
    const { instance: foreign } = await activateLicense(other.ctx(), {
      productId: other.productId,
      key: other.key,
      instanceName: 'x',
    });
    expect(
      await validateLicense(sold.ctx(), { productId: sold.productId, key: sold.key, instanceId: foreign.id }),
    ).toMatchObject({ valid: false, reason: 'instance_not_found', instance: null });

    sold.clock.advance(30 * DAY - 1);
    expect((await validateLicense(sold.ctx(), { productId: sold.productId, key: sold.key })).valid).toBe(true);
    sold.clock.advance(1);
    expect(
      await validateLicense(sold.ctx(), { productId: sold.productId, key: sold.key, instanceId: instance.id }),
    ).toMatchObject({ valid: false, reason: 'expired', license: { status: 'expired' } });
    expect(
      await codeOf(activateLicense(sold.ctx(), { productId: sold.productId, key: sold.key, instanceName: 'new' })),
    ).toBe('license_inactive');

    // The product's validity is read at each check: lengthening it revives the license.
    await updateProduct(sold.ctx(), { storeId: sold.storeId, productId: sold.productId, licenseValidityDays: 60 });
    expect((await validateLicense(sold.ctx(), { productId: sold.productId, key: sold.key })).valid).toBe(true);
  });

  it('answers the same 404 for an unknown product, a wrong key, an unsold key and another product’s key', async () => {
    const sold = await soldKey();
    const other = await soldKey();
    const cases = [
      { productId: 'nosuchproduct0000000000000', key: sold.key },
      { productId: sold.productId, key: 'WRONG-KEY' },
      { productId: sold.productId, key: other.key },
    ];
    for (const input of cases) {
      const error = await validateLicense(sold.ctx(), input).then(
        () => undefined,
        (e: unknown) => e as AppError,
      );
      expect(error?.appCode).toBe('not_found');
      expect(error?.message).toBe('No license with this key for this product.');
    }
  });
});

describe('the seller', () => {
  it('sees a key masked by one rule: eight dots, and only past eight characters its last four (issue 26)', async () => {
    for (const [key, masked] of [
      ['Q', '••••••••'],
      ['QWERT', '••••••••'],
      ['ABCDEFGH', '••••••••'],
      ['ABCDEFGHI', '••••••••FGHI'],
      [`LONG-${randomBytes(16).toString('hex')}-WXYZ`, '••••••••WXYZ'],
    ]) {
      const sold = await soldKey({}, key);
      const [listed] = (await listLicenses(sold.ctx(), { storeId: sold.storeId })).licenses;
      expect(listed?.masked, key).toBe(masked);
      expect((await getLicense(sold.ctx(), { storeId: sold.storeId, licenseId: listed!.id })).masked, key).toBe(masked);
    }
  });

  it('disables and enables a license; a disabled license validates disabled and cannot activate', async () => {
    const sold = await soldKey({ licenseActivationLimit: 3 });
    const { license, instance } = await activateLicense(sold.ctx(), {
      productId: sold.productId,
      key: sold.key,
      instanceName: 'laptop',
    });
    sold.clock.advance(1000);
    const disabled = await disableLicense(sold.ctx(), { storeId: sold.storeId, licenseId: license.id });
    expect(disabled).toMatchObject({ status: 'disabled', customerEmail: sold.email, instances: [instance] });
    expect(disabled.masked.endsWith(sold.key.slice(-4))).toBe(true);
    expect(disabled.masked).not.toContain(sold.key.slice(0, 8));
    expect(
      await validateLicense(sold.ctx(), { productId: sold.productId, key: sold.key, instanceId: instance.id }),
    ).toMatchObject({ valid: false, reason: 'disabled' });
    expect(
      await codeOf(activateLicense(sold.ctx(), { productId: sold.productId, key: sold.key, instanceName: 'other' })),
    ).toBe('license_inactive');
    // Not even the name it already holds: a disabled license activates nothing.
    expect(
      await codeOf(activateLicense(sold.ctx(), { productId: sold.productId, key: sold.key, instanceName: 'laptop' })),
    ).toBe('license_inactive');
    await disableLicense(sold.ctx(), { storeId: sold.storeId, licenseId: license.id });
    sold.clock.advance(1000);
    expect((await enableLicense(sold.ctx(), { storeId: sold.storeId, licenseId: license.id })).status).toBe('active');
    expect((await validateLicense(sold.ctx(), { productId: sold.productId, key: sold.key })).valid).toBe(true);
    expect((await licenseEvents(sold.storeId)).map((event) => event.type)).toEqual([
      'license.activated',
      'license.disabled',
      'license.enabled',
    ]);

    await removeLicenseInstance(sold.ctx(), { storeId: sold.storeId, licenseId: license.id, instanceId: instance.id });
    expect((await getLicense(sold.ctx(), { storeId: sold.storeId, licenseId: license.id })).instances).toEqual([]);
    expect(
      await codeOf(
        removeLicenseInstance(sold.ctx(), { storeId: sold.storeId, licenseId: license.id, instanceId: instance.id }),
      ),
    ).toBe('not_found');
  });

  it('sees a refunded order’s license disabled, for good', async () => {
    const sold = await soldKey();
    const { license } = await activateLicense(sold.ctx(), {
      productId: sold.productId,
      key: sold.key,
      instanceName: 'laptop',
    });
    await refundOrder(contextOn(orm.em.fork()), { orderId: sold.orderId, now: sold.clock.now() });
    expect(await validateLicense(sold.ctx(), { productId: sold.productId, key: sold.key })).toMatchObject({
      valid: false,
      reason: 'disabled',
    });
    expect(await codeOf(enableLicense(sold.ctx(), { storeId: sold.storeId, licenseId: license.id }))).toBe('conflict');
    expect(
      (await listLicenses(sold.ctx(), { storeId: sold.storeId, status: 'disabled' })).licenses.map((l) => l.id),
    ).toEqual([license.id]);
    expect((await listLicenses(sold.ctx(), { storeId: sold.storeId, status: 'active' })).licenses).toEqual([]);
  });

  it('finds a sold key by its whole value in every product of its own store only, shown masked (issue 29)', async () => {
    const key = `LIC-${randomBytes(8).toString('hex')}`;
    const sold = await soldKey({}, key);
    // Another store sold the same value: it is not this store's.
    await soldKey({}, key);
    // A second product of the store sold the same value a minute later; an unsold key stays unfound.
    sold.clock.advance(60_000);
    const second = await createProduct(sold.ctx(), {
      storeId: sold.storeId,
      name: 'App 2',
      price: 10,
      deliveryMethods: ['licenseKeys'],
    });
    await restock(sold.ctx(), { storeId: sold.storeId, productId: second.id, keys: [key] });
    const created = await createOrder(
      sold.ctx(),
      { store: sold.storeId, cart: [{ productId: second.id, quantity: 1 }], email: 'b@example.test' },
      { ip: '203.0.113.5', userAgent: 'test', country: 'DE' },
    );
    const order = await orm.em.fork().findOneOrFail(OrderSchema, { id: created.order.id });
    await settleOrder(contextOn(orm.em.fork(), sold.ctx().deps), {
      orderId: order.id,
      payment: { gateway: 'test', providerRef: null, amountMinor: order.priceMinor, currency: order.currency },
      now: sold.clock.now(),
    });
    const unsold = `LIC-${randomBytes(8).toString('hex')}`;
    await restock(sold.ctx(), { storeId: sold.storeId, productId: second.id, keys: [unsold] });
    const listed = (await listLicenses(sold.ctx(), { storeId: sold.storeId })).licenses;
    expect(listed).toHaveLength(2);

    const found = await findLicensesByKey(sold.ctx(), { storeId: sold.storeId, key: `  ${key} ` });
    // Newest first, as the list: the second product's sale, then the first's; the same views the list gives.
    expect(found.licenses.map((l) => l.productId)).toEqual([second.id, sold.productId]);
    expect(found.licenses).toEqual(listed);
    expect(found.licenses[0]!.masked).toBe(`••••••••${key.slice(-4)}`);
    expect(JSON.stringify(found)).not.toContain(key);

    expect((await findLicensesByKey(sold.ctx(), { storeId: sold.storeId, key: unsold })).licenses).toEqual([]);
    expect((await findLicensesByKey(sold.ctx(), { storeId: sold.storeId, key: `${key}x` })).licenses).toEqual([]);
    expect((await findLicensesByKey(sold.ctx(), { storeId: sold.storeId, key: key.toLowerCase() })).licenses).toEqual(
      [],
    );
  });

  it('reaches only its own store’s licenses, and pages them newest first', async () => {
    const sold = await soldKey({ licenseValidityDays: 10 });
    const other = await soldKey();
    const { license } = await activateLicense(sold.ctx(), {
      productId: sold.productId,
      key: sold.key,
      instanceName: 'laptop',
    });
    expect(await codeOf(getLicense(sold.ctx(), { storeId: other.storeId, licenseId: license.id }))).toBe('not_found');
    expect(await codeOf(disableLicense(sold.ctx(), { storeId: other.storeId, licenseId: license.id }))).toBe(
      'not_found',
    );
    // Four more sold keys of the same product, a minute apart.
    for (let i = 0; i < 4; i++) {
      sold.clock.advance(60_000);
      const key = `LIC-${randomBytes(8).toString('hex')}`;
      await restock(sold.ctx(), { storeId: sold.storeId, productId: sold.productId, keys: [key] });
      const created = await createOrder(
        sold.ctx(),
        { store: sold.storeId, cart: [{ productId: sold.productId, quantity: 1 }], email: 'b@example.test' },
        { ip: '203.0.113.5', userAgent: 'test', country: 'DE' },
      );
      const order = await orm.em.fork().findOneOrFail(OrderSchema, { id: created.order.id });
      await settleOrder(contextOn(orm.em.fork(), sold.ctx().deps), {
        orderId: order.id,
        payment: { gateway: 'test', providerRef: null, amountMinor: order.priceMinor, currency: order.currency },
        now: sold.clock.now(),
      });
    }
    const first = await listLicenses(sold.ctx(), { storeId: sold.storeId, limit: 3 });
    expect(first.hasMore).toBe(true);
    const second = await listLicenses(sold.ctx(), { storeId: sold.storeId, limit: 3, cursor: first.nextCursor! });
    // The cursor is sealed with its filter: with a product or a status it is refused.
    for (const filter of [{ productId: sold.productId }, { status: 'active' as const }]) {
      expect(
        await codeOf(listLicenses(sold.ctx(), { storeId: sold.storeId, ...filter, cursor: first.nextCursor! })),
      ).toBe('validation_failed');
    }
    const all = [...first.licenses, ...second.licenses];
    expect(all).toHaveLength(5);
    expect(all.at(-1)!.id).toBe(license.id);
    expect(all.map((l) => l.createdAt)).toEqual([...all.map((l) => l.createdAt)].sort().reverse());
    sold.clock.advance(10 * DAY - 3 * 60_000);
    // Now 10 days and 1 minute after the first assignment: the first two licenses have expired.
    const expired = await listLicenses(sold.ctx(), { storeId: sold.storeId, status: 'expired' });
    const active = await listLicenses(sold.ctx(), { storeId: sold.storeId, status: 'active' });
    expect(expired.licenses.length + active.licenses.length).toBe(5);
    expect(expired.licenses.map((l) => l.id)).toContain(license.id);
    for (const l of expired.licenses) expect(l.status).toBe('expired');
    for (const l of active.licenses) expect(l.status).toBe('active');
  });
});
