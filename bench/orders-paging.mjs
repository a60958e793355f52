/**
 * orders-paging: the merchant orders list (GET /api/merchant/v1/stores/{storeId}/orders,
 * limit 100) over a store with 1,000,000 orders (plus 200,000 of a second store in the same
 * table), on the first page and on a page 5,000 pages deep (after row 500,000), beside a
 * floor: a bare Fastify + pg server running the same SQL (floors/orders-floor.mjs).
 *
 * Scale for a quick look: BENCH_ORDERS (default 1000000), BENCH_OTHER_ORDERS (200000, a
 * fifth of BENCH_ORDERS), BENCH_DEEP_PAGE (5000); cases: BENCH_CASES; load: see lib/load.mjs.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { freshDatabase, watchDatabase, withClient } from './lib/db.mjs';
import { fixed, heading, ratioLine, seconds, table } from './lib/format.mjs';
import { expectStatus, request } from './lib/http.mjs';
import { LOAD_DEFAULTS, measure, prewarm, printLoadResults } from './lib/load.mjs';
import { memoryOf, spawnNode } from './lib/proc.mjs';
import { importDist, problemsAfterStart, provisionMerchant, REPO_ROOT, startService, tempDir } from './lib/service.mjs';

const ORDERS = Number(process.env.BENCH_ORDERS ?? 1_000_000);
const OTHER_ORDERS = Number(process.env.BENCH_OTHER_ORDERS ?? 200_000);
const LIMIT = 100;
const DEEP_PAGE = Number(process.env.BENCH_DEEP_PAGE ?? 5_000);
/** Rows before the deep page: the cursor is the last row of page DEEP_PAGE. */
const DEEP_OFFSET = DEEP_PAGE * LIMIT;
const SEED_CHUNK = 100_000;
const SEED_CONNECTIONS = 2;

/**
 * Orders g = 1..total, oldest first (the heap fills in time order, as in production); every
 * sixth goes to the other store. Orders are 1.000123 s apart and every g ending in 1 takes
 * the timestamp of g-1, so about one order in ten shares its created_at with a neighbour
 * and the id tie-break is exercised. Status mix roughly like a live shop.
 */
const SEED_SQL = `
insert into "order" (id, store_id, status, product_name, price_minor, paid_minor, currency, payment_method,
  customer_email, country, buyer_ip, user_agent, note, key_count, paid_at, completed_at, delivered_at, created_at, updated_at)
select
  'o' || substr(md5('svc-bench-' || g::text), 1, 24),
  case when g % 6 = 0 then $2 else $1 end,
  s.status,
  'Product ' || (g % 40 + 1),
  s.price,
  case when s.status in ('paid', 'processing', 'completed', 'refunded') then s.price else 0 end,
  'USD',
  (array['stripe', 'paypal', 'crypto'])[1 + g % 3],
  'buyer-' || (g % 50000) || '@example.test',
  (array['US', 'DE', 'GB', 'FR', 'NL', 'CA', 'BR', 'PL'])[1 + g % 8],
  '198.51.100.' || (g % 250 + 1),
  'Mozilla/5.0 (X11; Linux x86_64) BenchAgent/' || (g % 7),
  case when g % 50 = 0 then 'Please deliver quickly.' else '' end,
  case when s.status in ('completed', 'refunded') then 1 + g % 3 else 0 end,
  case when s.status in ('paid', 'processing', 'completed', 'refunded') then s.created_at + interval '30 seconds' end,
  case when s.status in ('completed', 'refunded') then s.created_at + interval '60 seconds' end,
  case when s.status in ('completed', 'refunded') then s.created_at + interval '60 seconds' end,
  s.created_at,
  s.created_at + case when s.status in ('completed', 'refunded') then interval '60 seconds' when s.status in ('paid', 'processing') then interval '30 seconds' else interval '0' end
from generate_series($4::int, $5::int) g
cross join lateral (
  select
    case
      when (g::bigint * 7919) % 100 < 70 then 'completed'
      when (g::bigint * 7919) % 100 < 78 then 'pending'
      when (g::bigint * 7919) % 100 < 82 then 'paid'
      when (g::bigint * 7919) % 100 < 85 then 'processing'
      when (g::bigint * 7919) % 100 < 88 then 'refunded'
      when (g::bigint * 7919) % 100 < 94 then 'cancelled'
      else 'expired'
    end as status,
    (100 + (g * 31) % 9900)::bigint as price,
    $3::timestamptz + (g - (g % 10 = 1)::int) * interval '1.000123 second' as created_at
) s`;

/** Also the dashboard bench's seed (bench/dashboard.mjs). */
export async function seed(url, mainStore, otherStore) {
  // Every sixth order goes to the other store, so the main store must have five times as many.
  if (ORDERS !== 5 * OTHER_ORDERS)
    throw new Error(`BENCH_ORDERS (${ORDERS}) must be 5 x BENCH_OTHER_ORDERS (${OTHER_ORDERS})`);
  const total = ORDERS + OTHER_ORDERS;
  // Newest order about an hour ago; whole seconds so the base itself is exact.
  const base = new Date((Math.floor(Date.now() / 1000) - 3600 - Math.ceil(total * 1.000123)) * 1000).toISOString();
  const chunks = [];
  for (let from = 1; from <= total; from += SEED_CHUNK) chunks.push([from, Math.min(total, from + SEED_CHUNK - 1)]);
  let done = 0;
  const worker = () =>
    withClient(url, async (client) => {
      for (let chunk = chunks.shift(); chunk; chunk = chunks.shift()) {
        await client.query(SEED_SQL, [mainStore, otherStore, base, chunk[0], chunk[1]]);
        done += chunk[1] - chunk[0] + 1;
        if (process.stdout.isTTY)
          process.stdout.write(`\r  seeded ${done.toLocaleString('en-US')} / ${total.toLocaleString('en-US')} orders`);
      }
    });
  await Promise.all(Array.from({ length: SEED_CONNECTIONS }, worker));
  if (process.stdout.isTTY) process.stdout.write('\n');
  // The seeded pending orders are older than a checkout's lifetime (60 minutes by default), so the
  // service's expiry job (every minute) expired them all in its first run: ~96,000 rows in one
  // UPDATE, during whichever case was being measured then (it doubled PostgreSQL's CPU per request
  // in the service's deep-page case, and never touched the floor's). A running service has no such
  // backlog: settle them as its job would have, before the table is vacuumed.
  await withClient(url, (client) =>
    client.query(`update "order" set status = 'expired', updated_at = created_at + interval '60 minutes', version = version + 1
                  where status = 'pending' and created_at < now() - interval '60 minutes'`),
  );
  // A settled table, as production would be after autovacuum: statistics, visibility map, hint bits.
  await withClient(url, (client) => client.query('vacuum (analyze) "order"'));
  return total;
}

function ordersPath(storeId, query) {
  return `/api/merchant/v1/stores/${storeId}/orders?${new URLSearchParams(query)}`;
}

function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
}

export default {
  name: 'orders-paging',
  title: `Merchant orders list, ${ORDERS.toLocaleString('en-US')} orders: first page vs page ${DEEP_PAGE.toLocaleString('en-US')}, service vs floor`,
  measures: `GET /api/merchant/v1/stores/{storeId}/orders?limit=${LIMIT} (Bearer key, keyset cursor) on the first page and after row ${DEEP_OFFSET.toLocaleString('en-US')}, against a bare Fastify + pg floor running the same SQL`,

  async run() {
    check(
      DEEP_OFFSET + LIMIT <= ORDERS,
      `BENCH_DEEP_PAGE ${DEEP_PAGE} x ${LIMIT} + ${LIMIT} rows must fit in BENCH_ORDERS ${ORDERS}`,
    );
    const started = Date.now();
    const workDir = tempDir('svc-bench-orders-');
    const db = await freshDatabase();
    const encryptionKey = randomBytes(32);
    console.log(`database ${db.name}`);

    // 1. The service, migrating its fresh database; a seller with two stores and a key.
    const service = await startService({ databaseUrl: db.url, encryptionKey, dataDir: workDir });
    console.log(`service pid ${service.pid} on ${service.url} (started in ${seconds(Date.now() - started)})`);
    const merchant = await provisionMerchant(service.url, {
      stores: 2,
      scopes: ['order:read'],
      redisKeyPrefix: service.redisKeyPrefix,
    });
    const [storeId, otherStoreId] = merchant.storeIds;
    console.log(
      `seller ${merchant.email}, store ${storeId} (benchmarked), store ${otherStoreId} (other), key ${merchant.apiKeyId}`,
    );

    // 2. Orders, straight into the table.
    const seedStarted = Date.now();
    const total = await seed(db.url, storeId, otherStoreId);
    const seedMs = Date.now() - seedStarted;
    const counts = await withClient(db.url, async (client) => {
      const { rows } = await client.query(`select store_id, count(*)::int as n from "order" group by store_id`);
      const size = await client.query(
        `select pg_size_pretty(pg_table_size('"order"')) as heap, pg_size_pretty(pg_indexes_size('"order"')) as indexes`,
      );
      return { byStore: Object.fromEntries(rows.map((row) => [row.store_id, row.n])), ...size.rows[0] };
    });
    console.log(
      `seeded ${total.toLocaleString('en-US')} orders in ${seconds(seedMs)} (incl. vacuum analyze): ${counts.byStore[storeId]} + ${counts.byStore[otherStoreId]}; table ${counts.heap}, indexes ${counts.indexes}`,
    );
    check(
      counts.byStore[storeId] === ORDERS && counts.byStore[otherStoreId] === OTHER_ORDERS,
      'order counts per store',
    );

    // 3. The deep cursor, computed rather than walked to, and what each page must start with.
    const { cursorScope, encodeCursor } = await importDist('lib/cursor.js');
    const positions = await withClient(db.url, async (client) => {
      const at = async (offset) =>
        (
          await client.query(
            `select id, (extract(epoch from created_at) * 1000000)::bigint::text as us from "order" where store_id = $1 order by created_at desc, id desc offset $2 limit 1`,
            [storeId, offset],
          )
        ).rows[0];
      const ids = async (offset) =>
        (
          await client.query(
            `select id from "order" where store_id = $1 order by created_at desc, id desc offset $2 limit $3`,
            [storeId, offset, LIMIT],
          )
        ).rows.map((row) => row.id);
      const collisions = (
        await client.query(
          `select count(*)::int as n from (select created_at from "order" where store_id = $1 group by created_at having count(*) > 1) t`,
          [storeId],
        )
      ).rows[0].n;
      return {
        cursorRow: await at(DEEP_OFFSET - 1),
        firstIds: await ids(0),
        deepIds: await ids(DEEP_OFFSET),
        collisions,
      };
    });
    // Sealed as the service seals it: the list, the store and the key's mode (a live key).
    const deepCursor = encodeCursor(encryptionKey, cursorScope('orders', { storeId, livemode: true }), {
      us: positions.cursorRow.us,
      id: positions.cursorRow.id,
    });
    console.log(
      `deep cursor: after row ${DEEP_OFFSET.toLocaleString('en-US')} (id ${positions.cursorRow.id}, us ${positions.cursorRow.us}); ${positions.collisions.toLocaleString('en-US')} created_at values shared by 2+ orders of the store`,
    );

    const auth = { authorization: `Bearer ${merchant.apiKey}` };
    const firstPath = ordersPath(storeId, { limit: LIMIT });
    const deepPath = ordersPath(storeId, { limit: LIMIT, cursor: deepCursor });
    const servicePages = {};
    for (const [label, pathname, expectedIds] of [
      ['first', firstPath, positions.firstIds],
      ['deep', deepPath, positions.deepIds],
    ]) {
      const response = await expectStatus(
        request(`${service.url}${pathname}`, { headers: auth }),
        200,
        `service ${label} page`,
      );
      const body = response.json;
      check(body.orders.length === LIMIT, `service ${label} page has ${LIMIT} orders (got ${body.orders.length})`);
      check(
        body.orders[0].id === expectedIds[0],
        `service ${label} page starts with ${expectedIds[0]} (got ${body.orders[0].id})`,
      );
      check(
        isDeepStrictEqual(
          body.orders.map((order) => order.id),
          expectedIds,
        ),
        `service ${label} page holds the ${LIMIT} expected orders in order`,
      );
      check(body.hasMore === true && typeof body.nextCursor === 'string', `service ${label} page says there is more`);
      check(
        body.orders.every((order) => order.storeId === storeId),
        `service ${label} page holds only the store's orders`,
      );
      servicePages[label] = body;
    }
    console.log(
      `checked: service first page starts with ${positions.firstIds[0]}, deep page with ${positions.deepIds[0]} (row ${(DEEP_OFFSET + 1).toLocaleString('en-US')}); 200, ${LIMIT} orders each`,
    );

    // 4. The floor, in its own process like the service, answering the same pages.
    const floor = await spawnNode({
      label: 'orders floor',
      script: path.join(REPO_ROOT, 'bench/floors/orders-floor.mjs'),
      cwd: REPO_ROOT,
      logFile: path.join(workDir, 'floor.log'),
      env: {
        PORT: '0',
        FLOOR_DATABASE_URL: db.url,
        FLOOR_CURSOR_KEY: encryptionKey.toString('base64'),
        NODE_ENV: 'production',
      },
      isReady: (line) =>
        typeof line.msg === 'string' && line.msg.startsWith('floor listening') && typeof line.port === 'number',
    });
    const floorFirstPath = `/stores/${storeId}/orders?limit=${LIMIT}`;
    const floorDeepPath = `/stores/${storeId}/orders?${new URLSearchParams({ limit: LIMIT, us: positions.cursorRow.us, id: positions.cursorRow.id })}`;
    for (const [label, pathname] of [
      ['first', floorFirstPath],
      ['deep', floorDeepPath],
    ]) {
      const response = await expectStatus(request(`${floor.url}${pathname}`), 200, `floor ${label} page`);
      check(
        isDeepStrictEqual(response.json, servicePages[label]),
        `floor ${label} page equals the service's (orders, limit, hasMore, nextCursor)`,
      );
    }
    console.log(`checked: floor pid ${floor.pid} answers both pages exactly as the service does`);

    // 5. Load, one case at a time; the process not under load sits idle.
    console.log(
      `load: ${LOAD_DEFAULTS.connections} connections; each server pre-warmed until its CPU per request settles ` +
        `(${LOAD_DEFAULTS.prewarmMinS}-${LOAD_DEFAULTS.prewarmMaxS} s), then per case ${LOAD_DEFAULTS.warmupS} s warm-up + ${LOAD_DEFAULTS.durationS} s measured`,
    );
    const allCases = [
      {
        id: 'service-first',
        name: 'service first page',
        url: `${service.url}${firstPath}`,
        headers: auth,
        pid: service.pid,
      },
      {
        id: 'service-deep',
        name: 'service deep page',
        url: `${service.url}${deepPath}`,
        headers: auth,
        pid: service.pid,
      },
      {
        id: 'floor-first',
        name: 'floor first page',
        url: `${floor.url}${floorFirstPath}`,
        headers: {},
        pid: floor.pid,
      },
      { id: 'floor-deep', name: 'floor deep page', url: `${floor.url}${floorDeepPath}`, headers: {}, pid: floor.pid },
    ];
    // BENCH_CASES=service-deep,service-first,... picks and orders the cases.
    const cases = process.env.BENCH_CASES
      ? process.env.BENCH_CASES.split(',').map(
          (id) => allCases.find((spec) => spec.id === id.trim()) ?? check(false, `unknown case ${id}`),
        )
      : allCases;
    const watch = await watchDatabase(db.name);
    const results = [];
    const warmed = new Set();
    const warmups = {};
    for (const spec of cases) {
      if (!warmed.has(spec.pid)) {
        // A fresh Node server runs several times slower per request until V8 has optimised
        // its hot paths (the service needs tens of seconds of load): warm every server on
        // all of its case URLs first, so the cases compare steady states.
        warmed.add(spec.pid);
        const own = allCases.filter((other) => other.pid === spec.pid);
        const label = spec.pid === service.pid ? 'service' : 'floor';
        process.stdout.write(`  pre-warming the ${label} on ${own.length} URLs ... `);
        const warm = await prewarm({ urls: own.map((other) => other.url), headers: spec.headers, pid: spec.pid });
        warmups[label] = warm;
        console.log(
          `${warm.requests.toLocaleString('en-US')} requests in ${warm.seconds} s; server CPU ms/request per 5 s: ${warm.curve.map((v) => fixed(v, 2)).join(' > ')}`,
        );
        check(warm.failures === 0, `pre-warm of the ${label} saw ${warm.failures} non-2xx answers or errors`);
      }
      process.stdout.write(`  ${spec.name} ... `);
      const result = await measure({ ...spec, backendPids: watch.backendPids, transactions: watch.transactions });
      results.push(result);
      console.log(
        `${fixed(result.rps, 0)} req/s, p50 ${fixed(result.p50, 1)} ms, p99 ${fixed(result.p99, 1)} ms, non-2xx ${result.non2xx}; ` +
          `cores busy: server ${fixed(result.cpu.server, 2)}, pg ${fixed(result.cpu.postgres, 2)}, load ${fixed(result.cpu.load, 2)}, other ${fixed(result.cpu.other, 2)}`,
      );
    }
    await watch.close();

    // What the service said while under load (read after the runs, not during).
    const serviceLogs = service.logs();
    const serviceProblems = problemsAfterStart(serviceLogs);
    const serviceHwm = memoryOf(service.pid).hwmMiB;
    const floorHwm = memoryOf(floor.pid).hwmMiB;

    // 6. The plans, warm: the service's own statements (orders.repo.ts orderPageStatement, as
    //    selectOrderPage builds them for a live key: the store and the mode, then the cursor's
    //    position) with their parameters, one more row than the page as pageOrders asks. The
    //    service runs them as named prepared statements (db/prepared.ts), which PostgreSQL may
    //    serve with a generic plan from the sixth execution on: each is prepared here, executed
    //    five times, and its sixth execution explained, so the plan is the one the plan cache chose.
    const { orderPageStatement } = await importDist('modules/orders/orders.repo.js');
    const { numberPlaceholders } = await importDist('db/prepared.js');
    const filter = { storeId, livemode: true };
    const statements = {
      first: orderPageStatement(filter, undefined, LIMIT + 1),
      deep: orderPageStatement(filter, { us: positions.cursorRow.us, id: positions.cursorRow.id }, LIMIT + 1),
    };
    const plans = await withClient(db.url, async (client) => {
      const explain = async (name, { sql, params }) => {
        await client.query(`prepare ${name} as ${numberPlaceholders(sql)}`);
        // EXECUTE takes no bind parameters: the values as literals, typed by the prepared statement.
        const args = params.map((value) => client.escapeLiteral(String(value))).join(', ');
        for (let i = 0; i < 5; i++) await client.query(`execute ${name}(${args})`);
        return (await client.query(`explain (analyze, buffers) execute ${name}(${args})`)).rows
          .map((row) => row['QUERY PLAN'])
          .join('\n');
      };
      return {
        first: await explain('orders_first', statements.first),
        deep: await explain('orders_deep', statements.deep),
      };
    });

    await floor.stop();
    await service.stop();
    await db.drop();

    // 7. Figures.
    const byId = printLoadResults('orders-paging results', cases, results);
    const ratios = {};
    const ratio = (key, label, a, b, value, target) => {
      if (!byId[a] || !byId[b]) return;
      ratios[key] = value(byId[a], byId[b]);
      console.log(ratioLine(label, ratios[key], target));
    };
    ratio(
      'serviceDeepFirstP50',
      'service deep/first latency p50',
      'service-deep',
      'service-first',
      (a, b) => a.p50 / b.p50,
      { op: '<=', value: 1.2 },
    );
    ratio(
      'serviceDeepFirstP99',
      'service deep/first latency p99',
      'service-deep',
      'service-first',
      (a, b) => a.p99 / b.p99,
    );
    ratio('floorDeepFirstP50', 'floor   deep/first latency p50', 'floor-deep', 'floor-first', (a, b) => a.p50 / b.p50);
    ratio(
      'serviceFloorFirstRps',
      'service/floor throughput, first page',
      'service-first',
      'floor-first',
      (a, b) => a.rps / b.rps,
      { op: '>=', value: 0.8, note: 'issue 19' },
    );
    ratio(
      'serviceFloorDeepRps',
      'service/floor throughput, deep page',
      'service-deep',
      'floor-deep',
      (a, b) => a.rps / b.rps,
      { op: '>=', value: 0.8, note: 'issue 19' },
    );
    ratio(
      'serviceFloorFirstCpu',
      'service/floor server CPU per request, first page',
      'service-first',
      'floor-first',
      (a, b) => a.serverCpuMsPerRequest / b.serverCpuMsPerRequest,
    );
    ratio(
      'serviceFloorDeepCpu',
      'service/floor server CPU per request, deep page',
      'service-deep',
      'floor-deep',
      (a, b) => a.serverCpuMsPerRequest / b.serverCpuMsPerRequest,
    );
    const sizes = results.map((result) => `${result.name} ${fixed(result.bytesPerResponse, 0)} B`).join(', ');
    console.log(`bytes per response (incl. headers): ${sizes}`);
    console.log(
      `process peak RSS over the whole run (VmHWM): service ${fixed(serviceHwm, 0)} MiB, floor ${fixed(floorHwm, 0)} MiB`,
    );
    console.log(
      `service log lines at warn or above after start-up: ${serviceProblems.length}${serviceProblems.length ? ` (first: ${JSON.stringify(serviceProblems[0]).slice(0, 300)})` : ''}`,
    );
    const failed = results.filter((result) => result.non2xx > 0 || result.errors > 0 || result.timeouts > 0);
    if (failed.length > 0) {
      for (const result of failed)
        console.log(
          `!! ${result.name}: non-2xx ${result.non2xx} ${JSON.stringify(result.statusCodes)}, errors ${result.errors}, timeouts ${result.timeouts}`,
        );
    }

    // A generic plan names the parameters ($1) where a custom one shows their values.
    const planKind = (plan) => (/\$\d/.test(plan) ? 'generic plan' : 'custom plan');
    console.log(heading(`EXPLAIN (ANALYZE, BUFFERS) EXECUTE, sixth execution: first page (${planKind(plans.first)})`));
    console.log(
      `${numberPlaceholders(statements.first.sql).replace(/\s+/g, ' ')}\n  parameters ${JSON.stringify(statements.first.params)}`,
    );
    console.log(plans.first);
    console.log(
      heading(
        `EXPLAIN (ANALYZE, BUFFERS) EXECUTE, sixth execution: page ${DEEP_PAGE} (after row ${DEEP_OFFSET.toLocaleString('en-US')}; ${planKind(plans.deep)})`,
      ),
    );
    console.log(
      `${numberPlaceholders(statements.deep.sql).replace(/\s+/g, ' ')}\n  parameters ${JSON.stringify(statements.deep.params)}`,
    );
    console.log(plans.deep);
    console.log(`\norders-paging took ${seconds(Date.now() - started)} (seeding ${seconds(seedMs)})`);

    if (failed.length > 0)
      throw new Error(`${failed.length} case(s) saw non-2xx answers or errors; the figures above do not count`);
    return { results, ratios, seedMs, plans, warmups };
  },
};
