/**
 * renewals: the billing engine (apps/server/src/flows/billing-engine.ts) renewing N live monthly
 * subscriptions that fall due together, in `svc worker` processes as an operator runs them: one
 * worker, then (on a fresh database seeded alike) two. Beside it a floor, a bare `pg` program
 * (floors/renewals-floor.mjs) claiming and renewing the same rows with the statements a renewal
 * sends, one for one, with one process and then two, in the same sitting.
 *
 * Each case: a fresh database migrated by `svc migrate`; one store with a recurring product
 * (monthly, 9.00); N subscriptions written with SQL as a paid checkout leaves them (active, a
 * first order, the test card `succeeds` saved on it), all due at the same moment a minute ahead
 * (RENEWALS_DUE_S); the workers started before it. Measured: from the due moment to the last
 * subscription's period moved on; renewals per second, and the workers' CPU per renewal. After
 * each case, exactly once: N renewal orders (one per subscription, completed), N charges (one per
 * key, succeeded), N payments, N `order.paid` and N `subscription.renewed` events, nothing leased.
 *
 * Knobs: RENEWALS_N (100000), RENEWALS_DUE_S (60), BENCH_CASES (service-1,service-2,floor-1,floor-2).
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { check } from './lib/check.mjs';
import { freshDatabase, withClient } from './lib/db.mjs';
import { fixed, ratioLine, seconds, table } from './lib/format.mjs';
import { spawnLogged } from './lib/proc.mjs';
import {
  importDist,
  ownRedisPrefix,
  REDIS_URL,
  REPO_ROOT,
  SERVER_ENTRY,
  serviceEnv,
  serviceNodeArgs,
  tempDir,
} from './lib/service.mjs';
import { cpuSecondsOf } from './webhooks/children.mjs';

const N = Number(process.env.RENEWALS_N ?? 100_000);
const DUE_S = Number(process.env.RENEWALS_DUE_S ?? 60);
const CASES = (process.env.BENCH_CASES ?? 'service-1,service-2,floor-1,floor-2').split(',').filter(Boolean);
const FLOOR = path.join(REPO_ROOT, 'bench/floors/renewals-floor.mjs');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** `svc migrate` on the database; resolves when it exits 0. */
async function migrated(db, env, workDir) {
  const child = spawnLogged({
    label: 'svc migrate',
    script: SERVER_ENTRY,
    args: ['migrate'],
    env: { ...env, DATABASE_URL: db.url },
    cwd: REPO_ROOT,
    logFile: path.join(workDir, `migrate-${db.name}.log`),
  });
  const code = await child.exited;
  check(code === 0, `svc migrate exited ${code}: ${child.log().slice(-2000)}`);
}

/**
 * One store, its recurring product and N subscriptions due at `dueAt` (each with its completed
 * first order, the order's line and the saved card), in one transaction. Answers the period start.
 */
async function seed(db, dueAt) {
  const { newId } = await importDist('lib/ids.js');
  const storeId = newId();
  const productId = newId();
  const planId = newId();
  const periodEnd = dueAt;
  const periodStart = new Date(periodEnd);
  periodStart.setUTCMonth(periodStart.getUTCMonth() - 1);
  const ids = Array.from({ length: N }, () => newId());
  const each = [ids, ids.map(() => newId()), ids.map(() => newId()), ids.map(() => newId())];
  const rowsOf = `unnest($1::text[], $2::text[], $3::text[], $4::text[]) with ordinality
    as s(sub_id, order_id, line_id, method_id, i)`;
  await withClient(db.url, async (client) => {
    await client.query('begin');
    await client.query(
      `insert into store (id, name, subdomain, currency, created_at, updated_at) values ($1, 'Renewals', $2, 'USD', $3, $3)`,
      [storeId, `renewals-${randomBytes(4).toString('hex')}`, periodStart],
    );
    await client.query(
      `insert into product (id, store_id, slug, name, price_minor, status, delivery_methods, delivery_instructions,
         recurring, created_at, updated_at)
       values ($1, $2, 'editor-pro', 'Editor Pro', 900, 'active', '{deliveryInstructions}', 'Sign in with your e-mail.', true, $3, $3)`,
      [productId, storeId, periodStart],
    );
    await client.query(
      `insert into product_plan (id, product_id, livemode, position, interval, interval_count, price_minor, trial_days,
         active, created_at, updated_at) values ($1, $2, true, 0, 'month', 1, 900, 0, true, $3, $3)`,
      [planId, productId, periodStart],
    );
    await client.query(
      `insert into "order" (id, store_id, status, product_name, price_minor, subtotal_minor, paid_minor, currency,
         payment_method, customer_email, country, buyer_ip, paid_at, completed_at, delivered_at, created_at, updated_at,
         livemode, subscription_id, billing_reason)
       select order_id, $5, 'completed', 'Editor Pro', 900, 900, 900, 'USD', 'test', 'buyer-' || i || '@example.test',
         'DE', '203.0.113.9', $6, $6, $6, $6, $6, true, sub_id, 'subscription_create'
       from ${rowsOf}`,
      [...each, storeId, periodStart],
    );
    await client.query(
      `insert into order_line (id, order_id, product_id, product_name, quantity, unit_price_minor, position, livemode,
         plan_id, plan_interval, plan_interval_count, plan_trial_days)
       select line_id, order_id, $5, 'Editor Pro', 1, 900, 0, true, $6, 'month', 1, 0 from ${rowsOf}`,
      [...each, productId, planId],
    );
    await client.query(
      `insert into saved_payment_method (id, store_id, livemode, order_id, gateway, customer_ref, method_ref, created_at)
       select method_id, $5, true, order_id, 'test', null, 'succeeds', $6 from ${rowsOf}`,
      [...each, storeId, periodStart],
    );
    await client.query(
      `insert into subscription (id, store_id, livemode, product_id, product_name, plan_id, interval, interval_count,
         unit_price_minor, quantity, currency, status, customer_email, payment_method, first_order_id,
         latest_order_number, anchor, current_period_start, current_period_end, due_at, created_at, updated_at)
       select s.sub_id, $5, true, $6, 'Editor Pro', $7, 'month', 1, 900, 1, 'USD', 'active', o.customer_email, 'test',
         s.order_id, o.number, $8, $8, $9, $9, $8, $8
       from ${rowsOf} join "order" o on o.id = s.order_id`,
      [...each, storeId, productId, planId, periodStart, periodEnd],
    );
    await client.query('commit');
    await client.query('analyze');
  });
  return { storeId, periodStart, periodEnd };
}

const renewedCount = (client, periodStart) =>
  client
    .query('select count(*)::int as n from subscription where current_period_start > $1', [periodStart])
    .then((r) => r.rows[0].n);

/** Exactly once: every subscription one renewal order, one charge, one payment, each event once, no lease. */
async function checkExactlyOnce(db, seeded) {
  await withClient(db.url, async (client) => {
    const one = async (sql, params = []) => (await client.query(sql, params)).rows[0];
    const orders = await one(
      `select count(*)::int as n, count(distinct subscription_id)::int as subs,
              count(*) filter (where status = 'completed')::int as completed,
              count(*) filter (where period_start = $1)::int as in_period
         from "order" where billing_reason = 'subscription_cycle'`,
      [seeded.periodEnd],
    );
    check(
      orders.n === N && orders.subs === N && orders.completed === N && orders.in_period === N,
      `renewal orders ${JSON.stringify(orders)}, want ${N} each`,
    );
    const charges = await one(
      `select count(*)::int as n, count(distinct idempotency_key)::int as keys,
              count(*) filter (where status = 'succeeded')::int as succeeded
         from test_gateway_charge where idempotency_key like 'sub\\_%'`,
    );
    check(charges.n === N && charges.keys === N && charges.succeeded === N, `charges ${JSON.stringify(charges)}`);
    const payments = await one(
      `select count(*)::int as n, count(distinct p.order_id)::int as orders from payment p
         join "order" o on o.id = p.order_id where o.billing_reason = 'subscription_cycle'`,
    );
    check(payments.n === N && payments.orders === N, `payments ${JSON.stringify(payments)}`);
    // The seeded first orders have no events: every one of these is a renewal's.
    const events = await client.query(
      `select type, count(*)::int as n, count(distinct coalesce(payload->'order'->>'id', payload->'subscription'->>'id'))::int as distinct_ids
         from event where type in ('order.created', 'order.paid', 'subscription.renewed')
        group by type order by type`,
    );
    check(
      events.rows.length === 3 && events.rows.every((row) => row.n === N && row.distinct_ids === N),
      `events ${JSON.stringify(events.rows)}`,
    );
    const leased = await one('select count(*)::int as n from subscription where lease_until is not null');
    check(leased.n === 0, `${leased.n} subscriptions left leased`);
  });
}

/** Waits (polling the database) until every subscription renewed; answers the ms since `from`. */
async function untilRenewed(db, seeded, from, timeoutMs) {
  return withClient(db.url, async (client) => {
    for (;;) {
      const done = await renewedCount(client, seeded.periodStart);
      if (done === N) return Date.now() - from;
      check(Date.now() - from < timeoutMs, `${done} of ${N} renewed after ${seconds(timeoutMs)}`);
      await sleep(N > 20_000 ? 1_000 : 250);
    }
  });
}

async function serviceCase(workers, { env, workDir }) {
  const db = await freshDatabase();
  await migrated(db, env, workDir);
  const seedStarted = Date.now();
  const dueAt = new Date(Date.now() + DUE_S * 1000);
  const seeded = await seed(db, dueAt);
  const seededMs = Date.now() - seedStarted;
  const children = [];
  for (let i = 0; i < workers; i++) {
    const child = spawnLogged({
      label: `svc worker ${i + 1}`,
      script: SERVER_ENTRY,
      args: ['worker'],
      nodeArgs: await serviceNodeArgs(),
      env: { ...env, DATABASE_URL: db.url },
      cwd: REPO_ROOT,
      logFile: path.join(workDir, `worker-${workers}-${i + 1}.log`),
    });
    children.push(child);
  }
  for (const child of children)
    for (;;) {
      check(child.alive(), `${child.label} exited: ${child.log().slice(-2000)}`);
      if (child.lines().some((line) => line.msg === 'svc worker delivering webhooks')) break;
      await sleep(100);
    }
  const late = Date.now() - dueAt.getTime();
  if (late > 0)
    console.log(`  (seeding and starting took ${seconds(late)} past the due moment: measured from the workers' start)`);
  const from = Math.max(Date.now(), dueAt.getTime());
  if (late < 0) await sleep(-late);
  const cpuBefore = children.map((child) => cpuSecondsOf(child.pid));
  const ms = await untilRenewed(db, seeded, from, 3_600_000);
  const cpu = children.reduce((sum, child, i) => sum + cpuSecondsOf(child.pid) - cpuBefore[i], 0);
  // The last claims' leases clear when the engines find nothing more due.
  await sleep(1_500);
  await checkExactlyOnce(db, seeded);
  const failed = children.flatMap((child) => child.lines()).filter((line) => line.msg === 'billing step failed');
  for (const child of children) await child.stop();
  await db.drop();
  return {
    name: `service, ${workers} worker${workers > 1 ? 's' : ''}`,
    ms,
    rate: (N / ms) * 1000,
    cpuMs: (cpu * 1000) / N,
    failed: failed.length,
    seededMs,
  };
}

async function floorCase(processes, { env, workDir }) {
  const db = await freshDatabase();
  await migrated(db, env, workDir);
  const seeded = await seed(db, new Date(Date.now() - 1_000));
  const started = Date.now();
  const children = Array.from({ length: processes }, (_, i) =>
    spawnLogged({
      label: `renewals floor ${i + 1}`,
      script: FLOOR,
      env: { DATABASE_URL: db.url },
      cwd: REPO_ROOT,
      logFile: path.join(workDir, `floor-${processes}-${i + 1}.log`),
    }),
  );
  let cpu = 0;
  const sampler = setInterval(() => {
    cpu = children.reduce((sum, child) => sum + (child.alive() ? cpuSecondsOf(child.pid) : 0), 0) || cpu;
  }, 200);
  const codes = await Promise.all(children.map((child) => child.exited));
  clearInterval(sampler);
  const ms = Date.now() - started;
  check(
    codes.every((code) => code === 0),
    `floor exited ${codes}: ${children.map((c) => c.log().slice(-1500)).join('\n')}`,
  );
  const renewed = children.reduce((sum, child) => sum + (child.lines().at(-1)?.renewed ?? 0), 0);
  check(renewed === N, `the floor renewed ${renewed} of ${N}`);
  await checkExactlyOnce(db, seeded);
  await db.drop();
  return {
    name: `floor, ${processes} process${processes > 1 ? 'es' : ''}`,
    ms,
    rate: (N / ms) * 1000,
    cpuMs: (cpu * 1000) / N,
    failed: 0,
  };
}

export default {
  name: 'renewals',
  budgetS: 3600,
  title: 'subscription renewals by the billing engine (svc worker), one and two workers, vs a bare pg floor',
  measures:
    'N live subscriptions due at once renewed by one, then two svc worker processes (renewals/s, CPU per renewal, exactly once checked), against a bare pg program sending the same statements per renewal',

  async run() {
    const workDir = tempDir('svc-bench-renewals-');
    const env = {
      ...(await serviceEnv()),
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      REDIS_URL,
      REDIS_KEY_PREFIX: ownRedisPrefix(),
      APP_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      DATA_DIR: workDir,
    };
    console.log(`N = ${N} subscriptions per case, due ${DUE_S} s after seeding; cases: ${CASES.join(', ')}`);
    const results = {};
    for (const name of CASES) {
      const [kind, count] = name.split('-');
      check((kind === 'service' || kind === 'floor') && Number(count) > 0, `unknown case ${name}`);
      const result =
        kind === 'service'
          ? await serviceCase(Number(count), { env, workDir })
          : await floorCase(Number(count), { env, workDir });
      results[name] = result;
      console.log(
        `  ${result.name}: ${N} renewed in ${seconds(result.ms)}, ${fixed(result.rate, 1)}/s, ` +
          `${fixed(result.cpuMs, 2)} ms CPU per renewal (exactly once: checked)`,
      );
    }
    console.log(
      `\n${table(Object.values(results), [
        { key: 'name', label: 'case', align: 'left' },
        { key: 'ms', label: 'seconds', format: (v) => fixed(v / 1000, 1) },
        { key: 'rate', label: 'renewals/s', format: (v) => fixed(v, 1) },
        { key: 'cpuMs', label: 'process CPU ms/renewal', format: (v) => fixed(v, 2) },
        { key: 'failed', label: 'steps failed (logged)', format: String },
      ])}`,
    );
    for (const n of [1, 2])
      if (results[`service-${n}`] && results[`floor-${n}`])
        console.log(
          ratioLine(
            `ratio to floor, ${n} process${n > 1 ? 'es' : ''} (renewals/s)`,
            results[`service-${n}`].rate / results[`floor-${n}`].rate,
          ),
        );
    if (results['service-1'] && results['service-2'])
      console.log(ratioLine('two workers / one worker', results['service-2'].rate / results['service-1'].rate));
  },
};
