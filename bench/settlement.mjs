/**
 * settlement: 1,000 pending orders of a license-key product with 500 keys in stock, all paid
 * at once through the test gateway (POST /api/payments/test/webhook, signed notifications,
 * 1,000 concurrent requests over up to 200 sockets). Every settlement claims a key with
 * FOR UPDATE SKIP LOCKED inside the transaction that settles the order; the bench reports
 * the wall time and then checks in SQL that no key was sold twice: 500 keys assigned, 500
 * distinct keys, no order with two keys, 500 orders completed and 500 processing (paid,
 * waiting for stock). It runs this in rounds (default 2) on the same server, each with its
 * own product, keys and orders, to show it is stable.
 *
 * A round during which other processes used more than BENCH_OTHER_CORES (0.25) cores is run
 * again (BENCH_RETRIES, 1), with its own product, keys and orders; every attempt is printed
 * and checked.
 *
 * Knobs: BENCH_SETTLEMENT_ROUNDS (2), BENCH_SETTLEMENT_ORDERS (1000), BENCH_SETTLEMENT_KEYS
 * (500), BENCH_SETTLEMENT_SOCKETS (200).
 */
import { createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { startCpuAccount, waitForQuiet } from './lib/cpu.mjs';
import { freshDatabase, watchDatabase, withClient } from './lib/db.mjs';
import { fixed, heading, seconds, table } from './lib/format.mjs';
import { LOAD_DEFAULTS, percentile } from './lib/load.mjs';
import { memoryOf, trackPeakRss } from './lib/proc.mjs';
import {
  createProduct,
  importKeys,
  problemsAfterStart,
  provisionMerchant,
  startService,
  tempDir,
} from './lib/service.mjs';

const ROUNDS = Number(process.env.BENCH_SETTLEMENT_ROUNDS ?? 2);
const ORDERS = Number(process.env.BENCH_SETTLEMENT_ORDERS ?? 1000);
const KEYS = Number(process.env.BENCH_SETTLEMENT_KEYS ?? 500);
const SOCKETS = Number(process.env.BENCH_SETTLEMENT_SOCKETS ?? 200);
const PRICE_MINOR = 999;
const AMOUNT = 9.99;

function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
}

/**
 * Pending orders straight into the database, one line each (quantity 1) of `productId`: the
 * SQL of the key race test in test/payments-fulfilment.test.ts, at price_minor 999 USD.
 */
export async function insertPendingOrders(client, storeId, productId, tag, count) {
  const ids = [];
  const values = [];
  const params = [];
  for (let i = 0; i < count; i++) {
    const id = `settle${tag}${String(i).padStart(5, '0')}${randomBytes(4).toString('hex')}`;
    ids.push(id);
    params.push(id, storeId, productId);
    const n = params.length;
    values.push(`($${n - 2}, $${n - 1}, $${n})`);
  }
  await client.query(
    `with o as (insert into "order" (id, store_id, status, product_name, price_minor, currency, customer_email, created_at, updated_at)
       select v.id, v.store_id, 'pending', 'Race', ${PRICE_MINOR}, 'USD', 'race@example.test', now(), now() from (values ${values.join(', ')}) v(id, store_id, product_id) returning id)
     insert into order_line (id, order_id, product_id, product_name, quantity, unit_price_minor)
     select 'l' || substr(o.id, 2), o.id, $3, 'Race', 1, ${PRICE_MINOR} from o`,
    params,
  );
  return ids;
}

/** A payment.succeeded notification for `orderId`, signed like test/support/payments.ts. */
export function signed(secret, orderId, timestamp) {
  const body = JSON.stringify({
    id: `tevt_${randomBytes(8).toString('hex')}`,
    type: 'payment.succeeded',
    orderId,
    amount: AMOUNT,
    currency: 'USD',
  });
  const v1 = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
  return { body, signature: `t=${timestamp},v1=${v1}` };
}

/**
 * POSTs one notification through `agent` (requests beyond its socket cap wait in the agent
 * and go out as sockets free). Resolves { status, outcome, issuedToAnswerMs, socketToAnswerMs }.
 */
export function post(url, agent, notification, t0) {
  return new Promise((resolve) => {
    let onSocket;
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(notification.body),
          'x-test-signature': notification.signature,
        },
      },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => {
          const done = performance.now();
          let outcome;
          try {
            outcome = JSON.parse(Buffer.concat(chunks).toString('utf8')).outcome ?? `(no outcome, ${res.statusCode})`;
          } catch {
            outcome = `(not JSON, ${res.statusCode})`;
          }
          resolve({
            status: res.statusCode,
            outcome,
            issuedToAnswerMs: done - t0,
            socketToAnswerMs: done - onSocket,
            done,
          });
        });
        res.on('error', (error) =>
          resolve({
            status: 0,
            outcome: `(error: ${error.message})`,
            issuedToAnswerMs: performance.now() - t0,
            socketToAnswerMs: NaN,
            done: performance.now(),
          }),
        );
      },
    );
    req.on('socket', () => {
      onSocket = performance.now();
    });
    req.setTimeout(120_000, () => req.destroy(new Error('no answer in 120 s')));
    req.on('error', (error) =>
      resolve({
        status: 0,
        outcome: `(error: ${error.message})`,
        issuedToAnswerMs: performance.now() - t0,
        socketToAnswerMs: NaN,
        done: performance.now(),
      }),
    );
    req.end(notification.body);
  });
}

/** Server-side time per webhook request (Fastify's responseTime in the service's `request completed` lines) after `fromLine`. */
function serverTimes(logs, fromLine) {
  return logs
    .slice(fromLine)
    .filter(
      (line) =>
        line.msg === 'request completed' &&
        line.req?.url === '/api/payments/test/webhook' &&
        typeof line.responseTime === 'number',
    )
    .map((line) => line.responseTime)
    .sort((a, b) => a - b);
}

export async function sqlChecks(client, productId, ids) {
  const { rows } = await client.query(
    `select (select count(*)::int from license_key where product_id = $1 and status = 'assigned') as assigned,
            (select count(distinct id)::int from license_key where product_id = $1 and status = 'assigned') as distinct_keys,
            (select count(distinct value_hash)::int from license_key where product_id = $1 and status = 'assigned') as distinct_values,
            (select count(*)::int from license_key where product_id = $1 and status = 'available') as available,
            (select count(*)::int from "order" where id = any($2) and status = 'completed') as completed,
            (select count(*)::int from "order" where id = any($2) and status = 'processing') as processing,
            (select count(*)::int from "order" where id = any($2) and status = 'completed' and key_count = 1) as completed_one_key,
            (select count(*)::int from "order" where id = any($2) and status = 'processing' and key_count = 0) as processing_no_key,
            (select count(*)::int from (select order_id from license_key where product_id = $1 and order_id is not null group by order_id having count(*) > 1) d) as doubled,
            (select count(*)::int from license_key k join "order" o on o.id = k.order_id where k.product_id = $1 and o.status <> 'completed') as keys_on_uncompleted,
            (select count(*)::int from payment where order_id = any($2) and status = 'paid') as payments,
            (select count(*)::int from payment_notification where order_id = any($2) and outcome = 'settled') as notifications_settled,
            (select count(*)::int from event where type = 'order.paid' and payload->'order'->>'id' = any($2)) as paid_events,
            (select count(*)::int from event where type = 'order.completed' and payload->'order'->>'id' = any($2)) as completed_events`,
    [productId, ids],
  );
  return rows[0];
}

export default {
  name: 'settlement',
  /** Seconds this benchmark may take at most (run.mjs sums these into the run's time budget). */
  budgetS: 180,
  title: `${ORDERS.toLocaleString('en-US')} concurrent settlements against ${KEYS} license keys, ${ROUNDS} round(s)`,
  measures: `POST /api/payments/test/webhook x ${ORDERS} at once (<= ${SOCKETS} sockets) for orders of one product with ${KEYS} keys: wall time, and no key assigned twice (SQL)`,

  async run() {
    const started = Date.now();
    const workDir = tempDir('svc-bench-settlement-');
    const db = await freshDatabase();
    const encryptionKey = randomBytes(32);
    const gatewaySecret = randomBytes(24).toString('hex');
    console.log(`database ${db.name}`);

    const service = await startService({
      databaseUrl: db.url,
      encryptionKey,
      dataDir: workDir,
      env: { TEST_GATEWAY_SECRET: gatewaySecret },
    });
    console.log(`service pid ${service.pid} on ${service.url} (started in ${seconds(Date.now() - started)})`);
    const merchant = await provisionMerchant(service.url, {
      stores: 1,
      scopes: ['order:read'],
      redisKeyPrefix: service.redisKeyPrefix,
    });
    const [storeId] = merchant.storeIds;
    console.log(`seller ${merchant.email}, store ${storeId}`);
    const webhook = `${service.url}/api/payments/test/webhook`;
    const watch = await watchDatabase(db.name);

    // A round during which other processes kept more than BENCH_OTHER_CORES busy is run again
    // (BENCH_RETRIES times, with its own product, keys and orders), like a load case; every
    // attempt is printed and checked, and the cleanest attempt of each round is marked.
    const attempts = [];
    for (let round = 1; round <= ROUNDS; round++) {
      for (let attempt = 1; attempt <= 1 + LOAD_DEFAULTS.retries; attempt++) {
        const result = await settleRound(round, attempt);
        attempts.push(result);
        if (result.cpu.other <= LOAD_DEFAULTS.otherCoresLimit) break;
      }
    }
    for (let round = 1; round <= ROUNDS; round++) {
      const own = attempts.filter((row) => row.round === round);
      own.reduce((best, row) => (row.cpu.other < best.cpu.other ? row : best)).kept = true;
    }
    const rounds = attempts;

    async function settleRound(round, attempt) {
      // Set-up: a key product, its keys through the API, pending orders with SQL.
      const label = attempt === 1 ? `${round}` : `${round} (attempt ${attempt})`;
      const product = await createProduct(service.url, merchant, storeId, {
        name: `Settlement round ${label}`,
        price: AMOUNT,
        deliveryMethods: ['licenseKeys'],
      });
      const keys = Array.from(
        { length: KEYS },
        (_, i) => `BENCH-${round}-${attempt}-${String(i).padStart(5, '0')}-${randomBytes(6).toString('hex')}`,
      );
      const imported = await importKeys(service.url, merchant, storeId, product.id, keys);
      check(
        imported.added === KEYS && imported.duplicates === 0,
        `round ${label}: imported ${KEYS} keys (got ${JSON.stringify(imported)})`,
      );
      const ids = await withClient(db.url, (client) =>
        insertPendingOrders(client, storeId, product.id, `${String(round).padStart(2, '0')}${attempt}`, ORDERS),
      );
      const timestamp = Math.floor(Date.now() / 1000);
      const notifications = ids.map((orderId) => signed(gatewaySecret, orderId, timestamp));
      const logLine = service.logs().length;
      process.stdout.write(
        `  round ${label}: product ${product.id}, ${imported.added} keys, ${ids.length} pending orders; settling all at once ... `,
      );

      // All requests issued at once; the agent holds those beyond SOCKETS until a socket frees.
      const quiet = await waitForQuiet({ thresholdCores: LOAD_DEFAULTS.otherCoresLimit });
      const agent = new http.Agent({ keepAlive: true, maxSockets: SOCKETS });
      const rss = trackPeakRss(service.pid);
      const account = await startCpuAccount({ serverPid: service.pid, backendPids: watch.backendPids });
      const transactions0 = await watch.transactions();
      const t0 = performance.now();
      const answers = await Promise.all(notifications.map((notification) => post(webhook, agent, notification, t0)));
      const wallMs = Math.max(...answers.map((answer) => answer.done)) - t0;
      const cpu = await account.stop();
      const peakRssMiB = rss.done();
      agent.destroy();
      await new Promise((resolve) => setTimeout(resolve, 1500)); // statistics flush
      const transactions = (await watch.transactions()) - transactions0;

      const outcomes = {};
      for (const answer of answers) {
        const kind = answer.status === 200 ? answer.outcome : `${answer.status} ${answer.outcome}`;
        outcomes[kind] = (outcomes[kind] ?? 0) + 1;
      }
      const issued = answers.map((answer) => answer.issuedToAnswerMs).sort((a, b) => a - b);
      const onSocket = answers
        .map((answer) => answer.socketToAnswerMs)
        .filter(Number.isFinite)
        .sort((a, b) => a - b);
      const server = serverTimes(service.logs(), logLine);
      const sql = await withClient(db.url, (client) => sqlChecks(client, product.id, ids));
      const result = {
        round,
        attempt,
        label,
        requests: answers.length,
        wallMs,
        rps: answers.length / (wallMs / 1000),
        p50: percentile(issued, 50),
        p99: percentile(issued, 99),
        socketP50: percentile(onSocket, 50),
        socketP99: percentile(onSocket, 99),
        serverP50: percentile(server, 50),
        serverP99: percentile(server, 99),
        serverMax: server[server.length - 1],
        outcomes,
        peakRssMiB,
        cpu,
        serverCpuMsPer: (cpu.serverCpuSeconds * 1000) / answers.length,
        postgresCpuMsPer: (cpu.postgresCpuSeconds * 1000) / answers.length,
        transactionsPer: transactions / answers.length,
        startedQuiet: quiet.quiet,
        sql,
      };
      console.log(
        `${seconds(wallMs)} (${fixed(result.rps, 0)} settlements/s), outcomes ${JSON.stringify(outcomes)}; ` +
          `${sql.assigned} keys assigned, ${sql.completed} completed, ${sql.processing} processing, ${sql.doubled} orders with 2+ keys; ` +
          `cores busy: server ${fixed(cpu.server, 2)}, pg ${fixed(cpu.postgres, 2)}, load ${fixed(cpu.load, 2)}, other ${fixed(cpu.other, 2)}`,
      );
      return result;
    }
    await watch.close();
    const serviceHwm = memoryOf(service.pid).hwmMiB;
    const serviceLogs = service.logs();
    const serviceProblems = problemsAfterStart(serviceLogs);
    await service.stop();
    await db.drop();

    // Figures.
    const expected = {
      assigned: KEYS,
      distinct_keys: KEYS,
      distinct_values: KEYS,
      available: 0,
      completed: KEYS,
      processing: ORDERS - KEYS,
      completed_one_key: KEYS,
      processing_no_key: ORDERS - KEYS,
      doubled: 0,
      keys_on_uncompleted: 0,
      payments: ORDERS,
      notifications_settled: ORDERS,
      paid_events: ORDERS,
      completed_events: KEYS,
    };
    console.log(heading('settlement results'));
    console.log(
      table(rounds, [
        {
          key: 'label',
          label: 'round',
          align: 'left',
          format: (v, row) =>
            `${v}${row.cpu.other > LOAD_DEFAULTS.otherCoresLimit ? ' *' : ''}${row.kept && rounds.some((other) => other.round === row.round && other !== row) ? ' (kept)' : ''}`,
        },
        { key: 'requests', label: 'settlements', format: String },
        { key: 'wallMs', label: 'wall s', format: (v) => fixed(v / 1000, 2) },
        { key: 'rps', label: 'req/s', format: (v) => fixed(v, 0) },
        { key: 'p50', label: 'p50 ms', format: (v) => fixed(v, 0) },
        { key: 'p99', label: 'p99 ms', format: (v) => fixed(v, 0) },
        {
          key: 'socketP50',
          label: 'on-socket p50/p99 ms',
          format: (v, row) => `${fixed(v, 0)}/${fixed(row.socketP99, 0)}`,
        },
        {
          key: 'serverP50',
          label: 'server p50/p99 ms',
          format: (v, row) => `${fixed(v, 0)}/${fixed(row.serverP99, 0)}`,
        },
        {
          key: 'outcomes',
          label: 'outcomes',
          align: 'left',
          format: (v) =>
            Object.entries(v)
              .map(([kind, n]) => `${kind} ${n}`)
              .join(', '),
        },
        { key: 'peakRssMiB', label: 'peak RSS MiB', format: (v) => fixed(v, 0) },
        { key: 'serverCpuMsPer', label: 'server CPU ms/settlement', format: (v) => fixed(v, 2) },
        { key: 'postgresCpuMsPer', label: 'pg CPU ms/settlement', format: (v) => fixed(v, 2) },
        { key: 'transactionsPer', label: 'pg xacts/settlement', format: (v) => fixed(v, 2) },
        {
          key: 'cpu',
          label: 'cores: server/pg/load/other',
          format: (v) => [v.server, v.postgres, v.load, v.other].map((x) => fixed(x, 2)).join('/'),
        },
      ]),
    );
    console.log(
      `p50/p99: from issuing all ${ORDERS} requests at once to each answer (includes waiting for one of the ${SOCKETS} sockets); on-socket: from the request getting its socket; ` +
        `server: Fastify's responseTime from the service's log (includes waiting for one of the 10 database connections)`,
    );
    if (rounds.some((row) => row.cpu.other > LOAD_DEFAULTS.otherCoresLimit)) {
      console.log(
        `* other processes kept more than ${LOAD_DEFAULTS.otherCoresLimit} cores busy during this round; its wall time understates this machine (such a round is run again, up to ${LOAD_DEFAULTS.retries} time(s), and the cleanest attempt kept)`,
      );
    }

    console.log(heading('SQL checks per round'));
    const checkRows = Object.entries(expected).map(([key, want]) => ({
      key,
      want,
      ...Object.fromEntries(rounds.map((row, i) => [`r${i}`, row.sql[key]])),
    }));
    console.log(
      table(checkRows, [
        { key: 'key', label: 'check', align: 'left' },
        { key: 'want', label: 'expected', format: String },
        ...rounds.map((row, i) => ({
          key: `r${i}`,
          label: `round ${row.label}`,
          format: (v, r) => `${v}${v === r.want ? '' : ' !!'}`,
        })),
      ]),
    );
    console.log(`process peak RSS over the whole run (VmHWM): service ${fixed(serviceHwm, 0)} MiB`);
    console.log(
      `service log lines at warn or above after start-up: ${serviceProblems.length}${serviceProblems.length ? ` (first: ${JSON.stringify(serviceProblems[0]).slice(0, 300)})` : ''}`,
    );

    const problems = [];
    for (const row of rounds) {
      const notSettled = Object.entries(row.outcomes).filter(([kind]) => kind !== 'settled');
      if (notSettled.length > 0)
        problems.push(`round ${row.label}: not every answer was 200 settled: ${JSON.stringify(row.outcomes)}`);
      for (const [key, want] of Object.entries(expected))
        if (row.sql[key] !== want) problems.push(`round ${row.label}: ${key} is ${row.sql[key]}, expected ${want}`);
    }
    for (const problem of problems) console.log(`!! ${problem}`);
    if (problems.length === 0)
      console.log(
        `checked: every round${rounds.length > ROUNDS ? ' and attempt' : ''}, all ${ORDERS} answered 200 settled; ${KEYS} keys assigned to ${KEYS} different orders, none twice; ${KEYS} orders completed, ${ORDERS - KEYS} processing`,
      );
    console.log(`\nsettlement took ${seconds(Date.now() - started)}`);
    if (problems.length > 0) throw new Error(`${problems.length} check(s) failed`);
    return { rounds };
  },
};
