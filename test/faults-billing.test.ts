/**
 * Fault: a billing worker killed mid-batch. 2,000 live monthly subscriptions, all due now, each
 * with a saved test card that succeeds; two `svc worker` processes (each runs a billing engine,
 * apps/server/src/flows/billing-engine.ts) renew them. Once some renewals are recorded, one worker
 * is SIGKILLed with its claimed batch half done (some steps between their order and their charge,
 * some between the charge and its settlement, some not begun) and a new worker is started. The
 * lease is short (BILLING_LEASE_MS), so the killed worker's subscriptions are taken over quickly.
 *
 * Every subscription ends renewed exactly once: one renewal order per subscription and period,
 * paid; one test-gateway charge per (subscription, period) key; one `order.created`, one
 * `order.paid` per renewal order and one `subscription.renewed` per subscription; no lease left.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, openOrm } from '../apps/server/src/db/orm.js';
import { freshDatabase } from './support/databases.js';
import { TEST_REDIS_URL } from './support/env.js';
import { spawnWorker, waitFor, type RunningWorker } from './support/faults.js';
import { insertDueSubscriptions, type DueSubscriptions } from './support/subscriptions.js';

const COUNT = 2_000;
const LEASE_MS = 3_000;

let db: Awaited<ReturnType<typeof freshDatabase>>;
let client: pg.Client;
let seed: DueSubscriptions;
const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-faults-billing-'));
const workers: RunningWorker[] = [];

beforeAll(async () => {
  db = await freshDatabase();
  const orm = await openOrm(db.url, { poolMax: 2 });
  try {
    await migrate(orm);
    seed = await insertDueSubscriptions(orm, db.url, COUNT);
  } finally {
    await orm.close();
  }
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
});

afterAll(async () => {
  for (const worker of workers) await worker.kill();
  await client?.end();
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function count(sql: string, params: unknown[] = []): Promise<number> {
  const { rows } = await client.query<{ n: string }>(sql, params);
  return Number(rows[0]!.n);
}

/** Subscriptions whose period has moved on (their renewal settled). */
const renewed = () =>
  count('select count(*) as n from subscription where store_id = $1 and current_period_start > $2', [
    seed.storeId,
    seed.periodStart,
  ]);

describe('billing workers killed mid-batch', () => {
  it('renews every subscription exactly once under faults', { timeout: 240_000 }, async () => {
    const env = {
      DATABASE_URL: db.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: `svc-test:${randomBytes(6).toString('hex')}:`,
      DATA_DIR: dataDir,
      APP_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      BILLING_LEASE_MS: String(LEASE_MS),
      BILLING_POLL_MS: '200',
    };
    // Each one listed as soon as it runs, so afterAll kills it whatever fails next.
    const started = async () => {
      const worker = await spawnWorker(env);
      workers.push(worker);
      return worker;
    };
    const [first, second] = await Promise.all([started(), started()]);

    // Some renewals recorded: both engines are mid-batch (100 claimed at a time, 8 in flight each).
    const doneAtKill = await waitFor(
      'the first renewals',
      async () => {
        const done = await renewed();
        return done >= 150 ? done : undefined;
      },
      60_000,
      20,
    );
    await first.kill();
    const killedAt = Date.now();
    // What was in flight then (either worker's): claimed subscriptions, renewal orders written but not settled.
    const leasedAtKill = await count('select count(*) as n from subscription where lease_until > now()');
    const pendingAtKill = await count(
      `select count(*) as n from "order" where billing_reason = 'subscription_cycle' and status = 'pending'`,
    );
    expect(leasedAtKill, 'subscriptions claimed when the worker died').toBeGreaterThan(0);
    // The kill came with work left: subscriptions still due, some of them leased by the dead worker.
    const remaining = COUNT - (await renewed());
    expect(doneAtKill).toBeLessThan(COUNT);
    expect(remaining, 'renewals left when the worker died').toBeGreaterThan(COUNT / 4);
    const replacement = await started();

    await waitFor('every subscription renewed', async () => (await renewed()) === COUNT, 180_000, 250);
    // A step's lease is cleared with its settlement; a claim's when the engine finds nothing more due.
    await waitFor(
      'no subscription leased',
      async () =>
        (await count('select count(*) as n from subscription where store_id = $1 and lease_until is not null', [
          seed.storeId,
        ])) === 0,
      LEASE_MS + 10_000,
      100,
    );
    const took = Date.now() - killedAt;

    // One renewal order per subscription and period, paid (delivery by instructions completes it).
    const orders = await client.query<{ subscription_id: string; status: string; period_start: Date; id: string }>(
      `select id, subscription_id, status, period_start from "order"
        where store_id = $1 and billing_reason = 'subscription_cycle'`,
      [seed.storeId],
    );
    expect(orders.rows).toHaveLength(COUNT);
    expect(new Set(orders.rows.map((o) => o.subscription_id)).size).toBe(COUNT);
    expect(new Set(orders.rows.map((o) => o.status))).toEqual(new Set(['completed']));
    expect(new Set(orders.rows.map((o) => o.period_start.toISOString()))).toEqual(
      new Set([seed.periodEnd.toISOString()]),
    );
    // Each paid once: one payment row per renewal order.
    expect(
      await count(
        `select count(*) as n from payment p join "order" o on o.id = p.order_id
          where o.store_id = $1 and o.billing_reason = 'subscription_cycle'`,
        [seed.storeId],
      ),
    ).toBe(COUNT);

    // One charge per (subscription, period): the first attempt's key, succeeded.
    const charges = await client.query<{ idempotency_key: string; status: string }>(
      `select idempotency_key, status from test_gateway_charge where idempotency_key like 'sub\\_%'`,
    );
    expect(charges.rows).toHaveLength(COUNT);
    expect(new Set(charges.rows.map((c) => c.status))).toEqual(new Set(['succeeded']));
    const period = seed.periodEnd.toISOString();
    expect(new Set(charges.rows.map((c) => c.idempotency_key))).toEqual(
      new Set(seed.ids.map((id) => `sub_${id}_${period}_0`)),
    );

    // No event doubled: per renewal order one order.created and one order.paid, per subscription one renewal.
    const orderEvents = await client.query<{ type: string; order_id: string; n: string }>(
      `select type, payload->'order'->>'id' as order_id, count(*) as n from event
        where store_id = $1 and type in ('order.created', 'order.paid')
          and payload->'order'->>'id' in (select id from "order" where store_id = $1 and billing_reason = 'subscription_cycle')
        group by 1, 2`,
      [seed.storeId],
    );
    for (const type of ['order.created', 'order.paid']) {
      const rows = orderEvents.rows.filter((row) => row.type === type);
      expect(rows, type).toHaveLength(COUNT);
      expect(
        rows.filter((row) => row.n !== '1'),
        `${type} doubled`,
      ).toEqual([]);
    }
    const renewals = await client.query<{ subscription_id: string; n: string }>(
      `select payload->'subscription'->>'id' as subscription_id, count(*) as n from event
        where store_id = $1 and type = 'subscription.renewed' group by 1`,
      [seed.storeId],
    );
    expect(renewals.rows).toHaveLength(COUNT);
    expect(new Set(renewals.rows.map((row) => row.subscription_id))).toEqual(new Set(seed.ids));
    expect(renewals.rows.filter((row) => row.n !== '1')).toEqual([]);

    // No mail doubled: each buyer's mail of the renewal (its receipt) once (outbound_email's dedupe key).
    const mails = await client.query<{ to: string; subject: string; n: string }>(
      `select "to", subject, count(*) as n from outbound_email where "to" like 'buyer-%@example.test' group by 1, 2`,
    );
    expect(mails.rows.filter((row) => row.n !== '1')).toEqual([]);
    const mailed = mails.rows.length;

    // Every subscription active in its next period, not leased, due at its next period's end.
    const subscriptions = await client.query<{ status: string; n: string }>(
      `select status, count(*) as n from subscription where store_id = $1 and current_period_start = $2
          and lease_until is null and due_at = current_period_end group by 1`,
      [seed.storeId, seed.periodEnd],
    );
    expect(subscriptions.rows).toEqual([{ status: 'active', n: String(COUNT) }]);

    // The survivors stop cleanly.
    for (const worker of [second, replacement]) expect(await worker.stop()).toBe(0);
    console.log(
      `faults-billing: ${doneAtKill} of ${COUNT} renewed when a worker was killed, ${remaining} left ` +
        `(${leasedAtKill} leased, ${pendingAtKill} renewal orders pending); ` +
        `the rest done ${took} ms later; ${mailed} mails (each once); step failures logged: ${
          [...workers.flatMap((w) => w.logs)].filter((line) => line.msg === 'billing step failed').length
        }`,
    );
  });
});
