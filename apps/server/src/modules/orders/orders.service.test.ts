/**
 * Order reads against the real database, without HTTP: the merchant list (newest first by
 * createdAt then id, keyset-paged with signed cursors, filtered by status and an inclusive
 * from/to range), and the buyer's view limited to their e-mail in that store (the seller's
 * detail, by cuid or `ORD-<n>` within its own store, is flows/seller-order-actions.test.ts's). Orders are seeded straight into the database so
 * each test controls status and createdAt exactly.
 */
import { randomBytes } from 'node:crypto';
import type { TOrderStatus } from '@svc/schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../../test/support/env.js';
import { createStore } from '../../../../../test/support/factories.js';
import { codeOf, serviceContext } from '../../../../../test/support/in-process.js';
import { insertOrders, type OrderSeed, type SeededOrder } from '../../../../../test/support/orders.js';
import { openOrm, type Orm } from '../../db/orm.js';
import type { ServiceContext } from '../request/context.js';
import { getBuyerOrder, listBuyerOrders } from './order-reads.js';
import { listDashboardOrders, listOrders } from './orders.service.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 2 });
});
afterAll(() => orm?.close());

const T0 = Date.UTC(2026, 4, 1, 12, 0, 0);
const minutes = (n: number) => new Date(T0 + n * 60_000);
const uniqueBuyer = () => `buyer-${randomBytes(5).toString('hex')}@example.test`;

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

/** The ids in the order the rule says: createdAt desc, then id desc (ids are compared bytewise, as the C collation does). */
function newestFirst(orders: SeededOrder[]): string[] {
  return [...orders]
    .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
    .map((o) => o.id);
}

describe('listOrders', () => {
  it('lists newest first (createdAt desc, then id desc on ties)', async () => {
    const store = await newStore();
    // Three orders share one timestamp, so only the id can order them.
    const seeded = await seed(store.id, [
      { createdAt: minutes(1) },
      { createdAt: minutes(5) },
      { createdAt: minutes(3) },
      { createdAt: minutes(3) },
      { createdAt: minutes(3) },
    ]);
    const list = await listOrders(contextFor()(), { storeId: store.id });
    expect(list.orders.map((o) => o.id)).toEqual(newestFirst(seeded));
    expect(list.orders.map((o) => o.createdAt)).toEqual([5, 3, 3, 3, 1].map((m) => minutes(m).toISOString()));
    expect(list).toMatchObject({ limit: 50, hasMore: false, nextCursor: null });
  });

  it('pages with the keyset cursor without duplicates or gaps, across tied timestamps', async () => {
    const store = await newStore();
    const seeded = await seed(
      store.id,
      [0, 1, 1, 1, 2, 2, 3, 4, 4, 5, 6].map((m) => ({ createdAt: minutes(m) })),
    );
    const ctx = contextFor();
    const pages: string[][] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await listOrders(ctx(), { storeId: store.id, limit: 3, cursor });
      pages.push(page.orders.map((o) => o.id));
      expect(page.limit).toBe(3);
      if (!page.hasMore) {
        expect(page.nextCursor).toBeNull();
        break;
      }
      expect(page.nextCursor).toEqual(expect.any(String));
      cursor = page.nextCursor!;
      expect(pages.length, 'paging should end').toBeLessThan(10);
    }
    expect(pages.map((p) => p.length)).toEqual([3, 3, 3, 2]);
    expect(pages.flat()).toEqual(newestFirst(seeded));
  });

  it('says hasMore false with no cursor on a last page that is exactly full', async () => {
    const store = await newStore();
    await seed(
      store.id,
      [1, 2, 3, 4].map((m) => ({ createdAt: minutes(m) })),
    );
    const ctx = contextFor();
    const first = await listOrders(ctx(), { storeId: store.id, limit: 2 });
    expect(first.hasMore).toBe(true);
    const second = await listOrders(ctx(), { storeId: store.id, limit: 2, cursor: first.nextCursor! });
    expect(second.orders).toHaveLength(2);
    expect(second).toMatchObject({ hasMore: false, nextCursor: null });
  });

  it('lists only the orders of the store asked for', async () => {
    const store = await newStore();
    const other = await newStore();
    const mine = await seed(store.id, [{ createdAt: minutes(1) }, { createdAt: minutes(2) }]);
    await seed(other.id, [{ createdAt: minutes(3) }]);
    const list = await listOrders(contextFor()(), { storeId: store.id });
    expect(list.orders.map((o) => o.id).sort()).toEqual(mine.map((o) => o.id).sort());
    expect(list.orders.every((o) => o.storeId === store.id)).toBe(true);
  });

  it('filters by status', async () => {
    const store = await newStore();
    const statuses: TOrderStatus[] = ['pending', 'completed', 'refunded', 'completed', 'cancelled'];
    const seeded = await seed(
      store.id,
      statuses.map((status, i) => ({ status, createdAt: minutes(i) })),
    );
    const list = await listOrders(contextFor()(), { storeId: store.id, status: 'completed' });
    expect(list.orders.map((o) => o.id)).toEqual([seeded[3]!.id, seeded[1]!.id]);
    expect(list.orders.every((o) => o.status === 'completed')).toBe(true);
  });

  it('filters by from and to, both inclusive', async () => {
    const store = await newStore();
    const seeded = await seed(
      store.id,
      [0, 10, 20, 30, 40].map((m) => ({ createdAt: minutes(m) })),
    );
    const ctx = contextFor();
    const between = await listOrders(ctx(), {
      storeId: store.id,
      from: minutes(10).toISOString(),
      to: minutes(30).toISOString(),
    });
    expect(between.orders.map((o) => o.id)).toEqual([seeded[3]!.id, seeded[2]!.id, seeded[1]!.id]);
    const fromOnly = await listOrders(ctx(), { storeId: store.id, from: minutes(30).toISOString() });
    expect(fromOnly.orders.map((o) => o.id)).toEqual([seeded[4]!.id, seeded[3]!.id]);
    const toOnly = await listOrders(ctx(), { storeId: store.id, to: minutes(10).toISOString() });
    expect(toOnly.orders.map((o) => o.id)).toEqual([seeded[1]!.id, seeded[0]!.id]);
  });

  it('keeps the filters while paging', async () => {
    const store = await newStore();
    const seeded = await seed(
      store.id,
      (['paid', 'pending', 'paid', 'paid', 'pending', 'paid'] as TOrderStatus[]).map((status, i) => ({
        status,
        createdAt: minutes(i),
      })),
    );
    const ctx = contextFor();
    const first = await listOrders(ctx(), { storeId: store.id, status: 'paid', limit: 3 });
    const second = await listOrders(ctx(), { storeId: store.id, status: 'paid', limit: 3, cursor: first.nextCursor! });
    expect([...first.orders, ...second.orders].map((o) => o.id)).toEqual([5, 3, 2, 0].map((i) => seeded[i]!.id));
    expect(second.hasMore).toBe(false);
  });

  it('refuses a tampered, forged or foreign cursor with validation_failed', async () => {
    const store = await newStore();
    await seed(
      store.id,
      [1, 2, 3].map((m) => ({ createdAt: minutes(m) })),
    );
    const ctx = contextFor();
    const { nextCursor } = await listOrders(ctx(), { storeId: store.id, limit: 1 });
    const [body, signature] = nextCursor!.split('.') as [string, string];
    // The same position moved one microsecond: a well-formed body whose signature no longer fits.
    const [us, id] = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as [string, string];
    const moved = Buffer.from(JSON.stringify([String(BigInt(us) + 1n), id])).toString('base64url');
    const flipped = signature.slice(0, -1) + (signature.endsWith('a') ? 'b' : 'a');

    for (const cursor of [`${moved}.${signature}`, `${body}.${flipped}`, body, 'not-a-cursor', `${nextCursor}.extra`]) {
      expect(await codeOf(listOrders(ctx(), { storeId: store.id, cursor })), cursor).toBe('validation_failed');
    }
    // A cursor signed under another application key is just as foreign.
    expect(await codeOf(listOrders(contextFor()(), { storeId: store.id, cursor: nextCursor! }))).toBe(
      'validation_failed',
    );
  });

  it("refuses a cursor made for another store, another filter or the buyer's list", async () => {
    const [store, other] = [await newStore(), await newStore()];
    const buyer = uniqueBuyer();
    const seeds = [1, 2, 3].map((m) => ({ createdAt: minutes(m), status: 'paid' as const, customerEmail: buyer }));
    await seed(store.id, seeds);
    await seed(other.id, seeds);
    const ctx = contextFor();
    const { nextCursor } = await listOrders(ctx(), { storeId: store.id, status: 'paid', limit: 1 });
    const cursor = nextCursor!;
    // Its own list, store and filter page on, with a window written in another offset too.
    expect((await listOrders(ctx(), { storeId: store.id, status: 'paid', limit: 1, cursor })).orders).toHaveLength(1);
    const window = { from: '2026-05-01T12:00:00Z', to: '2026-05-01T14:05:00+02:00' };
    const windowed = await listOrders(ctx(), { storeId: store.id, limit: 1, ...window });
    const sameWindow = { from: '2026-05-01T13:00:00+01:00', to: '2026-05-01T12:05:00.000Z' };
    const next = await listOrders(ctx(), { storeId: store.id, limit: 1, ...sameWindow, cursor: windowed.nextCursor! });
    expect(next.orders).toHaveLength(1);

    for (const query of [
      { storeId: other.id, status: 'paid' as const },
      { storeId: store.id, status: 'pending' as const },
      { storeId: store.id },
      { storeId: store.id, status: 'paid' as const, from: '2026-05-01T00:00:00Z' },
    ]) {
      expect(await codeOf(listOrders(ctx(), { ...query, cursor })), JSON.stringify(query)).toBe('validation_failed');
    }
    expect(await codeOf(listBuyerOrders(ctx(), { storeId: store.id, customerEmail: buyer }, 1, cursor))).toBe(
      'validation_failed',
    );
  });
});

describe("listDashboardOrders' q: one order or one buyer, matched exactly", () => {
  it('finds an order by ORD-<n> (any case) or by its id, within the store and the other filters', async () => {
    const [store, other] = [await newStore(), await newStore()];
    const seeded = await seed(store.id, [
      { status: 'paid', createdAt: minutes(1) },
      { status: 'pending', createdAt: minutes(2) },
    ]);
    const [foreign] = await seed(other.id, [{ createdAt: minutes(3) }]);
    const ctx = contextFor();
    const target = seeded[0]!;
    const ids = async (q: string, extra: { status?: TOrderStatus } = {}) =>
      (await listDashboardOrders(ctx(), { storeId: store.id, q, ...extra })).orders.map((o) => o.id);

    expect(await ids(`ORD-${target.number}`)).toEqual([target.id]);
    expect(await ids(`  ord-${target.number} `)).toEqual([target.id]);
    expect(await ids(target.id)).toEqual([target.id]);
    expect(await ids(`ORD-${target.number}`, { status: 'paid' })).toEqual([target.id]);
    expect(await ids(`ORD-${target.number}`, { status: 'pending' })).toEqual([]);
    // Another store's order is not found by its number or id; nor is a part of a number.
    expect(await ids(`ORD-${foreign!.number}`)).toEqual([]);
    expect(await ids(foreign!.id)).toEqual([]);
    expect(await ids(`ORD-${String(target.number).slice(0, -1)}`)).not.toContain(target.id);
    // Text that is no order reference and no address matches nothing (no substring search).
    expect(await ids('Test Product')).toEqual([]);
    expect(await ids('ORD-99999999999999999999')).toEqual([]);
  });

  it("lists one buyer's orders by e-mail in any case, newest first, paged with the filter kept", async () => {
    const store = await newStore();
    const buyer = uniqueBuyer();
    const seeded = await seed(store.id, [
      { customerEmail: buyer, createdAt: minutes(1) },
      { customerEmail: uniqueBuyer(), createdAt: minutes(2) },
      { customerEmail: buyer, createdAt: minutes(3) },
      { customerEmail: buyer, createdAt: minutes(4), status: 'paid' },
    ]);
    const ctx = contextFor();
    const q = ` ${buyer.toUpperCase()} `;
    const first = await listDashboardOrders(ctx(), { storeId: store.id, q, limit: 2 });
    expect(first.orders.map((o) => o.id)).toEqual([seeded[3]!.id, seeded[2]!.id]);
    const second = await listDashboardOrders(ctx(), { storeId: store.id, q, limit: 2, cursor: first.nextCursor! });
    expect(second.orders.map((o) => o.id)).toEqual([seeded[0]!.id]);
    expect(second).toMatchObject({ hasMore: false, nextCursor: null });
    const paid = await listDashboardOrders(ctx(), { storeId: store.id, q, status: 'paid' });
    expect(paid.orders.map((o) => o.id)).toEqual([seeded[3]!.id]);
    // A part of the address is not a match.
    expect((await listDashboardOrders(ctx(), { storeId: store.id, q: buyer.slice(1) })).orders).toEqual([]);
    // The cursor pages only the list it came from: not the unfiltered one, nor another buyer's.
    expect(await codeOf(listDashboardOrders(ctx(), { storeId: store.id, cursor: first.nextCursor! }))).toBe(
      'validation_failed',
    );
    expect(
      await codeOf(listDashboardOrders(ctx(), { storeId: store.id, q: uniqueBuyer(), cursor: first.nextCursor! })),
    ).toBe('validation_failed');
  });

  it('without q lists as the merchant list does', async () => {
    const store = await newStore();
    const seeded = await seed(
      store.id,
      [1, 2, 3].map((m) => ({ createdAt: minutes(m) })),
    );
    const list = await listDashboardOrders(contextFor()(), { storeId: store.id });
    expect(list.orders.map((o) => o.id)).toEqual(newestFirst(seeded));
  });
});

describe('listBuyerOrders and getBuyerOrder', () => {
  it("lists only the buyer's orders in that store, newest first, with their lines", async () => {
    const store = await newStore();
    const other = await newStore();
    const buyer = uniqueBuyer();
    const mine = await seed(store.id, [
      {
        customerEmail: buyer,
        createdAt: minutes(1),
        lines: [{ productName: 'Alpha', quantity: 2, unitPriceMinor: 500 }],
      },
      {
        customerEmail: buyer,
        createdAt: minutes(2),
        lines: [
          { productName: 'Beta', quantity: 1, unitPriceMinor: 250 },
          { productName: 'Gamma', quantity: 3, unitPriceMinor: 100 },
        ],
      },
    ]);
    await seed(store.id, [{ customerEmail: uniqueBuyer(), createdAt: minutes(3) }]);
    await seed(other.id, [{ customerEmail: buyer, createdAt: minutes(4) }]);

    const list = await listBuyerOrders(contextFor()(), { storeId: store.id, customerEmail: buyer }, 10, undefined);
    expect(list.orders.map((o) => o.id)).toEqual([mine[1]!.id, mine[0]!.id]);
    expect(list).toMatchObject({ hasMore: false, nextCursor: null });
    expect(list.orders[0]!.lines).toEqual([
      { productName: 'Beta', quantity: 1, unitPrice: 2.5, plan: null },
      { productName: 'Gamma', quantity: 3, unitPrice: 1, plan: null },
    ]);
    expect(list.orders[1]).toMatchObject({
      orderId: `ORD-${mine[0]!.number}`,
      storeId: store.id,
      lines: [{ productName: 'Alpha', quantity: 2, unitPrice: 5 }],
    });
  });

  it("pages the buyer's orders with the keyset cursor", async () => {
    const store = await newStore();
    const buyer = uniqueBuyer();
    const mine = await seed(
      store.id,
      [1, 2, 2, 3].map((m) => ({ customerEmail: buyer, createdAt: minutes(m) })),
    );
    await seed(store.id, [{ customerEmail: uniqueBuyer(), createdAt: minutes(2) }]);
    const ctx = contextFor();
    const first = await listBuyerOrders(ctx(), { storeId: store.id, customerEmail: buyer }, 3, undefined);
    expect(first.hasMore).toBe(true);
    const second = await listBuyerOrders(ctx(), { storeId: store.id, customerEmail: buyer }, 3, first.nextCursor!);
    expect(second).toMatchObject({ hasMore: false, nextCursor: null });
    expect([...first.orders, ...second.orders].map((o) => o.id)).toEqual(newestFirst(mine));
  });

  it("opens one of the buyer's orders and answers not_found for anyone else's", async () => {
    const store = await newStore();
    const buyer = uniqueBuyer();
    const [mine] = await seed(store.id, [{ customerEmail: buyer }]);
    const [theirs] = await seed(store.id, [{ customerEmail: uniqueBuyer() }]);
    const ctx = contextFor();
    expect((await getBuyerOrder(ctx(), { storeId: store.id, customerEmail: buyer }, `ORD-${mine!.number}`)).id).toBe(
      mine!.id,
    );
    expect(await codeOf(getBuyerOrder(ctx(), { storeId: store.id, customerEmail: buyer }, theirs!.id))).toBe(
      'not_found',
    );
  });
});
