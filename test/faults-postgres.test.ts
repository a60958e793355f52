/**
 * Fault: PostgreSQL restarted under load. The built server runs against a PostgreSQL of the
 * test's own (test/support/private-postgres.ts), which is stopped (fast shutdown) while
 * checkouts, settlements, merchant reads and catalog reads keep coming, then started again.
 *
 * While it is down every request that needs it answers 503 in our error body, /readyz says not
 * ready and /healthz stays up; once it is back the same process serves again by itself. Then the
 * database is checked: no order, key assignment, payment or event half-written; settlements that
 * failed mid-way are sent again and either happen now or turn out to have happened (idempotent),
 * and every order.created reaches the webhook receiver.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_REDIS_URL } from './support/env.js';
import {
  checkout,
  createWebhook,
  deliveryLog,
  resend,
  seedShop,
  sleep,
  startLoad,
  tally,
  waitFor,
  type Load,
  type PlacedOrder,
  type Sample,
  type Shop,
} from './support/faults.js';
import { TEST_GATEWAY_SECRET, notify, signedNotification } from './support/payments.js';
import { startPrivatePostgres, type PrivatePostgres } from './support/private-postgres.js';
import { spawnServer, type RunningServer } from './support/server.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

let postgres: PrivatePostgres | undefined;
let server: RunningServer | undefined;
let receiver: WebhookReceiver | undefined;
let activeLoad: Load | undefined;
let sql: pg.Client | undefined;
const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-faults-pg-data-'));

beforeAll(async () => {
  postgres = await startPrivatePostgres();
  server = await spawnServer({
    DATABASE_URL: postgres.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: `svc-test:${randomBytes(6).toString('hex')}:`,
    TRUST_PROXY: '127.0.0.1',
    DATA_DIR: dataDir,
    APP_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    TEST_GATEWAY_SECRET,
    MERCHANT_RATE_LIMIT_PER_MINUTE: '100000',
    WEBHOOK_POLL_MS: '200',
    WEBHOOK_TIMEOUT_MS: '2000',
    WEBHOOK_LEASE_MS: '4000',
  });
}, 90_000);

afterAll(async () => {
  await activeLoad?.stop();
  await sql?.end().catch(() => undefined);
  if (server && server.process.exitCode === null && server.process.signalCode === null) server.process.kill('SIGKILL');
  await receiver?.close();
  await postgres?.destroy();
  rmSync(dataDir, { recursive: true, force: true });
});

const DB_DOWN_BODY = { error: 'The service is unavailable; try again shortly.', code: 'service_unavailable' };

interface LoggedError {
  type?: string;
  message?: string;
  code?: string;
  stack?: string;
}

/** A logged error that says the database could not be reached (what the outage must cause, and nothing else). */
function isDatabaseDown(err: LoggedError | undefined): boolean {
  if (!err) return false;
  if (
    err.code &&
    ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', '57P01', '57P02', '57P03', '08006', '08001', '08003'].includes(err.code)
  )
    return true;
  return /Connection terminated|Connection ended unexpectedly|is not queryable|Transaction query already complete|connect ECONNREFUSED|terminating connection|database system is (starting up|shutting down|not yet accepting)/i.test(
    err.message ?? '',
  );
}

/** Samples started inside [from, to). */
const between = (samples: Sample[], from: number, to: number) =>
  samples.filter((s) => s.startedAt >= from && s.startedAt < to);

/**
 * The store's orders in the database, each whole: its lines (as the cart that placed it, when
 * known), one order.created; pending ones with no payment, key or other event; paid ones completed
 * with one payment of the price, exactly their keys (each assigned once, to a line of theirs) and
 * order.paid + order.completed. No event without its order; no notification left half-handled.
 */
async function checkConsistency(
  sql: pg.Client,
  shop: Shop,
  placedOrders: PlacedOrder[],
  expected: { paid: string[]; maybePaid: string[] },
) {
  const orders = (
    await sql.query<{
      id: string;
      status: string;
      price_minor: string;
      paid_minor: string;
      key_count: number;
      paid_at: Date | null;
    }>(`select id, status, price_minor, paid_minor, key_count, paid_at from "order" where store_id = $1`, [
      shop.storeId,
    ])
  ).rows;
  const lines = (
    await sql.query<{ order_id: string; product_id: string; quantity: number }>(
      `select l.order_id, l.product_id, l.quantity from order_line l join "order" o on o.id = l.order_id where o.store_id = $1`,
      [shop.storeId],
    )
  ).rows;
  const events = (
    await sql.query<{ id: string; type: string; order_id: string | null }>(
      `select id, type, payload->'order'->>'id' as order_id from event where store_id = $1 and type like 'order.%'`,
      [shop.storeId],
    )
  ).rows;
  const payments = (
    await sql.query<{ order_id: string; amount_minor: string; status: string }>(
      `select p.order_id, p.amount_minor, p.status from payment p join "order" o on o.id = p.order_id where o.store_id = $1`,
      [shop.storeId],
    )
  ).rows;
  const keys = (
    await sql.query<{
      id: string;
      order_id: string;
      status: string;
      line_order: string | null;
      line_product: string | null;
    }>(
      `select k.id, k.order_id, k.status, l.order_id as line_order, l.product_id as line_product
     from license_key k left join order_line l on l.id = k.order_line_id where k.product_id = $1 and k.order_id is not null`,
      [shop.keyed.id],
    )
  ).rows;
  const notifications = (
    await sql.query<{ event_id: string; outcome: string }>(`select event_id, outcome from payment_notification`)
  ).rows;

  const placed = new Map(placedOrders.map((o) => [o.orderId, o]));
  const orderIds = new Set(orders.map((o) => o.id));
  for (const o of placedOrders)
    expect(orderIds.has(o.orderId), `order ${o.orderId} answered 200 but is missing`).toBe(true);
  const paid = new Set(expected.paid);
  const maybe = new Set(expected.maybePaid);
  for (const order of orders) {
    const own = lines.filter((l) => l.order_id === order.id);
    expect(own.length, `order ${order.id} has its lines`).toBeGreaterThan(0);
    const cart = placed.get(order.id)?.cart;
    if (cart)
      expect(own.map((l) => [l.product_id, l.quantity]).sort()).toEqual(
        cart.map((l) => [l.productId, l.quantity]).sort(),
      );
    const ownEvents = events.filter((e) => e.order_id === order.id);
    expect(
      ownEvents.filter((e) => e.type === 'order.created'),
      `order ${order.id}: one order.created`,
    ).toHaveLength(1);
    const ownPayments = payments.filter((p) => p.order_id === order.id);
    const ownKeys = keys.filter((k) => k.order_id === order.id);
    const keysWanted = own.filter((l) => l.product_id === shop.keyed.id).reduce((sum, l) => sum + l.quantity, 0);
    if (order.status === 'pending') {
      // Never paid, or its settlement failed as a whole: nothing of a payment exists.
      expect(paid.has(order.id) && !maybe.has(order.id), `order ${order.id} was paid but is pending`).toBe(false);
      expect([ownPayments.length, ownKeys.length, order.key_count, order.paid_at]).toEqual([0, 0, 0, null]);
      expect(ownEvents.map((e) => e.type)).toEqual(['order.created']);
    } else {
      // Paid: everything delivers automatically, so completed, with its payment, its keys and its events.
      expect(order.status, `order ${order.id}`).toBe('completed');
      expect(paid.has(order.id) || maybe.has(order.id), `order ${order.id} completed without a payment sent`).toBe(
        true,
      );
      expect(ownPayments.map((p) => [Number(p.amount_minor), p.status])).toEqual([[Number(order.price_minor), 'paid']]);
      expect(Number(order.paid_minor)).toBe(Number(order.price_minor));
      expect(ownKeys).toHaveLength(keysWanted);
      expect(order.key_count).toBe(keysWanted);
      for (const key of ownKeys)
        expect([key.status, key.line_order, key.line_product]).toEqual(['assigned', order.id, shop.keyed.id]);
      expect(ownEvents.map((e) => e.type).sort()).toEqual(['order.completed', 'order.created', 'order.paid']);
    }
  }
  // No key assigned twice, no event without its order, no notification left half-handled.
  expect(new Set(keys.map((k) => k.id)).size).toBe(keys.length);
  expect(events.filter((e) => !e.order_id || !orderIds.has(e.order_id))).toEqual([]);
  expect(notifications.filter((n) => n.outcome === 'received')).toEqual([]);
  return { orders, events };
}

describe('PostgreSQL restarted under load', () => {
  it(
    'answers 503 while it is down, recovers by itself, and leaves nothing half-written',
    { timeout: 120_000 },
    async () => {
      const base = server!.url;
      const shop: Shop = await seedShop(base, { keys: 800 });
      receiver = await startWebhookReceiver();
      const hook = await createWebhook(shop, `${receiver.url}/orders`, ['order.created']);

      // Steady load, then the faults: a restart (fast shutdown: transactions aborted, clients told)
      // and a crash (immediate shutdown: backends killed, crash recovery at the next start).
      const load = startLoad(shop, { clients: 5, pauseMs: 150 });
      activeLoad = load;
      await sleep(2_500);
      const outages: Array<{ mode: string; stopAt: number; downAt: number; startAt: number; recoveredAt: number }> = [];
      const inFlight: Array<{ mode: string; status: number; body: unknown }> = [];
      for (const mode of ['fast', 'immediate'] as const) {
        // A settlement held in flight at the moment of the fault: the test holds its order's row
        // lock, so the request waits inside its transaction when PostgreSQL goes.
        const cart = [{ productId: shop.keyed.id, quantity: 1 }];
        const placed = await checkout(shop, cart);
        expect(placed.status).toBe(200);
        const { orderId } = await placed.json();
        load.orders.push({ orderId, cart, amountMinor: 500 });
        const locker = new pg.Client({ connectionString: postgres!.url });
        locker.on('error', () => undefined); // it is cut off by the fault
        await locker.connect();
        await locker.query('begin');
        await locker.query('select id from "order" where id = $1 for update', [orderId]);
        const signed = signedNotification({ orderId, amount: 5 });
        const held = notify(base, signed);
        await waitFor(
          'the settlement to wait for the row lock',
          async () => {
            const { rows } = await locker.query(
              `select count(*)::int as n from pg_stat_activity where pg_backend_pid() = any(pg_blocking_pids(pid))`,
            );
            return rows[0].n > 0;
          },
          5_000,
          50,
        );

        const stopAt = Date.now();
        await postgres!.stop(mode);
        const downAt = Date.now();
        const heldAnswer = await held;
        inFlight.push({ mode, status: heldAnswer.status, body: await heldAnswer.json() });
        load.notifications.push({
          orderId,
          amountMinor: 500,
          body: signed.body,
          status: heldAnswer.status,
          outcome: undefined,
        });
        await locker.end().catch(() => undefined);

        // While it is down: the process lives, says it is not ready, and answers 503 quickly.
        await sleep(800);
        const health = await fetch(`${base}/healthz`);
        expect(health.status).toBe(200);
        const ready = await fetch(`${base}/readyz`);
        expect(ready.status).toBe(503);
        expect(await ready.json()).toEqual({ status: 'not ready', checks: { database: 'failing', redis: 'ok' } });
        const direct = await checkout(shop, [{ productId: shop.instant.id, quantity: 1 }]);
        expect(direct.status).toBe(503);
        expect(await direct.json()).toEqual(DB_DOWN_BODY);
        await sleep(2_000);

        const startAt = Date.now();
        await postgres!.start();
        const upAt = Date.now();
        // Back by itself: the same process (no restart) serves a checkout again within a bound.
        await waitFor(
          'a checkout to succeed after PostgreSQL came back',
          async () => (await checkout(shop, [{ productId: shop.instant.id, quantity: 1 }])).status === 200,
          10_000,
          200,
        );
        const recoveredAt = Date.now();
        expect(recoveredAt - upAt).toBeLessThan(10_000);
        expect((await fetch(`${base}/readyz`)).status).toBe(200);
        outages.push({ mode, stopAt, downAt, startAt, recoveredAt });
        await sleep(2_500);
      }
      await load.stop();
      expect(server!.process.exitCode).toBeNull();

      const { samples } = load;
      // For failure messages: the counts per kind and status, and what the server logged that was not the database going away.
      const odd = server!.logs.filter(
        (line) => line.level >= 50 && line.reqId !== undefined && !isDatabaseDown(line.err as LoggedError | undefined),
      );
      const summary = `${JSON.stringify(tally(samples))}\n${odd.map((line) => `${line.msg} ${JSON.stringify(line.err ?? '')}`).join('\n')}`;
      // Outside the outages (answered before a stop began, or started after the recovery): everything succeeds.
      const healthy = samples.filter((s) =>
        outages.every((o) => s.endedAt < o.stopAt || s.startedAt > o.recoveredAt + 500),
      );
      expect(
        healthy.filter((s) => s.status !== 200),
        summary,
      ).toEqual([]);
      for (const o of outages) {
        // While it is down (requests started after the stop finished, before the start began): 503 with our body.
        const down = between(samples, o.downAt + 200, o.startAt);
        expect(down.length, `${o.mode}: ${summary}`).toBeGreaterThan(10);
        expect(
          down.filter((s) => s.status !== 503 || JSON.stringify(s.body) !== JSON.stringify(DB_DOWN_BODY)),
          summary,
        ).toEqual([]);
        // ... and quickly: nobody waits for a pool or connect timeout (5 s).
        const waits = down.map((s) => s.endedAt - s.startedAt).sort((a, b) => a - b);
        expect(waits[Math.floor(waits.length / 2)]).toBeLessThan(1_000);
        expect(waits.at(-1)).toBeLessThan(4_500);
      }
      // The settlements caught inside their transaction by the fault: 503 too, on a restart and on a crash.
      expect(inFlight).toEqual([
        { mode: 'fast', status: 503, body: DB_DOWN_BODY },
        { mode: 'immediate', status: 503, body: DB_DOWN_BODY },
      ]);
      // Nothing ever answered anything but 200 or 503, nor failed to answer.
      expect(
        samples.filter((s) => s.status !== 200 && s.status !== 503),
        summary,
      ).toEqual([]);

      sql = new pg.Client({ connectionString: postgres!.url });
      await sql.connect();
      const failedSettlements = load.notifications.filter((n) => n.status !== 200);
      expect(failedSettlements.length, 'some settlements failed during the outages').toBeGreaterThan(0);

      // Right after the faults, each order is whole: pending with nothing of a payment, or completed
      // with all of it. An order whose settlement failed mid-way may be either (the answer may have
      // been lost after the commit), never in between.
      await checkConsistency(sql, shop, load.orders, {
        paid: load.notifications.filter((n) => n.status === 200).map((n) => n.orderId),
        maybePaid: failedSettlements.map((n) => n.orderId),
      });

      // Those settlements are sent again (as a gateway would): each either settles now or turns out
      // to have settled before (duplicate); nothing else.
      for (const n of failedSettlements) {
        const again = await resend(base, n.body);
        expect(again.status).toBe(200);
        expect(['settled', 'duplicate']).toContain((await again.json()).outcome);
      }
      // Every notification, sent once more, is a duplicate: nothing settles twice.
      for (const n of load.notifications) {
        const again = await resend(base, n.body);
        expect(again.status).toBe(200);
        expect((await again.json()).outcome).toBe('duplicate');
      }
      const { events } = await checkConsistency(sql, shop, load.orders, {
        paid: load.notifications.map((n) => n.orderId),
        maybePaid: [],
      });

      // The dispatcher came back too: every order.created reached the receiver, and its log ends in success.
      const created = events.filter((e) => e.type === 'order.created').map((e) => e.id);
      await waitFor(
        'every order.created at the receiver',
        () => created.every((id) => receiver!.received.some((hit) => hit.eventId === id)),
        20_000,
        250,
      );
      const log = await deliveryLog(shop, hook.id);
      for (const id of created) {
        const attempts = log.filter((d) => d.eventId === id);
        expect(attempts.at(-1)?.status, `delivery of ${id}: ${JSON.stringify(attempts)}`).toBe('success');
        expect(attempts.filter((d) => d.status === 'success')).toHaveLength(1);
      }
      expect(log.filter((d) => d.status === 'pending' || d.status === 'queued')).toEqual([]);

      // Errors in the server's log (level >= 50) all belong to an outage; those of requests all say the database was unreachable.
      await server!.logsSettled();
      const errors = server!.logs.filter((line) => line.level >= 50);
      const outside = errors.filter((line) =>
        outages.every((o) => Number(line.time) < o.stopAt - 200 || Number(line.time) > o.recoveredAt + 2_000),
      );
      expect(outside.map((line) => `${line.msg} ${JSON.stringify(line.err ?? '')}`)).toEqual([]);
      // Those of requests (the dispatcher's own passes may fail in other words while the database goes).
      const requestErrors = errors.filter((line) => line.reqId !== undefined);
      expect(requestErrors.length).toBeGreaterThan(0);
      const notDbDown = requestErrors.filter((line) => !isDatabaseDown(line.err as LoggedError | undefined));
      expect(notDbDown.map((line) => `${line.msg} ${JSON.stringify(line.err ?? '')}`)).toEqual([]);
    },
  );
});
