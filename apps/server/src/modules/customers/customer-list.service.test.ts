/**
 * The seller's customer list against the real database, without HTTP: every buyer by address,
 * signed in or not, keyset-paged, the e-mail prefix search (wildcards taken literally), another
 * store's customers never listed, and each row's paid orders, spend and last order from that
 * store's orders only.
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
  it("pages the store's customers by address, with their paid orders, spend and last order", async () => {
    const store = await createStore(orm.em.fork());
    const other = await createStore(orm.em.fork());
    const tag = randomBytes(4).toString('hex');
    const emails = ['ann', 'bob', 'cy', 'dee', 'eve'].map((name) => `${name}-${tag}@example.test`);
    const ids = await addCustomers(store.id, emails);
    await addCustomers(other.id, [`zed-${tag}@example.test`]);
    const last = new Date(T0 + 3 * 86_400_000);
    await insertOrders(workerDatabaseUrl(), store.id, [
      { customerEmail: emails[0], status: 'completed', priceMinor: 1000, createdAt: new Date(T0 + 86_400_000) },
      { customerEmail: emails[0], status: 'paid', priceMinor: 250, createdAt: new Date(T0 + 2 * 86_400_000) },
      { customerEmail: emails[0], status: 'refunded', priceMinor: 9000, createdAt: last },
      // A checkout never paid is nobody's purchase, and not the last order either.
      { customerEmail: emails[0], status: 'pending', priceMinor: 9000, createdAt: new Date(T0 + 4 * 86_400_000) },
      { customerEmail: emails[0], status: 'completed', priceMinor: 9000, currency: 'EUR', createdAt: new Date(T0) },
    ]);
    // The same address's order in another store is that store's.
    await insertOrders(workerDatabaseUrl(), other.id, [
      { customerEmail: emails[0], status: 'completed', priceMinor: 7777 },
    ]);

    const seen: Array<string | null> = [];
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
    // By address (ann, bob, cy, dee, eve), each exactly once.
    expect(seen).toEqual(ids);

    const all = await listStoreCustomers(context(), { storeId: store.id });
    const ann = all.customers.find((c) => c.email === emails[0])!;
    expect(ann).toEqual({
      id: ids[0],
      livemode: true,
      email: emails[0],
      createdAt: new Date(T0).toISOString(),
      orders: 2,
      spent: 12.5,
      lastOrderAt: last.toISOString(),
    });
    expect(all.customers.find((c) => c.email === emails[1])).toMatchObject({ orders: 0, spent: 0, lastOrderAt: null });
    // Nothing about the buyer's devices, only the fields the schema names.
    expect(Object.keys(ann).sort()).toEqual(['createdAt', 'email', 'id', 'lastOrderAt', 'livemode', 'orders', 'spent']);
  });

  it('lists every address that bought, signed in or not, once, and none that only left a checkout', async () => {
    const store = await createStore(orm.em.fork());
    const tag = randomBytes(4).toString('hex');
    const [signedIn, guest, refunded, abandoned] = ['a-signed', 'b-guest', 'c-refunded', 'd-abandoned'].map(
      (name) => `${tag}-${name}@example.test`,
    );
    const [accountId] = await addCustomers(store.id, [signedIn!]);
    await insertOrders(workerDatabaseUrl(), store.id, [
      { customerEmail: signedIn, status: 'completed', priceMinor: 500, createdAt: new Date(T0 + 1_000) },
      { customerEmail: guest, status: 'completed', priceMinor: 700, createdAt: new Date(T0 + 2_000) },
      { customerEmail: guest, status: 'processing', priceMinor: 300, createdAt: new Date(T0 + 3_000) },
      { customerEmail: refunded, status: 'refunded', priceMinor: 900, createdAt: new Date(T0 + 4_000) },
      { customerEmail: abandoned, status: 'pending', priceMinor: 900 },
      { customerEmail: abandoned, status: 'expired', priceMinor: 900 },
    ]);

    const first = await listStoreCustomers(context(), { storeId: store.id, limit: 2 });
    const second = await listStoreCustomers(context(), { storeId: store.id, limit: 2, cursor: first.nextCursor! });
    expect(second.hasMore).toBe(false);
    expect([...first.customers, ...second.customers]).toEqual([
      {
        id: accountId,
        livemode: true,
        email: signedIn,
        createdAt: new Date(T0).toISOString(),
        orders: 1,
        spent: 5,
        lastOrderAt: new Date(T0 + 1_000).toISOString(),
      },
      {
        id: null,
        livemode: true,
        email: guest,
        createdAt: new Date(T0 + 2_000).toISOString(),
        orders: 2,
        spent: 10,
        lastOrderAt: new Date(T0 + 3_000).toISOString(),
      },
      {
        id: null,
        livemode: true,
        email: refunded,
        createdAt: new Date(T0 + 4_000).toISOString(),
        orders: 0,
        spent: 0,
        lastOrderAt: new Date(T0 + 4_000).toISOString(),
      },
    ]);
    const found = await listStoreCustomers(context(), { storeId: store.id, search: `${tag}-B` });
    expect(found.customers.map((c) => c.email)).toEqual([guest]);
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
