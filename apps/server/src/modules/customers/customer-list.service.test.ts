/**
 * The seller's customer list against the real database, without HTTP: newest first, keyset-paged,
 * the e-mail prefix search (wildcards taken literally), another store's customers never listed,
 * and each row's paid orders and spend from that store's orders only.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../../test/support/env.js';
import { createStore } from '../../../../../test/support/factories.js';
import { codeOf, serviceContext } from '../../../../../test/support/in-process.js';
import { insertOrders } from '../../../../../test/support/orders.js';
import { openOrm, type Orm } from '../../db/orm.js';
import { newId } from '../../lib/ids.js';
import { CustomerSchema } from './customers.entities.js';
import { listStoreCustomers } from './customers.service.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 2 });
});
afterAll(() => orm?.close());

const T0 = Date.UTC(2026, 4, 1, 12, 0, 0);
/** One context's key for every call (cursors are sealed with it), a fresh EntityManager each. */
let base: ReturnType<typeof serviceContext>;
const context = () => {
  base ??= serviceContext(orm);
  return { ...base, em: orm.em.fork() };
};

async function addCustomers(storeId: string, emails: string[]): Promise<string[]> {
  const em = orm.em.fork();
  const ids = emails.map((email, i) => {
    const id = newId();
    em.create(CustomerSchema, { id, store: storeId, email, createdAt: new Date(T0 + i * 60_000) });
    return id;
  });
  await em.flush();
  return ids;
}

describe('listStoreCustomers', () => {
  it("pages the store's customers newest first, with their paid orders and spend", async () => {
    const store = await createStore(orm.em.fork());
    const other = await createStore(orm.em.fork());
    const tag = randomBytes(4).toString('hex');
    const emails = ['ann', 'bob', 'cy', 'dee', 'eve'].map((name) => `${name}-${tag}@example.test`);
    const ids = await addCustomers(store.id, emails);
    await addCustomers(other.id, [`zed-${tag}@example.test`]);
    await insertOrders(workerDatabaseUrl(), store.id, [
      { customerEmail: emails[0], status: 'completed', priceMinor: 1000 },
      { customerEmail: emails[0], status: 'paid', priceMinor: 250 },
      { customerEmail: emails[0], status: 'refunded', priceMinor: 9000 },
      { customerEmail: emails[0], status: 'pending', priceMinor: 9000 },
      { customerEmail: emails[0], status: 'completed', priceMinor: 9000, currency: 'EUR' },
    ]);
    // The same address's order in another store is that store's.
    await insertOrders(workerDatabaseUrl(), other.id, [
      { customerEmail: emails[0], status: 'completed', priceMinor: 7777 },
    ]);

    const seen: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 5; pages++) {
      const page = await listStoreCustomers(context(), { storeId: store.id, limit: 2, cursor });
      expect(page.limit).toBe(2);
      seen.push(...page.customers.map((c) => c.id));
      if (!page.hasMore) {
        expect(page.nextCursor).toBeNull();
        break;
      }
      cursor = page.nextCursor!;
    }
    expect(seen).toEqual([...ids].reverse());

    const all = await listStoreCustomers(context(), { storeId: store.id });
    const ann = all.customers.find((c) => c.email === emails[0])!;
    expect(ann).toEqual({
      id: ids[0],
      livemode: true,
      email: emails[0],
      createdAt: new Date(T0).toISOString(),
      orders: 2,
      spent: 12.5,
    });
    expect(all.customers.find((c) => c.email === emails[1])).toMatchObject({ orders: 0, spent: 0 });
    // Nothing about the buyer's devices, only the fields the schema names.
    expect(Object.keys(ann).sort()).toEqual(['createdAt', 'email', 'id', 'livemode', 'orders', 'spent']);
  });

  it('searches by e-mail prefix, case-insensitively, wildcards taken literally', async () => {
    const store = await createStore(orm.em.fork());
    const tag = randomBytes(4).toString('hex');
    await addCustomers(store.id, [
      `${tag}-alice@example.test`,
      `${tag}-albert@example.test`,
      `x${tag}-al@example.test`,
    ]);
    const found = await listStoreCustomers(context(), { storeId: store.id, search: `${tag.toUpperCase()}-AL` });
    expect(found.customers.map((c) => c.email)).toEqual([`${tag}-albert@example.test`, `${tag}-alice@example.test`]);
    expect((await listStoreCustomers(context(), { storeId: store.id, search: '%' })).customers).toEqual([]);
    expect((await listStoreCustomers(context(), { storeId: store.id, search: `${tag}_al` })).customers).toEqual([]);
  });

  it('refuses a cursor of another search', async () => {
    const store = await createStore(orm.em.fork());
    const tag = randomBytes(4).toString('hex');
    await addCustomers(store.id, [`${tag}-a@example.test`, `${tag}-b@example.test`]);
    const first = await listStoreCustomers(context(), { storeId: store.id, limit: 1 });
    expect(
      await codeOf(
        listStoreCustomers(context(), { storeId: store.id, limit: 1, search: tag, cursor: first.nextCursor! }),
      ),
    ).toBe('validation_failed');
  });
});
