/**
 * cluster: the service past one process, as it is deployed: two `svc serve` and two `svc worker`
 * processes on one PostgreSQL database and one Redis (one REDIS_KEY_PREFIX: one deployment).
 *
 * 1. Throughput: `POST /api/v1/checkout` at BENCH_CLUSTER_CONNECTIONS (32) connections, first all
 *    on one API process, then half on each (two autocannon instances at once), each process
 *    pre-warmed first. req/s, p50/p99 over both, CPU of each API, of PostgreSQL and of the
 *    workers. The machine has 2 cores: the second process adds a second event loop, not a
 *    second machine (see the ratio's note).
 * 2. Exactness across the two APIs: a route budget (licenses.activate, 60 per minute and
 *    address) spent by requests taking turns, then refused by both; an Idempotency-Key replayed
 *    by the other process, one order.
 * 3. 1,000 settlements against 500 keys (BENCH_CLUSTER_ORDERS / _KEYS), taking turns between the
 *    APIs, all at once (200 sockets): no key sold twice (the settlement benchmark's SQL checks).
 * 4. Webhooks: two endpoints on a receiver in this process take every order.created of the run
 *    (tens of thousands from the checkout load), sent by four dispatchers (both APIs and both
 *    workers). Once every delivery is marked sent, all four processes are stopped (each finishes
 *    what it is sending) and every delivery id must have been received exactly once.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import autocannon from 'autocannon';
import { startCpuAccount, waitForQuiet } from './lib/cpu.mjs';
import { freshDatabase, watchDatabase, withClient } from './lib/db.mjs';
import { fixed, heading, seconds, table } from './lib/format.mjs';
import { expectStatus, request } from './lib/http.mjs';
import { LOAD_DEFAULTS, percentile, prewarm } from './lib/load.mjs';
import { memoryOf, spawnLogged } from './lib/proc.mjs';
import {
  createProduct,
  importDist,
  importKeys,
  ownRedisPrefix,
  provisionMerchant,
  REDIS_URL,
  REPO_ROOT,
  SERVER_ENTRY,
  serviceEnv,
  serviceNodeArgs,
  startService,
  tempDir,
} from './lib/service.mjs';
import { insertPendingOrders, post, signed, sqlChecks } from './settlement.mjs';

const CONNECTIONS = Number(process.env.BENCH_CLUSTER_CONNECTIONS ?? 32);
const ORDERS = Number(process.env.BENCH_CLUSTER_ORDERS ?? 1000);
const KEYS = Number(process.env.BENCH_CLUSTER_KEYS ?? 500);
const SOCKETS = 200;

function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
}

/** A webhook receiver in this process: every delivery id it was sent, and how often. */
async function startReceiver() {
  const seen = new Map();
  let total = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const id = String(req.headers['x-service-delivery-id'] ?? '');
      seen.set(id, (seen.get(id) ?? 0) + 1);
      total++;
      res.writeHead(200, { 'content-length': '2' });
      res.end('ok');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    seen,
    total: () => total,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** Load on every target at once (its own autocannon each, `connections` each) for `durationS`. */
async function loadAll(targets, { connections, durationS, body }) {
  const times = [];
  const runs = targets.map(
    (target) =>
      new Promise((resolve, reject) => {
        const instance = autocannon(
          {
            url: target.url,
            method: 'POST',
            body,
            headers: { 'content-type': 'application/json' },
            connections,
            pipelining: 1,
            timeout: 10,
            duration: durationS,
            renderProgressBar: false,
            renderResultsTable: false,
            renderLatencyTable: false,
          },
          (error, result) => (error ? reject(error) : resolve(result)),
        );
        instance.on('response', (_client, _status, _bytes, responseTime) => times.push(responseTime));
      }),
  );
  const results = await Promise.all(runs);
  times.sort((a, b) => a - b);
  const elapsedS = Math.max(...results.map((r) => (new Date(r.finish).getTime() - new Date(r.start).getTime()) / 1000));
  return {
    rps: results.reduce((sum, r) => sum + r['2xx'], 0) / elapsedS,
    p50: percentile(times, 50),
    p99: percentile(times, 99),
    non2xx: results.reduce((sum, r) => sum + r.non2xx, 0),
    errors: results.reduce((sum, r) => sum + r.errors + r.timeouts, 0),
  };
}

export default {
  name: 'cluster',
  budgetS: 420,
  title: 'Two API processes and two workers on one PostgreSQL and one Redis',
  measures: `POST /api/v1/checkout at ${CONNECTIONS} connections on one API process vs spread over two; a route budget and an Idempotency-Key across them; ${ORDERS} settlements against ${KEYS} keys through both; every webhook delivery of the run received exactly once from four dispatchers`,

  async run() {
    const started = Date.now();
    const workDir = tempDir('svc-bench-cluster-');
    const db = await freshDatabase();
    const encryptionKey = randomBytes(32);
    const gatewaySecret = randomBytes(24).toString('hex');
    const redisKeyPrefix = ownRedisPrefix();
    const env = {
      REDIS_KEY_PREFIX: redisKeyPrefix,
      TRUST_PROXY: '127.0.0.1',
      TEST_GATEWAY_SECRET: gatewaySecret,
      WEBHOOK_POLL_MS: '200',
    };
    console.log(`database ${db.name}, Redis prefix ${redisKeyPrefix}`);
    // The first applies the migrations; the second starts on the migrated database.
    const apis = [];
    apis.push(await startService({ databaseUrl: db.url, encryptionKey, dataDir: workDir, env }));
    apis.push(
      await startService({
        databaseUrl: db.url,
        encryptionKey,
        dataDir: workDir,
        env,
        logFile: path.join(workDir, 'server-2.log'),
      }),
    );
    const workerArgs = await serviceNodeArgs();
    const workerProcessEnv = await serviceEnv();
    const workers = [1, 2].map((n) =>
      spawnLogged({
        label: `svc worker ${n}`,
        script: SERVER_ENTRY,
        args: ['worker'],
        nodeArgs: workerArgs,
        cwd: REPO_ROOT,
        logFile: path.join(workDir, `worker-${n}.log`),
        env: {
          NODE_ENV: 'test',
          LOG_LEVEL: 'warn',
          DATABASE_URL: db.url,
          REDIS_URL,
          APP_ENCRYPTION_KEY: encryptionKey.toString('base64'),
          DATA_DIR: workDir,
          ...workerProcessEnv,
          ...env,
        },
      }),
    );
    console.log(
      `APIs pid ${apis.map((a) => a.pid).join(', ')}; workers pid ${workers.map((w) => w.pid).join(', ')} (all up in ${seconds(Date.now() - started)})`,
    );

    const receiver = await startReceiver();
    const merchant = await provisionMerchant(apis[0].url, { stores: 1, scopes: ['order:read'], redisKeyPrefix });
    const [storeId] = merchant.storeIds;
    const { seal, deriveKey } = await importDist('lib/crypto.js');
    const { newId } = await importDist('lib/ids.js');
    await withClient(db.url, async (client) => {
      for (const endpoint of ['/a', '/b']) {
        const secret = `whsec_${randomBytes(24).toString('base64')}`;
        await client.query(
          `insert into webhook (id, store_id, name, url, secret_enc, secret_prefix, events, enabled, failure_count, created_at, updated_at)
           values ($1, $2, $3, $4, $5, $6, '{order.created}', true, 0, now(), now())`,
          [
            newId(),
            storeId,
            `bench ${endpoint}`,
            `${receiver.url}${endpoint}`,
            seal(deriveKey(encryptionKey, 'webhook-secret'), secret),
            secret.slice(0, 12),
          ],
        );
      }
    });
    const product = await createProduct(apis[0].url, merchant, storeId, {
      name: 'Cluster guide',
      price: 4,
      deliveryMethods: ['manualDelivery'],
    });
    const body = JSON.stringify({
      shopId: storeId,
      cart: [{ productId: product.id, quantity: 1 }],
      email: 'buyer@bench.test',
    });

    // 1. Throughput: one API, then both.
    const watch = await watchDatabase(db.name);
    for (const api of apis) {
      process.stdout.write(`  pre-warming API pid ${api.pid} ... `);
      const warm = await prewarm({
        urls: [`${api.url}/api/v1/checkout`],
        pid: api.pid,
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json' },
        connections: CONNECTIONS,
      });
      console.log(
        `${warm.requests.toLocaleString('en-US')} requests in ${warm.seconds} s; server CPU ms/request per 5 s: ${warm.curve.map((v) => fixed(v, 2)).join(' > ')}`,
      );
      check(warm.failures === 0, `pre-warm saw ${warm.failures} failures`);
    }
    const cases = [
      { name: 'one API process', targets: [apis[0]], connections: CONNECTIONS },
      { name: 'two API processes', targets: apis, connections: CONNECTIONS / 2 },
    ];
    const rows = [];
    for (const spec of cases) {
      await waitForQuiet({ thresholdCores: LOAD_DEFAULTS.otherCoresLimit });
      await loadAll(
        spec.targets.map((api) => ({ url: `${api.url}/api/v1/checkout` })),
        { connections: spec.connections, durationS: LOAD_DEFAULTS.warmupS, body },
      );
      const accounts = await Promise.all(
        apis.map((api, i) =>
          startCpuAccount({ serverPid: api.pid, backendPids: i === 0 ? watch.backendPids : async () => [] }),
        ),
      );
      const workerAccounts = await Promise.all(
        workers.map((worker) => startCpuAccount({ serverPid: worker.pid, backendPids: async () => [] })),
      );
      const result = await loadAll(
        spec.targets.map((api) => ({ url: `${api.url}/api/v1/checkout` })),
        { connections: spec.connections, durationS: LOAD_DEFAULTS.durationS, body },
      );
      const cpu = await Promise.all(accounts.map((account) => account.stop()));
      const workerCpu = await Promise.all(workerAccounts.map((account) => account.stop()));
      rows.push({
        ...result,
        name: spec.name,
        apiCores: cpu.map((c) => fixed(c.server, 2)).join(' + '),
        pgCores: cpu[0].postgres,
        workerCores: workerCpu.reduce((sum, c) => sum + c.server, 0),
        loadCores: cpu[0].load,
        otherCores: Math.max(
          0,
          cpu[0].total -
            cpu.reduce((sum, c) => sum + c.server, 0) -
            cpu[0].postgres -
            cpu[0].load -
            workerCpu.reduce((sum, c) => sum + c.server, 0),
        ),
        total: cpu[0].total,
      });
      console.log(
        `  ${spec.name}: ${fixed(result.rps, 0)} req/s, p50 ${fixed(result.p50, 1)} ms, p99 ${fixed(result.p99, 1)} ms, non-2xx ${result.non2xx}, errors ${result.errors}`,
      );
    }
    await watch.close();

    // 2. A route budget and an Idempotency-Key across the two.
    const address = `10.9.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;
    const activate = (api) =>
      request(`${api.url}/api/v1/licenses/activate`, {
        method: 'POST',
        headers: { 'x-forwarded-for': address },
        body: { productId: 'nosuchproduct000000000000', key: 'NOPE', instanceName: 'x' },
      });
    const spent = [];
    for (let i = 0; i < 60; i++) spent.push((await activate(apis[i % 2])).status);
    const refused = [(await activate(apis[0])).status, (await activate(apis[1])).status];
    check(
      spent.every((s) => s === 404) && refused.every((s) => s === 429),
      `60 activations taking turns answered ${[...new Set(spent)]}, the 61st and 62nd ${refused}`,
    );
    const idempotencyKey = `cluster-${randomBytes(8).toString('hex')}`;
    const first = await expectStatus(
      request(`${apis[0].url}/api/v1/checkout`, {
        method: 'POST',
        headers: { 'idempotency-key': idempotencyKey },
        body: JSON.parse(body),
      }),
      200,
      'checkout with a key',
    );
    const replay = await expectStatus(
      request(`${apis[1].url}/api/v1/checkout`, {
        method: 'POST',
        headers: { 'idempotency-key': idempotencyKey },
        body: JSON.parse(body),
      }),
      200,
      'the same on the other API',
    );
    check(
      replay.headers['idempotent-replayed'] === 'true' && replay.text === first.text,
      'the other API replays the first answer',
    );
    console.log(
      'checked: a route budget of 60 taken in turns by both APIs, then refused by each; an Idempotency-Key replayed by the other API',
    );

    // 3. Settlements through both APIs at once.
    const race = await createProduct(apis[0].url, merchant, storeId, {
      name: 'Cluster race',
      price: 9.99,
      deliveryMethods: ['licenseKeys'],
    });
    for (let i = 0; i < KEYS; i += 10_000) {
      const count = Math.min(10_000, KEYS - i);
      const imported = await importKeys(
        apis[0].url,
        merchant,
        storeId,
        race.id,
        Array.from({ length: count }, (_, n) => `CLUSTER-${i + n}-${randomBytes(6).toString('hex')}`),
      );
      check(imported.added === count, `keys imported (${JSON.stringify(imported)})`);
    }
    const ids = await withClient(db.url, (client) => insertPendingOrders(client, storeId, race.id, 'cl', ORDERS));
    const timestamp = Math.floor(Date.now() / 1000);
    const agent = new http.Agent({ keepAlive: true, maxSockets: SOCKETS });
    const t0 = performance.now();
    const answers = await Promise.all(
      ids.map((orderId, i) =>
        post(`${apis[i % 2].url}/api/payments/test/webhook`, agent, signed(gatewaySecret, orderId, timestamp), t0),
      ),
    );
    const settleMs = performance.now() - t0;
    agent.destroy();
    const outcomes = answers.reduce((acc, a) => ({ ...acc, [a.outcome]: (acc[a.outcome] ?? 0) + 1 }), {});
    const sql = await withClient(db.url, (client) => sqlChecks(client, race.id, ids));
    check(outcomes.settled === ORDERS, `every settlement answered settled (got ${JSON.stringify(outcomes)})`);
    check(
      sql.assigned === KEYS &&
        sql.distinct_keys === KEYS &&
        sql.doubled === 0 &&
        sql.completed === KEYS &&
        sql.processing === ORDERS - KEYS,
      `no key twice (got ${JSON.stringify(sql)})`,
    );
    console.log(
      `checked: ${ORDERS} settlements through both APIs in ${seconds(settleMs)}: ${KEYS} keys to ${KEYS} different orders, none twice; ${ORDERS - KEYS} orders wait for stock`,
    );

    // 4. Every delivery once: wait until all are sent, stop every process, count.
    const {
      rows: [events],
    } = await withClient(db.url, (client) =>
      client.query(`select count(*)::int as n from event where store_id = $1 and type = 'order.created'`, [storeId]),
    );
    const expected = 2 * events.n;
    const drainStarted = performance.now();
    let sent = 0;
    while (performance.now() - drainStarted < 180_000) {
      const {
        rows: [done],
      } = await withClient(db.url, (client) =>
        client.query(
          `select count(*)::int as n from webhook_delivery d join event e on e.id = d.event_id where e.store_id = $1 and d.status = 'success'`,
          [storeId],
        ),
      );
      sent = done.n;
      if (sent >= expected) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    check(sent === expected, `all ${expected} deliveries sent within 180 s (got ${sent})`);
    const drainS = (performance.now() - drainStarted) / 1000;
    const peak = [...apis, ...workers].map((child) => fixed(memoryOf(child.pid).hwmMiB, 0));
    await Promise.all([...apis.map((api) => api.stop()), ...workers.map((worker) => worker.stop())]);
    const { rows: attempts } = await withClient(db.url, (client) =>
      client.query(`select d.id from webhook_delivery d join event e on e.id = d.event_id where e.store_id = $1`, [
        storeId,
      ]),
    );
    const twice = [...receiver.seen.values()].filter((count) => count > 1).length;
    const missing = attempts.filter((row) => !receiver.seen.has(row.id)).length;
    await receiver.close();
    await db.drop();
    check(
      twice === 0 && missing === 0 && receiver.total() === attempts.length,
      `every delivery attempt received once (attempts ${attempts.length}, received ${receiver.total()}, twice ${twice}, missing ${missing})`,
    );
    console.log(
      `checked: ${events.n.toLocaleString('en-US')} order.created events, ${attempts.length.toLocaleString('en-US')} delivery attempts to 2 endpoints from 4 dispatchers, each received exactly once (the last sent ${fixed(drainS, 1)} s after the settlements)`,
    );

    console.log(heading('cluster results'));
    console.log(
      table(rows, [
        { key: 'name', label: 'case' },
        { key: 'rps', label: 'req/s', format: (v) => fixed(v, 0) },
        { key: 'p50', label: 'p50 ms', format: (v) => fixed(v, 1) },
        { key: 'p99', label: 'p99 ms', format: (v) => fixed(v, 1) },
        { key: 'non2xx', label: 'non-2xx', format: String },
        { key: 'apiCores', label: 'API cores' },
        { key: 'pgCores', label: 'pg cores', format: (v) => fixed(v, 2) },
        { key: 'workerCores', label: 'worker cores', format: (v) => fixed(v, 2) },
        { key: 'loadCores', label: 'load cores', format: (v) => fixed(v, 2) },
        { key: 'otherCores', label: 'other cores', format: (v) => fixed(v, 2) },
      ]),
    );
    const ratio = rows[1].rps / rows[0].rps;
    console.log(
      `two/one API processes throughput: ${fixed(ratio, 2)} (the machine has 2 cores, shared by both APIs, PostgreSQL, the workers and the load generator: above 1 only as far as one API process left a core idle)`,
    );
    console.log(`peak RSS (VmHWM) MiB: APIs ${peak.slice(0, 2).join(', ')}, workers ${peak.slice(2).join(', ')}`);
    console.log(`\ncluster took ${seconds(Date.now() - started)}`);
    const failed = rows.filter((row) => row.non2xx > 0 || row.errors > 0);
    if (failed.length > 0) throw new Error(`${failed.length} case(s) saw non-2xx answers or errors`);
    return { rows, ratio };
  },
};
