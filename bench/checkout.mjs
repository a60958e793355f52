/**
 * checkout: POST /api/v1/checkout (a pending order from a one-line cart of a manual-delivery
 * product, quantity 2, with the buyer's e-mail) at 32 concurrent connections, beside a floor:
 * a bare Fastify + pg server doing the same database work (floors/checkout-floor.mjs).
 *
 * Each server has its own database (both migrated by the service and provisioned through its
 * API: a seller, a store, the product), because the service's webhook dispatcher fans out
 * every outbox event of its database: with one shared database it would work off the floor's
 * events while the floor is measured. Afterwards the orders of each database are reconciled
 * with the 2xx answers its server gave: every order must have its line and its
 * `order.created` event, and there must be no more orders than answers plus the requests the
 * load generator abandoned in flight at the end of a timed run (a closing request-counted
 * pass, where nothing is abandoned, must match exactly).
 *
 * Knobs: BENCH_CHECKOUT_CONNECTIONS (32), BENCH_CHECKOUT_VERIFY (1000 requests in the
 * closing pass per server), BENCH_CASES (service,floor), BENCH_FLOOR_NODE_ARGS (node flags
 * for the floor, like BENCH_SERVER_NODE_ARGS for the service); load: see lib/load.mjs.
 */
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import autocannon from 'autocannon';
import { freshDatabase, watchDatabase, withClient } from './lib/db.mjs';
import { fixed, heading, ratioLine, seconds, table } from './lib/format.mjs';
import { expectStatus, request } from './lib/http.mjs';
import { addTallies, LOAD_DEFAULTS, measure, prewarm, printLoadResults, tallyOf } from './lib/load.mjs';
import { memoryOf, spawnNode } from './lib/proc.mjs';
import {
  createProduct,
  problemsAfterStart,
  provisionMerchant,
  REPO_ROOT,
  startService,
  tempDir,
} from './lib/service.mjs';
import { orderShape } from './lib/order-shape.mjs';

const CONNECTIONS = Number(process.env.BENCH_CHECKOUT_CONNECTIONS ?? 32);
const VERIFY_REQUESTS = Number(process.env.BENCH_CHECKOUT_VERIFY ?? 1000);
const PUBLIC_URL = 'https://shop.bench.test';
const BUYER = 'buyer@example.test';
const USER_AGENT = 'svc-bench/1 (autocannon)';
const QUANTITY = 2;
const PREWARM_MIN_S = Math.max(LOAD_DEFAULTS.prewarmMinS, 30);
const PREWARM_MIN_REQUESTS = 6000;

function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
}

function checkoutBody(storeId, productId) {
  return JSON.stringify({ shopId: storeId, cart: [{ productId, quantity: QUANTITY }], email: BUYER });
}

/** Orders of a store, and how many of them lack their line or their order.created event (or have extra ones); events without their order. */
async function reconcile(client, storeId) {
  const { rows } = await client.query(
    `with o as (select id from "order" where store_id = $1),
          l as (select order_id, count(*) as n from order_line where order_id in (select id from o) group by order_id),
          e as (select payload->'order'->>'id' as order_id, count(*) as n from event where store_id = $1 and type = 'order.created' group by 1)
     select (select count(*)::int from o) as orders,
            (select count(*)::int from o left join l on l.order_id = o.id where coalesce(l.n, 0) <> 1) as bad_lines,
            (select count(*)::int from o left join e on e.order_id = o.id where coalesce(e.n, 0) <> 1) as bad_events,
            (select count(*)::int from e left join o on o.id = e.order_id where o.id is null) as orphan_events`,
    [storeId],
  );
  return rows[0];
}

async function countOrders(client, storeId) {
  return (await client.query(`select count(*)::int as n from "order" where store_id = $1`, [storeId])).rows[0].n;
}

/** A request-counted autocannon run: it ends when every one of `amount` requests is answered, so nothing is abandoned. */
function fireAmount({ url, headers, body, amount, connections }) {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url,
        method: 'POST',
        headers,
        body,
        amount,
        connections,
        pipelining: 1,
        timeout: 10,
        renderProgressBar: false,
        renderResultsTable: false,
        renderLatencyTable: false,
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
}

export default {
  name: 'checkout',
  /** Seconds this benchmark may take at most (run.mjs sums these into the run's time budget). */
  budgetS: 300,
  title: `Checkout (POST /api/v1/checkout) at ${CONNECTIONS} connections, service vs floor`,
  measures: `POST /api/v1/checkout (one pending order + line + outbox event per request) at ${CONNECTIONS} connections, against a bare Fastify + pg floor doing the same inserts`,

  async run() {
    const started = Date.now();
    const workDir = tempDir('svc-bench-checkout-');
    const db = await freshDatabase();
    const floorDb = await freshDatabase();
    const encryptionKey = randomBytes(32);
    console.log(`databases ${db.name} (service), ${floorDb.name} (floor)`);
    const product = { name: 'Bench manual delivery', price: 9.99, deliveryMethods: ['manualDelivery'] };

    // 1. The service, a seller with a store and a manual-delivery product.
    const service = await startService({ databaseUrl: db.url, encryptionKey, dataDir: workDir, env: { PUBLIC_URL } });
    console.log(`service pid ${service.pid} on ${service.url} (started in ${seconds(Date.now() - started)})`);
    const merchant = await provisionMerchant(service.url, {
      stores: 1,
      scopes: ['order:read'],
      redisKeyPrefix: service.redisKeyPrefix,
    });
    const [serviceStore] = merchant.storeIds;
    const serviceProduct = await createProduct(service.url, merchant, serviceStore, product);
    console.log(`seller ${merchant.email}, store ${serviceStore}, product ${serviceProduct.id}`);

    // 2. The floor's database: migrated and provisioned the same way by a second service
    //    process, stopped before any load; then the floor, in its own process like the service.
    const setup = await startService({
      databaseUrl: floorDb.url,
      encryptionKey,
      dataDir: tempDir('svc-bench-checkout-setup-'),
      env: { PUBLIC_URL },
    });
    const floorMerchant = await provisionMerchant(setup.url, {
      stores: 1,
      scopes: ['order:read'],
      redisKeyPrefix: setup.redisKeyPrefix,
    });
    const [floorStore] = floorMerchant.storeIds;
    const floorProduct = await createProduct(setup.url, floorMerchant, floorStore, product);
    await setup.stop();
    check(typeof serviceProduct.id === 'string' && typeof floorProduct.id === 'string', 'products created');
    const floor = await spawnNode({
      label: 'checkout floor',
      script: path.join(REPO_ROOT, 'bench/floors/checkout-floor.mjs'),
      nodeArgs: (process.env.BENCH_FLOOR_NODE_ARGS ?? '').split(/\s+/).filter(Boolean),
      cwd: REPO_ROOT,
      logFile: path.join(workDir, 'floor.log'),
      env: { PORT: '0', FLOOR_DATABASE_URL: floorDb.url, FLOOR_PUBLIC_URL: PUBLIC_URL, NODE_ENV: 'production' },
      isReady: (line) =>
        typeof line.msg === 'string' && line.msg.startsWith('floor listening') && typeof line.port === 'number',
    });
    console.log(
      `floor pid ${floor.pid} on ${floor.url}: store ${floorStore}, product ${floorProduct.id} (made through the API of a set-up service process, since stopped)`,
    );

    const headers = { 'content-type': 'application/json', 'user-agent': USER_AGENT };
    const servers = {
      service: {
        url: `${service.url}/api/v1/checkout`,
        body: checkoutBody(serviceStore, serviceProduct.id),
        pid: service.pid,
        db,
        storeId: serviceStore,
        tally: addTallies(),
      },
      floor: {
        url: `${floor.url}/api/v1/checkout`,
        body: checkoutBody(floorStore, floorProduct.id),
        pid: floor.pid,
        db: floorDb,
        storeId: floorStore,
        tally: addTallies(),
      },
    };

    // 3. One checkout on each: 200 { url, orderId }, a 32-byte token whose SHA-256 is stored, and the same rows.
    const shapes = {};
    for (const [label, server] of Object.entries(servers)) {
      const response = await expectStatus(
        request(server.url, { method: 'POST', headers: { 'user-agent': USER_AGENT }, body: JSON.parse(server.body) }),
        200,
        `${label} checkout`,
      );
      server.tally = addTallies(server.tally, { sent: 1, answered: 1, ok: 1 });
      const { url, orderId } = response.json ?? {};
      check(
        isDeepStrictEqual(Object.keys(response.json).sort(), ['orderId', 'url']),
        `${label} answers exactly { url, orderId } (got ${response.text.slice(0, 200)})`,
      );
      const match = /^(.+)\/checkout\/([^/?]+)\?token=([^&]+)$/.exec(url);
      check(
        match && match[1] === PUBLIC_URL && match[2] === orderId,
        `${label} url is ${PUBLIC_URL}/checkout/<orderId>?token=... (got ${url})`,
      );
      const token = decodeURIComponent(match[3]);
      check(Buffer.from(token, 'base64url').length === 32, `${label} token is 32 random bytes, base64url`);
      const shape = await withClient(server.db.url, (client) => orderShape(client, orderId));
      check(
        shape.tokenHash === createHash('sha256').update(token).digest('hex'),
        `${label} stores the SHA-256 of the token`,
      );
      shapes[label] = shape;
    }
    if (!isDeepStrictEqual(shapes.service.shape, shapes.floor.shape)) {
      console.log('service:', JSON.stringify(shapes.service.shape, null, 1));
      console.log('floor:  ', JSON.stringify(shapes.floor.shape, null, 1));
      check(
        false,
        'the floor writes the same order, line and event as the service (ids, number, times and token hash aside)',
      );
    }
    console.log(
      `checked: both answer 200 { url, orderId } with a 32-byte token whose SHA-256 is stored, and write the same order, line and order.created event ` +
        `(${shapes.service.shape.lines.length} line, ${shapes.service.shape.events.length} event; order numbers ${shapes.service.number} and ${shapes.floor.number}, each from its database's sequence)`,
    );

    // 4. Load: each server pre-warmed, then measured; the other one sits idle.
    console.log(
      `load: ${CONNECTIONS} connections; each server pre-warmed until its CPU per request settles ` +
        `(at least ${PREWARM_MIN_REQUESTS} requests and ${Math.min(PREWARM_MIN_S, LOAD_DEFAULTS.prewarmMaxS)} s for the service, ${Math.min(LOAD_DEFAULTS.prewarmMinS, LOAD_DEFAULTS.prewarmMaxS)} s for the floor; at most ${LOAD_DEFAULTS.prewarmMaxS} s), then ${LOAD_DEFAULTS.warmupS} s warm-up + ${LOAD_DEFAULTS.durationS} s measured`,
    );
    const allCases = [
      { id: 'service', name: 'service checkout', server: 'service' },
      { id: 'floor', name: 'floor checkout', server: 'floor' },
    ];
    const cases = process.env.BENCH_CASES
      ? process.env.BENCH_CASES.split(',').map(
          (id) => allCases.find((spec) => spec.id === id.trim()) ?? check(false, `unknown case ${id}`),
        )
      : allCases;
    for (const server of Object.values(servers)) server.watch = await watchDatabase(server.db.name);
    const results = [];
    const warmups = {};
    for (const spec of cases) {
      const server = servers[spec.server];
      process.stdout.write(`  pre-warming the ${spec.server} ... `);
      // The service needs ~6,000 checkouts before its CPU per request settles (~30 s on a quiet
      // machine; a noisy 5 s slice can stop the pre-warm's "no longer falling" test early), so at
      // least PREWARM_MIN_S (the service) and PREWARM_MIN_REQUESTS (within BENCH_PREWARM_MAX).
      const warm = await prewarm({
        urls: [server.url],
        headers,
        method: 'POST',
        body: server.body,
        pid: server.pid,
        connections: CONNECTIONS,
        minS: spec.server === 'service' ? PREWARM_MIN_S : LOAD_DEFAULTS.prewarmMinS,
        minRequests: PREWARM_MIN_REQUESTS,
      });
      server.tally = addTallies(server.tally, warm.tally);
      warmups[spec.server] = warm;
      console.log(
        `${warm.requests.toLocaleString('en-US')} requests in ${warm.seconds} s; server CPU ms/request per 5 s: ${warm.curve.map((v) => fixed(v, 2)).join(' > ')}`,
      );
      check(warm.failures === 0, `pre-warm of the ${spec.server} saw ${warm.failures} non-2xx answers or errors`);
      process.stdout.write(`  ${spec.name} ... `);
      const result = await measure({
        name: spec.name,
        url: server.url,
        headers,
        method: 'POST',
        body: server.body,
        pid: server.pid,
        connections: CONNECTIONS,
        backendPids: server.watch.backendPids,
        transactions: server.watch.transactions,
      });
      server.tally = addTallies(server.tally, result.tallyAll);
      results.push(result);
      console.log(
        `${fixed(result.rps, 0)} req/s, p50 ${fixed(result.p50, 1)} ms, p99 ${fixed(result.p99, 1)} ms, non-2xx ${result.non2xx}; ` +
          `cores busy: server ${fixed(result.cpu.server, 2)}, pg ${fixed(result.cpu.postgres, 2)}, load ${fixed(result.cpu.load, 2)}, other ${fixed(result.cpu.other, 2)}`,
      );
      check(
        result.warmupFailuresAll === 0,
        `the ${spec.server}'s warm-up runs saw ${result.warmupFailuresAll} non-2xx answers or errors`,
      );
    }
    for (const server of Object.values(servers)) await server.watch.close();

    // 5. Rows against answers. Timed runs end by abandoning the requests still in flight (their
    //    orders may still be written); a closing request-counted pass abandons none and must match exactly.
    await new Promise((resolve) => setTimeout(resolve, 1000)); // let abandoned requests finish
    const ledger = {};
    for (const [label, server] of Object.entries(servers)) {
      await withClient(server.db.url, async (client) => {
        const before = await reconcile(client, server.storeId);
        const exactBefore = await countOrders(client, server.storeId);
        const pass =
          VERIFY_REQUESTS > 0
            ? await fireAmount({
                url: server.url,
                headers,
                body: server.body,
                amount: VERIFY_REQUESTS,
                connections: CONNECTIONS,
              })
            : undefined;
        await new Promise((resolve) => setTimeout(resolve, 200));
        const exactAfter = await countOrders(client, server.storeId);
        const after = await reconcile(client, server.storeId);
        const passTally = pass ? tallyOf(pass) : addTallies();
        const abandoned = server.tally.sent - server.tally.answered;
        ledger[label] = {
          label,
          answered2xx: server.tally.ok,
          nonOk: server.tally.answered - server.tally.ok,
          abandoned,
          orders: before.orders,
          extra: before.orders - server.tally.ok,
          badLines: after.bad_lines,
          badEvents: after.bad_events,
          orphanEvents: after.orphan_events,
          passRequests: VERIFY_REQUESTS,
          pass2xx: passTally.ok,
          passOrders: exactAfter - exactBefore,
          passNon2xx: pass ? pass.non2xx + pass.errors + pass.timeouts : 0,
          passRps: pass ? passTally.ok / Math.max(0.001, (new Date(pass.finish) - new Date(pass.start)) / 1000) : NaN,
        };
      });
    }

    // What the service said while under load (read after the runs, not during).
    const serviceLogs = service.logs();
    const serviceProblems = problemsAfterStart(serviceLogs);
    const serviceHwm = memoryOf(service.pid).hwmMiB;
    const floorHwm = memoryOf(floor.pid).hwmMiB;
    const tableSizes = {};
    for (const [label, server] of Object.entries(servers)) {
      tableSizes[label] = await withClient(
        server.db.url,
        async (client) =>
          (
            await client.query(
              `select count(*)::int as n, pg_size_pretty(pg_total_relation_size('"order"')) as size from "order"`,
            )
          ).rows[0],
      );
    }

    await floor.stop();
    await service.stop();
    await db.drop();
    await floorDb.drop();

    // 6. Figures.
    const byId = printLoadResults('checkout results', cases, results);
    const ratios = {};
    if (byId.service && byId.floor) {
      ratios.throughput = byId.service.rps / byId.floor.rps;
      ratios.cpu = byId.service.serverCpuMsPerRequest / byId.floor.serverCpuMsPerRequest;
      ratios.p50 = byId.service.p50 / byId.floor.p50;
      console.log(ratioLine('service/floor throughput', ratios.throughput, { op: '>=', value: 0.6, note: 'issue 19' }));
      console.log(ratioLine('service/floor server CPU per request', ratios.cpu));
      console.log(ratioLine('service/floor latency p50', ratios.p50));
    }
    console.log(
      `process peak RSS over the whole run (VmHWM): service ${fixed(serviceHwm, 0)} MiB, floor ${fixed(floorHwm, 0)} MiB`,
    );
    console.log(
      `"order" table at the end: ${Object.entries(tableSizes)
        .map(([label, size]) => `${label} ${size.n.toLocaleString('en-US')} orders, ${size.size} with indexes`)
        .join('; ')}`,
    );
    console.log(
      `service log lines at warn or above after start-up: ${serviceProblems.length}${serviceProblems.length ? ` (first: ${JSON.stringify(serviceProblems[0]).slice(0, 300)})` : ''}`,
    );

    console.log(heading('orders against answers (SQL, after the load)'));
    console.log(
      table(Object.values(ledger), [
        { key: 'label', label: 'server', align: 'left' },
        { key: 'answered2xx', label: '2xx answers', format: String },
        { key: 'nonOk', label: 'non-2xx', format: String },
        { key: 'abandoned', label: 'abandoned in flight', format: String },
        { key: 'orders', label: 'orders', format: String },
        { key: 'extra', label: 'orders - 2xx', format: String },
        { key: 'badLines', label: 'w/o 1 line', format: String },
        { key: 'badEvents', label: 'w/o 1 event', format: String },
        { key: 'orphanEvents', label: 'orphan events', format: String },
        { key: 'pass2xx', label: 'closing pass 2xx', format: String },
        { key: 'passOrders', label: 'its new orders', format: String },
      ]),
    );
    console.log(
      `(the timed runs stop by dropping their connections; an abandoned request that had reached the server still commits its order, so orders - 2xx ` +
        `may be anything from 0 to "abandoned in flight". The closing pass of ${VERIFY_REQUESTS} requests ends only when every one is answered: its new orders must equal its 2xx.)`,
    );

    const problems = [];
    for (const result of results) {
      if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0)
        problems.push(
          `${result.name}: non-2xx ${result.non2xx} ${JSON.stringify(result.statusCodes)}, errors ${result.errors}, timeouts ${result.timeouts}`,
        );
    }
    for (const entry of Object.values(ledger)) {
      if (entry.nonOk > 0) problems.push(`${entry.label}: ${entry.nonOk} non-2xx answers over the run`);
      if (entry.extra < 0) problems.push(`${entry.label}: ${-entry.extra} 2xx answers without an order`);
      if (entry.extra > entry.abandoned)
        problems.push(
          `${entry.label}: ${entry.extra - entry.abandoned} more orders than 2xx answers plus abandoned requests`,
        );
      if (entry.badLines > 0 || entry.badEvents > 0 || entry.orphanEvents > 0)
        problems.push(
          `${entry.label}: half-written orders (${entry.badLines} without exactly one line, ${entry.badEvents} without exactly one event, ${entry.orphanEvents} events without order)`,
        );
      if (
        VERIFY_REQUESTS > 0 &&
        (entry.passNon2xx > 0 || entry.pass2xx !== VERIFY_REQUESTS || entry.passOrders !== entry.pass2xx)
      ) {
        problems.push(
          `${entry.label}: closing pass answered ${entry.pass2xx} 2xx of ${VERIFY_REQUESTS} (${entry.passNon2xx} failures) and wrote ${entry.passOrders} orders`,
        );
      }
    }
    for (const problem of problems) console.log(`!! ${problem}`);
    if (problems.length === 0) {
      const exact = Object.values(ledger).every((entry) => entry.extra === entry.abandoned);
      console.log(
        'checked: no non-2xx, every order has exactly one line and one order.created event, the closing pass wrote exactly one order per 2xx answer' +
          (exact
            ? ', and over the whole run orders = 2xx answers + abandoned requests exactly (every abandoned request had reached its server and committed)'
            : ''),
      );
    }
    console.log(`\ncheckout took ${seconds(Date.now() - started)}`);

    if (problems.length > 0) throw new Error(`${problems.length} check(s) failed; the figures above do not count`);
    return { results, ratios, ledger, warmups };
  },
};
