/**
 * The dashboard's order reads against the real database, without HTTP: the Home figures (paid,
 * unrefunded orders in the store currency, by UTC day, 30 days with zeros, other stores and other
 * currencies left out) and an order's timeline from its own stamps, the lifecycle writing them.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../../test/support/env.js';
import { createStore } from '../../../../../test/support/factories.js';
import { codeOf, serviceContext } from '../../../../../test/support/in-process.js';
import { insertOrders, type OrderSeed } from '../../../../../test/support/orders.js';
import { openOrm, type Orm } from '../../db/orm.js';
import { ManualClock } from '../../lib/clock.js';
import { inTransaction } from '../request/transaction.js';
import { expireStale, PAID_STATUSES, transition } from './order-lifecycle.js';
import { lockOrder } from './order-lookup.js';
import { PAID_STATUS_SQL } from './orders.repo.js';
import { getOrderTimeline, storeStats } from './orders.service.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 2 });
});
afterAll(() => orm?.close());

const NOW = new Date('2026-05-10T10:00:00Z');
const at = (iso: string) => new Date(iso);

function contextAt(now: Date) {
  return { ...serviceContext(orm, new ManualClock(now)), em: orm.em.fork() };
}

async function exec(sql: string, params: unknown[]): Promise<void> {
  const client = new pg.Client({ connectionString: workerDatabaseUrl() });
  await client.connect();
  try {
    await client.query(sql, params);
  } finally {
    await client.end();
  }
}

describe('storeStats', () => {
  it('holds the SQL status list equal to the statuses the lifecycle calls paid', () => {
    expect(PAID_STATUS_SQL).toBe(PAID_STATUSES.map((status) => `'${status}'`).join(', '));
  });

  it('sums paid, unrefunded orders of the store currency by UTC day, 30 days with zeros', async () => {
    const store = await createStore(orm.em.fork(), { currency: 'USD' });
    const other = await createStore(orm.em.fork(), { currency: 'USD' });
    const seeds: OrderSeed[] = [
      { status: 'completed', priceMinor: 1999, createdAt: at('2026-05-10T01:00:00Z') },
      { status: 'paid', priceMinor: 500, createdAt: at('2026-05-10T09:59:00Z') },
      // Yesterday's last second, and the window's first and just-before-first instants.
      { status: 'completed', priceMinor: 1000, createdAt: at('2026-05-09T23:59:59Z') },
      { status: 'processing', priceMinor: 700, createdAt: at('2026-05-01T12:00:00Z') },
      { status: 'completed', priceMinor: 300, createdAt: at('2026-04-11T00:00:00Z') },
      { status: 'completed', priceMinor: 999, createdAt: at('2026-04-10T23:59:59Z') },
      // Not revenue: refunded, never paid, or in another currency than the store's.
      { status: 'refunded', priceMinor: 5000, createdAt: at('2026-05-10T02:00:00Z') },
      { status: 'pending', priceMinor: 5000, createdAt: at('2026-05-10T03:00:00Z') },
      { status: 'cancelled', priceMinor: 5000, createdAt: at('2026-05-09T03:00:00Z') },
      { status: 'expired', priceMinor: 5000, createdAt: at('2026-05-08T03:00:00Z') },
      { status: 'completed', priceMinor: 4444, currency: 'EUR', createdAt: at('2026-05-10T04:00:00Z') },
    ];
    await insertOrders(workerDatabaseUrl(), store.id, seeds);
    await insertOrders(workerDatabaseUrl(), other.id, [
      { status: 'completed', priceMinor: 8888, createdAt: at('2026-05-10T05:00:00Z') },
    ]);

    const stats = await storeStats(contextAt(NOW), { storeId: store.id });
    expect(stats.currency).toBe('USD');
    expect(stats.today).toEqual({ revenue: 24.99, orders: 2 });
    expect(stats.last30Days).toEqual({ revenue: 44.99, orders: 5 });
    expect(stats.daily).toHaveLength(30);
    expect(stats.daily[0]).toEqual({ date: '2026-04-11', revenue: 3, orders: 1 });
    expect(stats.daily.at(-1)).toEqual({ date: '2026-05-10', revenue: 24.99, orders: 2 });
    const byDate = new Map(stats.daily.map((day) => [day.date, day]));
    expect(byDate.get('2026-05-09')).toEqual({ date: '2026-05-09', revenue: 10, orders: 1 });
    expect(byDate.get('2026-05-01')).toEqual({ date: '2026-05-01', revenue: 7, orders: 1 });
    expect(byDate.get('2026-05-02')).toEqual({ date: '2026-05-02', revenue: 0, orders: 0 });
    // Consecutive days, oldest first.
    const dates = stats.daily.map((day) => Date.parse(`${day.date}T00:00:00Z`));
    expect(dates.every((date, i) => i === 0 || date - dates[i - 1]! === 86_400_000)).toBe(true);
  });

  it('answers zeros for a store without orders, and in its own currency', async () => {
    const store = await createStore(orm.em.fork(), { currency: 'JPY' });
    await insertOrders(workerDatabaseUrl(), store.id, [
      { status: 'completed', priceMinor: 1500, currency: 'JPY', createdAt: at('2026-05-10T00:00:00Z') },
    ]);
    const stats = await storeStats(contextAt(NOW), { storeId: store.id });
    expect(stats.today).toEqual({ revenue: 1500, orders: 1 });
    const empty = await storeStats(contextAt(NOW), { storeId: (await createStore(orm.em.fork())).id });
    expect(empty.last30Days).toEqual({ revenue: 0, orders: 0 });
    expect(empty.daily.every((day) => day.revenue === 0 && day.orders === 0)).toBe(true);
  });
});

describe('getOrderTimeline', () => {
  it("lists the order's stamps oldest first, a settlement's paid before its completed", async () => {
    const store = await createStore(orm.em.fork());
    const [order] = await insertOrders(workerDatabaseUrl(), store.id, [
      { status: 'refunded', createdAt: at('2026-05-01T10:00:00Z') },
    ]);
    await exec(
      `update "order" set payment_method = 'stripe', paid_at = $2, completed_at = $2, delivered_at = $3, refunded_at = $4 where id = $1`,
      [order!.id, at('2026-05-01T10:05:00Z'), at('2026-05-02T08:00:00Z'), at('2026-05-03T09:00:00Z')],
    );
    const timeline = await getOrderTimeline(contextAt(NOW), { storeId: store.id, orderId: `ORD-${order!.number}` });
    expect(timeline).toEqual({
      orderId: `ORD-${order!.number}`,
      events: [
        { at: '2026-05-01T10:00:00.000Z', type: 'created', text: 'Order placed' },
        { at: '2026-05-01T10:05:00.000Z', type: 'paid', text: 'Paid with stripe' },
        { at: '2026-05-01T10:05:00.000Z', type: 'completed', text: 'Completed' },
        { at: '2026-05-02T08:00:00.000Z', type: 'delivered', text: 'Marked delivered' },
        { at: '2026-05-03T09:00:00.000Z', type: 'refunded', text: 'Refunded' },
      ],
    });
  });

  it('shows when the seller cancelled and when the lifetime ran out (the lifecycle stamps both)', async () => {
    const store = await createStore(orm.em.fork());
    const [toCancel, toExpire] = await insertOrders(workerDatabaseUrl(), store.id, [
      { status: 'pending', createdAt: at('2026-05-10T08:00:00Z') },
      // Long before any other test's order: the expiry below reaches every pending order up to it.
      { status: 'pending', createdAt: at('2001-01-01T00:00:00Z') },
    ]);
    const cancelAt = at('2026-05-10T09:00:00Z');
    // As the seller's cancel does (flows/seller-order-actions.ts): the order locked, the lifecycle's cancel.
    await inTransaction(contextAt(cancelAt), async (tx) =>
      transition(tx, await lockOrder(tx, toCancel!.id), 'cancel', cancelAt, { releaseCoupons: async () => {} }),
    );
    const cancelled = await getOrderTimeline(contextAt(NOW), { storeId: store.id, orderId: toCancel!.id });
    expect(cancelled.events.map((e) => [e.type, e.at])).toEqual([
      ['created', '2026-05-10T08:00:00.000Z'],
      ['cancelled', cancelAt.toISOString()],
    ]);

    const expireAt = at('2026-05-10T09:45:00Z');
    await expireStale(
      contextAt(expireAt),
      { createdBefore: at('2001-01-01T00:00:00Z'), now: expireAt },
      { releaseCoupons: async () => {} },
    );
    const expired = await getOrderTimeline(contextAt(NOW), { storeId: store.id, orderId: toExpire!.id });
    expect(expired.events.map((e) => [e.type, e.at])).toEqual([
      ['created', '2001-01-01T00:00:00.000Z'],
      ['expired', expireAt.toISOString()],
    ]);
  });

  it("is 404 for another store's order", async () => {
    const store = await createStore(orm.em.fork());
    const other = await createStore(orm.em.fork());
    const [order] = await insertOrders(workerDatabaseUrl(), other.id, [{}]);
    expect(await codeOf(getOrderTimeline(contextAt(NOW), { storeId: store.id, orderId: order!.id }))).toBe('not_found');
  });
});
