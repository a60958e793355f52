/**
 * storefront: the hosted store page, `GET /s/{subdomain}`, of a store with 1,000 active products
 * (a quarter of them license-key products, some with keys and some sold out), served by svc beside
 * a floor: bare Fastify + the same SQL statements + the service's own template functions
 * (floors/storefront-floor.mjs, which imports `storePage` from apps/server/dist). Two paths each:
 *
 * - `page`: a full answer (200: the first page, 24 of the 1,000 products, as the route pages them);
 * - `304`: a revalidation with the page's ETag in If-None-Match, which both answer 304 after the
 *   one statement that finds the ETag.
 *
 * The route is read-only, so the service and the floor share one database. Before any load the
 * bench checks that the floor's page and ETag are byte for byte the service's, and that both
 * answer 304 to the ETag. Knobs: BENCH_CASES (service-page,floor-page,service-304,floor-304),
 * BENCH_STOREFRONT_PRODUCTS (1000); load: see lib/load.mjs.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { freshDatabase, watchDatabase, withClient } from './lib/db.mjs';
import { fixed, ratioLine, seconds } from './lib/format.mjs';
import { expectStatus, request } from './lib/http.mjs';
import { LOAD_DEFAULTS, measure, prewarm, printLoadResults } from './lib/load.mjs';
import { memoryOf, spawnNode } from './lib/proc.mjs';
import {
  createProduct,
  importKeys,
  problemsAfterStart,
  provisionMerchant,
  REPO_ROOT,
  startService,
  tempDir,
} from './lib/service.mjs';

const PRODUCTS = Number(process.env.BENCH_STOREFRONT_PRODUCTS ?? 1000);
const PUBLIC_URL = 'https://shop.bench.example';

function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
}

/** Runs `task` over `items` with at most `width` at once. */
async function inBatches(items, width, task) {
  const results = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await task(items[i], i);
      }
    }),
  );
  return results;
}

/** Product i: every 4th a license-key product; the rest e-books delivered by the seller. */
function productSeed(i) {
  const keyed = i % 4 === 0;
  return {
    name: `${keyed ? 'Game key' : 'E-book'} ${String(i + 1).padStart(4, '0')}`,
    price: (100 + ((i * 37) % 5000)) / 100,
    description: `Product ${i + 1} of the bench store: a short description of what the buyer gets.`,
    deliveryMethods: [keyed ? 'licenseKeys' : 'manualDelivery'],
  };
}

export default {
  name: 'storefront',
  budgetS: 600,
  title: `Hosted store page (GET /s/{subdomain}), ${PRODUCTS} products, service vs floor, 200 and 304`,
  measures:
    'GET /s/{subdomain} of a 1,000-product store (full page, and 304 with If-None-Match) against bare Fastify + the same SQL + the same template',

  async run() {
    const started = Date.now();
    const workDir = tempDir('svc-bench-storefront-');
    const db = await freshDatabase();
    const encryptionKey = randomBytes(32);
    console.log(`database ${db.name}`);

    // 1. The service; a seller, a store, its products (through the dashboard API), keys for half the key products.
    const service = await startService({
      databaseUrl: db.url,
      encryptionKey,
      dataDir: workDir,
      env: { PUBLIC_URL },
    });
    console.log(`service pid ${service.pid} on ${service.url} (started in ${seconds(Date.now() - started)})`);
    const merchant = await provisionMerchant(service.url, { stores: 1, redisKeyPrefix: service.redisKeyPrefix });
    const [storeId] = merchant.storeIds;
    const seeding = Date.now();
    const products = await inBatches(
      Array.from({ length: PRODUCTS }, (_, i) => i),
      6,
      (i) => createProduct(service.url, merchant, storeId, productSeed(i)),
    );
    const keyed = products.filter((_, i) => i % 4 === 0);
    const stocked = keyed.filter((_, i) => i % 2 === 0);
    await inBatches(stocked, 6, (product, i) =>
      importKeys(
        service.url,
        merchant,
        storeId,
        product.id,
        Array.from({ length: 1 + (i % 3) }, (_, k) => `SF-${i}-${k}-${randomBytes(6).toString('hex')}`),
      ),
    );
    const subdomain = await withClient(
      db.url,
      async (client) => (await client.query('select subdomain from store where id = $1', [storeId])).rows[0].subdomain,
    );
    console.log(
      `store ${storeId} (/s/${subdomain}): ${products.length} products, ${keyed.length} of them key products (${stocked.length} with keys, ${keyed.length - stocked.length} sold out); seeded in ${seconds(Date.now() - seeding)}`,
    );

    const pagePath = `/s/${subdomain}`;
    const served = await expectStatus(
      request(`${service.url}${pagePath}`, { headers: { accept: 'text/html' } }),
      200,
      'service store page',
    );
    const etag = served.headers.etag;
    check(typeof etag === 'string' && etag.length > 2, 'the store page has an ETag');
    const cards = (served.text.match(/<li class="product-card">/g) ?? []).length;
    const soldOut = (served.text.match(/<p class="sold-out">Sold out<\/p>/g) ?? []).length;
    console.log(
      `service page: ${cards} product cards (${soldOut} Sold out), ${served.text.length.toLocaleString('en-US')} bytes of HTML, ${gzipSync(served.text).length.toLocaleString('en-US')} gzip; ETag ${etag}`,
    );
    // The route shows a page (24) of the active products, oldest first: Sold out on exactly that page's key products without keys.
    const stockedIds = new Set(stocked.map((p) => p.id));
    const soldOutIds = new Set(keyed.filter((p) => !stockedIds.has(p.id)).map((p) => p.id));
    const firstPage = await withClient(
      db.url,
      async (client) =>
        (
          await client.query(
            `select id from product where store_id = $1 and livemode and status = 'active' and deleted_at is null
              order by created_at, id limit $2`,
            [storeId, cards],
          )
        ).rows,
    );
    check(cards === Math.min(PRODUCTS, 24), `the first page shows 24 product cards (${cards})`);
    const expectedSoldOut = firstPage.filter((row) => soldOutIds.has(row.id)).length;
    check(
      soldOut === expectedSoldOut,
      `Sold out on exactly the page's key products without keys (${soldOut} of ${expectedSoldOut})`,
    );
    const revalidated = await request(`${service.url}${pagePath}`, { headers: { 'if-none-match': etag } });
    check(
      revalidated.status === 304 && revalidated.text === '',
      `the service answers 304 to its ETag (${revalidated.status})`,
    );

    // 2. The floor, in its own process like the service, on the same (read-only) database.
    const floor = await spawnNode({
      label: 'storefront floor',
      script: path.join(REPO_ROOT, 'bench/floors/storefront-floor.mjs'),
      nodeArgs: (process.env.BENCH_FLOOR_NODE_ARGS ?? '').split(/\s+/).filter(Boolean),
      cwd: REPO_ROOT,
      logFile: path.join(workDir, 'floor.log'),
      env: { PORT: '0', FLOOR_DATABASE_URL: db.url, FLOOR_PUBLIC_URL: PUBLIC_URL, NODE_ENV: 'production' },
      isReady: (line) =>
        typeof line.msg === 'string' && line.msg.startsWith('floor listening') && typeof line.port === 'number',
    });
    const floorPage = await expectStatus(request(`${floor.url}${pagePath}`), 200, 'floor store page');
    if (floorPage.text !== served.text) {
      const at = [...floorPage.text].findIndex((c, i) => c !== served.text[i]);
      console.log(`service at ${at}: ${JSON.stringify(served.text.slice(Math.max(0, at - 80), at + 120))}`);
      console.log(`floor   at ${at}: ${JSON.stringify(floorPage.text.slice(Math.max(0, at - 80), at + 120))}`);
      check(
        false,
        "the floor's page equals the service's byte for byte (the route reads something else now? update the floor's statements)",
      );
    }
    check(
      floorPage.headers.etag === etag,
      `the floor's ETag equals the service's (${floorPage.headers.etag} vs ${etag})`,
    );
    check(
      floorPage.headers['content-security-policy'] === served.headers['content-security-policy'],
      'the floor sends the same CSP',
    );
    const floor304 = await request(`${floor.url}${pagePath}`, { headers: { 'if-none-match': etag } });
    check(floor304.status === 304, `the floor answers 304 to the ETag (${floor304.status})`);
    console.log(`checked: floor pid ${floor.pid} answers the same page, ETag and CSP, and 304 to the ETag`);

    // 3. Load, one case at a time; the process not under load sits idle.
    console.log(
      `load: ${LOAD_DEFAULTS.connections} connections; each server pre-warmed on its page until its CPU per request settles ` +
        `(${LOAD_DEFAULTS.prewarmMinS}-${LOAD_DEFAULTS.prewarmMaxS} s), then per case ${LOAD_DEFAULTS.warmupS} s warm-up + ${LOAD_DEFAULTS.durationS} s measured`,
    );
    const revalidate = { 'if-none-match': etag };
    const allCases = [
      { id: 'service-page', name: 'service page', url: `${service.url}${pagePath}`, pid: service.pid },
      { id: 'floor-page', name: 'floor page', url: `${floor.url}${pagePath}`, pid: floor.pid },
      {
        id: 'service-304',
        name: 'service 304',
        url: `${service.url}${pagePath}`,
        pid: service.pid,
        headers: revalidate,
      },
      { id: 'floor-304', name: 'floor 304', url: `${floor.url}${pagePath}`, pid: floor.pid, headers: revalidate },
    ];
    const cases = process.env.BENCH_CASES
      ? process.env.BENCH_CASES.split(',').map(
          (id) => allCases.find((spec) => spec.id === id.trim()) ?? check(false, `unknown case ${id}`),
        )
      : allCases;
    const watch = await watchDatabase(db.name);
    const results = [];
    const warmed = new Set();
    for (const spec of cases) {
      if (!warmed.has(spec.pid)) {
        warmed.add(spec.pid);
        process.stdout.write(`  pre-warming ${spec.name.split(' ')[0]} ... `);
        const warm = await prewarm({ urls: [spec.url], pid: spec.pid });
        console.log(
          `${warm.requests.toLocaleString('en-US')} requests in ${warm.seconds} s; server CPU ms/request per 5 s: ${warm.curve.map((v) => fixed(v, 2)).join(' > ')}`,
        );
        check(warm.failures === 0, `pre-warm of ${spec.name} saw ${warm.failures} non-2xx answers or errors`);
      }
      process.stdout.write(`  ${spec.name} ... `);
      const result = await measure({ ...spec, backendPids: watch.backendPids, transactions: watch.transactions });
      // A 304 is not 2xx: its throughput is its 304 answers per second.
      if (spec.headers) {
        const notModified = result.statusCodes?.['304']?.count ?? 0;
        check(
          notModified === result.non2xx && result.errors === 0 && result.timeouts === 0,
          `${spec.name}: every answer is 304 (${JSON.stringify(result.statusCodes)})`,
        );
        result.rps = notModified / result.durationS;
        result.non2xx = 0;
      }
      results.push(result);
      console.log(
        `${fixed(result.rps, 0)} req/s, p50 ${fixed(result.p50, 1)} ms, p99 ${fixed(result.p99, 1)} ms, non-2xx ${result.non2xx}, pg statements/request ${fixed(result.transactionsPerRequest, 2)}; ` +
          `cores busy: server ${fixed(result.cpu.server, 2)}, pg ${fixed(result.cpu.postgres, 2)}, load ${fixed(result.cpu.load, 2)}, other ${fixed(result.cpu.other, 2)}`,
      );
    }
    await watch.close();

    const serviceProblems = problemsAfterStart(service.logs());
    const serviceHwm = memoryOf(service.pid).hwmMiB;
    const floorHwm = memoryOf(floor.pid).hwmMiB;
    await floor.stop();
    await service.stop();
    await db.drop();

    // 4. Figures.
    const byId = printLoadResults('storefront results', cases, results);
    const ratios = {};
    if (byId['service-page'] && byId['floor-page']) {
      ratios.page = byId['service-page'].rps / byId['floor-page'].rps;
      console.log(
        ratioLine('store page: service/floor throughput', ratios.page, { op: '>=', value: 0.6, note: 'issue 30' }),
      );
      console.log(
        ratioLine(
          'store page: service/floor server CPU per request',
          byId['service-page'].serverCpuMsPerRequest / byId['floor-page'].serverCpuMsPerRequest,
        ),
      );
    }
    if (byId['service-304'] && byId['floor-304']) {
      ratios.notModified = byId['service-304'].rps / byId['floor-304'].rps;
      console.log(
        ratioLine('304: service/floor throughput', ratios.notModified, { op: '>=', value: 0.6, note: 'issue 30' }),
      );
    }
    console.log(
      `bytes per response (incl. headers): ${results.map((result) => `${result.name} ${fixed(result.bytesPerResponse, 0)} B`).join(', ')}`,
    );
    console.log(`process peak RSS (VmHWM): service ${fixed(serviceHwm, 0)} MiB, floor ${fixed(floorHwm, 0)} MiB`);
    console.log(
      `service log lines at warn or above after start-up: ${serviceProblems.length}${serviceProblems.length ? ` (first: ${JSON.stringify(serviceProblems[0]).slice(0, 300)})` : ''}`,
    );
    console.log(`\nstorefront took ${seconds(Date.now() - started)}`);
    const failed = results.filter((result) => result.non2xx > 0 || result.errors > 0 || result.timeouts > 0);
    if (failed.length > 0)
      throw new Error(`${failed.length} case(s) saw unexpected answers or errors; the figures above do not count`);
    return { results, ratios };
  },
};
