/**
 * The Home's setup checklist against the real database, without HTTP: a new store has every step
 * open, each step flips with the thing the seller does (and only that step), the checklist is
 * complete with all five, and another store's products, orders and keys never count.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../test/support/env.js';
import { uniqueSubdomain } from '../../../../test/support/factories.js';
import { serviceContext } from '../../../../test/support/in-process.js';
import { insertOrders } from '../../../../test/support/orders.js';
import { openOrm, type Orm } from '../db/orm.js';
import { ManualClock } from '../lib/clock.js';
import { createApiKey } from '../modules/api-keys/api-keys.service.js';
import { createProduct, deleteProduct } from '../modules/catalog/catalog.service.js';
import { createUser } from '../modules/identity/identity.service.js';
import type { ServiceContext } from '../modules/request/context.js';
import { StoreMemberSchema, StoreSchema } from '../modules/stores/stores.entities.js';
import { createStore, markStorePreviewed, updateStore } from '../modules/stores/stores.service.js';
import { storeOnboarding } from './store-onboarding.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 2 });
});
afterAll(() => orm?.close());

const ctx = (clock = new ManualClock(new Date('2026-11-28T12:00:00Z'))): ServiceContext => serviceContext(orm, clock);

async function newSeller() {
  const user = await createUser(ctx(), {
    email: `seller-${randomBytes(6).toString('hex')}@example.test`,
    password: 'correct horse battery staple',
  });
  const store = await createStore(ctx(), user, { name: 'Shop', subdomain: uniqueSubdomain() });
  const member = await orm.em.fork().findOneOrFail(StoreMemberSchema, { store: store.id, user: user.id });
  return { user, storeId: store.id, member };
}

/** The ids of the steps done, in the checklist's order. */
async function doneSteps(storeId: string): Promise<string[]> {
  const onboarding = await storeOnboarding(ctx(), { storeId });
  return onboarding.steps.filter((step) => step.done).map((step) => step.id);
}

describe('storeOnboarding', () => {
  it('lists the five steps in order, all open, for a new store', async () => {
    const { storeId } = await newSeller();
    expect(await storeOnboarding(ctx(), { storeId })).toEqual({
      steps: [
        { id: 'add_product', done: false },
        { id: 'payment_methods', done: false },
        { id: 'view_store', done: false },
        { id: 'test_purchase', done: false },
        { id: 'api_key', done: false },
      ],
      complete: false,
    });
  });

  it('flips each step with what the seller does, and is complete with all five', async () => {
    const { user, storeId, member } = await newSeller();
    const other = await newSeller();

    // Another store's product, paid test order and key are not this store's.
    await createProduct(
      { ...ctx(), livemode: false },
      { storeId: other.storeId, name: 'Theirs', price: 5, deliveryMethods: ['manualDelivery'] },
    );
    await insertOrders(workerDatabaseUrl(), other.storeId, [{ status: 'completed', livemode: false }]);
    await createApiKey(ctx(), other.user, { name: 'theirs', scopes: ['order:read'], storeIds: [other.storeId] });
    expect(await doneSteps(storeId)).toEqual([]);

    // A test product counts as a product.
    await createProduct(
      { ...ctx(), livemode: false },
      { storeId, name: 'Guide', price: 10, deliveryMethods: ['manualDelivery'] },
    );
    expect(await doneSteps(storeId)).toEqual(['add_product']);

    // Saving other settings is not choosing payment methods; saving them is, even unchanged.
    await updateStore(ctx(), member, { storeId, name: 'Renamed' });
    expect(await doneSteps(storeId)).toEqual(['add_product']);
    await updateStore(ctx(), member, { storeId, settings: { paymentMethods: ['manual', 'test'] } });
    expect(await doneSteps(storeId)).toEqual(['add_product', 'payment_methods']);

    await markStorePreviewed(ctx(), storeId);
    expect(await doneSteps(storeId)).toEqual(['add_product', 'payment_methods', 'view_store']);

    // A live order, or a test order not paid, is no test purchase; a paid test order is.
    await insertOrders(workerDatabaseUrl(), storeId, [
      { status: 'completed', livemode: true },
      { status: 'pending', livemode: false },
      { status: 'expired', livemode: false },
    ]);
    expect(await doneSteps(storeId)).not.toContain('test_purchase');
    await insertOrders(workerDatabaseUrl(), storeId, [{ status: 'refunded', livemode: false }]);
    expect(await doneSteps(storeId)).toContain('test_purchase');

    await createApiKey({ ...ctx(), livemode: false }, user, {
      name: 'CI',
      scopes: ['order:read'],
      storeIds: [storeId],
    });
    const finished = await storeOnboarding(ctx(), { storeId });
    expect(finished.steps.every((step) => step.done)).toBe(true);
    expect(finished.complete).toBe(true);
  });

  it('sets the setup marks once: a later save or visit keeps the first time', async () => {
    const { storeId, member } = await newSeller();
    const first = new Date('2026-11-28T12:00:00Z');
    const later = new Date('2026-11-29T12:00:00Z');
    await updateStore(ctx(new ManualClock(first)), member, { storeId, settings: { paymentMethods: ['manual'] } });
    await markStorePreviewed(ctx(new ManualClock(first)), storeId);
    await updateStore(ctx(new ManualClock(later)), member, { storeId, settings: { paymentMethods: ['test'] } });
    await markStorePreviewed(ctx(new ManualClock(later)), storeId);
    const store = await orm.em.fork().findOneOrFail(StoreSchema, { id: storeId });
    expect(store.paymentMethodsChosenAt).toEqual(first);
    expect(store.firstPreviewedAt).toEqual(first);
  });

  it('does not count a deleted product', async () => {
    const { storeId } = await newSeller();
    const product = await createProduct(ctx(), {
      storeId,
      name: 'Gone',
      price: 10,
      deliveryMethods: ['manualDelivery'],
    });
    expect(await doneSteps(storeId)).toEqual(['add_product']);
    await deleteProduct(ctx(), { storeId, productId: product.id });
    expect(await doneSteps(storeId)).toEqual([]);
  });
});
