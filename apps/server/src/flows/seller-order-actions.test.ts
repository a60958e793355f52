/**
 * The seller's view of an order against the real database, without HTTP: by cuid or `ORD-<n>`,
 * only within its own store (and mode). Orders are seeded straight into the database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../test/support/env.js';
import { createStore } from '../../../../test/support/factories.js';
import { codeOf, serviceContext } from '../../../../test/support/in-process.js';
import { insertOrders, type OrderSeed, type SeededOrder } from '../../../../test/support/orders.js';
import { openOrm, type Orm } from '../db/orm.js';
import { findStoreOrder } from '../modules/orders/order-lookup.js';
import type { ServiceContext } from '../modules/request/context.js';
import { getSellerOrder as getOrder } from './seller-order-actions.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 2 });
});
afterAll(() => orm?.close());

/** A context whose cursors all come from one key; a new EntityManager per call keeps reads fresh. */
function contextFor(): () => ServiceContext {
  const base = serviceContext(orm);
  return () => ({ ...base, em: orm.em.fork() });
}

async function newStore() {
  return createStore(orm.em.fork());
}

function seed(storeId: string, seeds: OrderSeed[]): Promise<SeededOrder[]> {
  return insertOrders(workerDatabaseUrl(), storeId, seeds);
}

describe('findStoreOrder and the seller’s getOrder', () => {
  it('finds an order by its cuid and by ORD-<n>', async () => {
    const store = await newStore();
    const [order] = await seed(store.id, [{ status: 'completed', note: 'seller note' }]);
    const ctx = contextFor();
    const byId = await getOrder(ctx(), { storeId: store.id, orderId: order!.id });
    const byNumber = await getOrder(ctx(), { storeId: store.id, orderId: `ORD-${order!.number}` });
    expect(byId).toEqual(byNumber);
    expect(byId).toMatchObject({
      id: order!.id,
      orderId: `ORD-${order!.number}`,
      storeId: store.id,
      status: 'completed',
      note: 'seller note',
    });
    expect((await findStoreOrder(ctx(), { storeId: store.id, orderId: `ORD-${order!.number}` })).id).toBe(order!.id);
  });

  it('answers not_found for an order of another store, by cuid or by number', async () => {
    const store = await newStore();
    const other = await newStore();
    const [foreign] = await seed(other.id, [{}]);
    const ctx = contextFor();
    expect(await codeOf(getOrder(ctx(), { storeId: store.id, orderId: foreign!.id }))).toBe('not_found');
    expect(await codeOf(getOrder(ctx(), { storeId: store.id, orderId: `ORD-${foreign!.number}` }))).toBe('not_found');
    expect(await codeOf(findStoreOrder(ctx(), { storeId: store.id, orderId: foreign!.id }))).toBe('not_found');
    // Its own store still finds it: the refusal is about the store, not the order.
    expect((await getOrder(ctx(), { storeId: other.id, orderId: foreign!.id })).id).toBe(foreign!.id);
  });

  it('answers not_found for an unknown id or number', async () => {
    const store = await newStore();
    const ctx = contextFor();
    expect(await codeOf(getOrder(ctx(), { storeId: store.id, orderId: 'doesnotexist000000000000' }))).toBe('not_found');
    expect(await codeOf(getOrder(ctx(), { storeId: store.id, orderId: 'ORD-999999999999' }))).toBe('not_found');
  });
});
