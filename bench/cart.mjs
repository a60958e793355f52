/**
 * cart: the theme cart, GET /api/v1/cart?storeId=...&cart=<JSON>, with a realistic cart of
 * five lines (a product twice, so the lines merge and then hit its maximum; a license-key
 * product with 3 keys in stock asked for 5; a key product with a minimum of 2 asked for 1; an
 * unknown product id), beside a floor: a bare Fastify + pg server running the same SQL (the
 * store, then the cart's products with their key stock: two statements in this build) and the
 * same merge / clamp / price arithmetic (floors/cart-floor.mjs).
 *
 * The route is read-only, so the service and the floor share one database. It has no rate
 * limit (no `meta.rateLimit` on `checkout.cart`), so the load comes from 127.0.0.1 without
 * spreading addresses. Before any load the bench checks the service's answer against what
 * the cart must come to, and that the floor's answer is identical to it.
 *
 * Knobs: BENCH_CASES (service,floor); load: see lib/load.mjs (BENCH_CONNECTIONS, 16).
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { freshDatabase, watchDatabase } from './lib/db.mjs';
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

/** Keys in stock of the well-stocked key product (its stock count scans these). */
const STOCKED_KEYS = 200;
const LOW_STOCK_KEYS = 3;

function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
}

/** The products of the cart, created through the dashboard API. */
const PRODUCTS = {
  ebook: { name: 'Bench e-book', price: 4.99, deliveryMethods: ['manualDelivery'], maxQuantity: 5 },
  scarce: { name: 'Bench licence (low stock)', price: 12.5, deliveryMethods: ['licenseKeys'] },
  stocked: { name: 'Bench licence, two-seat minimum', price: 19, deliveryMethods: ['licenseKeys'], minQuantity: 2 },
};

/** Five lines: ebook 2 + 4 (merged to 6, held to its maximum 5), scarce 5 (3 in stock), an unknown id, stocked 1 (minimum 2). */
function cartLines(ids, unknownId) {
  return [
    { productId: ids.ebook, quantity: 2 },
    { productId: ids.scarce, quantity: 5 },
    { productId: unknownId, quantity: 1 },
    { productId: ids.stocked, quantity: 1 },
    { productId: ids.ebook, quantity: 4 },
  ];
}

/**
 * The tax the bench turns on for its second pair of cases: an EU store (one-stop shop) selling to a
 * French buyer, 20 % on top of each line.
 */
const TAX = {
  behavior: 'exclusive',
  originCountry: 'DE',
  registrations: ['EU'],
  sellerName: 'Bench GmbH',
  sellerAddress: 'Benchstraße 1, 10115 Berlin',
  sellerTaxId: 'DE136695976',
};

/** What the service must answer for that cart (cart.service.ts normaliseCart + cartResult); with `taxed`, for a buyer in France. */
function expectedCart(storeId, ids, unknownId, taxed = false) {
  const untaxed = {
    taxAmount: 0,
    total: 100.45,
    taxBehavior: 'off',
    taxRate: null,
    taxCountry: null,
    reverseCharge: false,
  };
  // 20 % of each line: 24.95 -> 4.99, 37.50 -> 7.50, 38.00 -> 7.60.
  const tax = {
    taxAmount: 20.09,
    total: 120.54,
    taxBehavior: 'exclusive',
    taxRate: 0.2,
    taxCountry: 'FR',
    reverseCharge: false,
  };
  return {
    ...(taxed ? tax : untaxed),
    storeId,
    currency: 'USD',
    lines: [
      {
        productId: ids.ebook,
        planId: null,
        plans: [],
        name: PRODUCTS.ebook.name,
        quantity: 5,
        unitPrice: 4.99,
        lineTotal: 24.95,
        stock: null,
      },
      {
        productId: ids.scarce,
        planId: null,
        plans: [],
        name: PRODUCTS.scarce.name,
        quantity: 3,
        unitPrice: 12.5,
        lineTotal: 37.5,
        stock: LOW_STOCK_KEYS,
      },
      {
        productId: ids.stocked,
        planId: null,
        plans: [],
        name: PRODUCTS.stocked.name,
        quantity: 2,
        unitPrice: 19,
        lineTotal: 38,
        stock: STOCKED_KEYS,
      },
    ],
    removed: [{ productId: unknownId, reason: 'unknown_product' }],
    adjusted: [
      { productId: ids.ebook, requested: 6, quantity: 5, reason: 'max_quantity' },
      { productId: ids.scarce, requested: 5, quantity: LOW_STOCK_KEYS, reason: 'stock' },
      { productId: ids.stocked, requested: 1, quantity: 2, reason: 'min_quantity' },
    ],
    subtotal: 100.45,
    itemCount: 10,
  };
}

export default {
  name: 'cart',
  /** Seconds this benchmark may take at most (run.mjs sums these into the run's time budget). */
  budgetS: 300,
  title: 'Theme cart (GET /api/v1/cart), five-line cart, service vs floor',
  measures:
    'GET /api/v1/cart?storeId=&cart=<5 lines: duplicate, unknown product, stock- and min/max-limited> against a bare Fastify + pg floor running the same SQL',

  async run() {
    const started = Date.now();
    const workDir = tempDir('svc-bench-cart-');
    const db = await freshDatabase();
    const encryptionKey = randomBytes(32);
    console.log(`database ${db.name}`);

    // 1. The service; a seller, a store, three products, their keys.
    const service = await startService({ databaseUrl: db.url, encryptionKey, dataDir: workDir });
    console.log(`service pid ${service.pid} on ${service.url} (started in ${seconds(Date.now() - started)})`);
    const merchant = await provisionMerchant(service.url, {
      stores: 1,
      scopes: ['order:read'],
      redisKeyPrefix: service.redisKeyPrefix,
    });
    const [storeId] = merchant.storeIds;
    const ids = {};
    for (const [key, product] of Object.entries(PRODUCTS))
      ids[key] = (await createProduct(service.url, merchant, storeId, product)).id;
    const keysOf = (tag, n) =>
      Array.from(
        { length: n },
        (_, i) => `CART-${tag}-${String(i).padStart(4, '0')}-${randomBytes(6).toString('hex')}`,
      );
    const scarce = await importKeys(service.url, merchant, storeId, ids.scarce, keysOf('S', LOW_STOCK_KEYS));
    const stocked = await importKeys(service.url, merchant, storeId, ids.stocked, keysOf('M', STOCKED_KEYS));
    check(
      scarce.added === LOW_STOCK_KEYS && stocked.added === STOCKED_KEYS,
      `keys imported (got ${JSON.stringify([scarce, stocked])})`,
    );
    // An id shaped like the service's (cuid2, 24 chars) that names no product.
    const unknownId = `z${randomBytes(16).toString('hex').slice(0, 23)}`;
    console.log(
      `seller ${merchant.email}, store ${storeId}, products ${Object.entries(ids)
        .map(([key, id]) => `${key} ${id}`)
        .join(', ')}; keys ${LOW_STOCK_KEYS} (scarce) and ${STOCKED_KEYS} (stocked)`,
    );

    const query = new URLSearchParams({ storeId, cart: JSON.stringify(cartLines(ids, unknownId)) }).toString();
    const cartPath = `/api/v1/cart?${query}`;
    const expected = expectedCart(storeId, ids, unknownId);
    const served = await expectStatus(request(`${service.url}${cartPath}`), 200, 'service GET /api/v1/cart');
    if (!isDeepStrictEqual(served.json, expected)) {
      console.log('service:  ', served.text);
      console.log('expected: ', JSON.stringify(expected));
      check(false, 'the service prices the cart as expected (merged, unknown dropped, held to max, stock and min)');
    }
    console.log(
      `checked: the service merges the duplicate, drops the unknown product, holds quantities to max / stock / min and prices the rest (subtotal ${expected.subtotal}, ${expected.itemCount} items; query string ${query.length} chars)`,
    );

    // 2. The floor, in its own process like the service, on the same (read-only) database.
    const floor = await spawnNode({
      label: 'cart floor',
      script: path.join(REPO_ROOT, 'bench/floors/cart-floor.mjs'),
      nodeArgs: (process.env.BENCH_FLOOR_NODE_ARGS ?? '').split(/\s+/).filter(Boolean),
      cwd: REPO_ROOT,
      logFile: path.join(workDir, 'floor.log'),
      env: { PORT: '0', FLOOR_DATABASE_URL: db.url, NODE_ENV: 'production' },
      isReady: (line) =>
        typeof line.msg === 'string' && line.msg.startsWith('floor listening') && typeof line.port === 'number',
    });
    const floorAnswer = await expectStatus(request(`${floor.url}${cartPath}`), 200, 'floor GET /api/v1/cart');
    if (!isDeepStrictEqual(floorAnswer.json, served.json)) {
      console.log('service: ', served.text);
      console.log('floor:   ', floorAnswer.text);
      check(false, "the floor's cart equals the service's");
    }
    console.log(`checked: floor pid ${floor.pid} answers exactly as the service does`);

    // 3. Load, one case at a time; the process not under load sits idle.
    console.log(
      `load: ${LOAD_DEFAULTS.connections} connections; each server pre-warmed until its CPU per request settles ` +
        `(${LOAD_DEFAULTS.prewarmMinS}-${LOAD_DEFAULTS.prewarmMaxS} s), then per case ${LOAD_DEFAULTS.warmupS} s warm-up + ${LOAD_DEFAULTS.durationS} s measured`,
    );
    // The taxed pair runs after the store's tax is turned on (below), on the same cart for a French buyer.
    const taxedPath = `${cartPath}&country=FR`;
    const allCases = [
      { id: 'service', name: 'service cart', url: `${service.url}${cartPath}`, pid: service.pid },
      { id: 'floor', name: 'floor cart', url: `${floor.url}${cartPath}`, pid: floor.pid },
      {
        id: 'service-tax',
        name: 'service cart, tax on',
        url: `${service.url}${taxedPath}`,
        pid: service.pid,
        taxed: true,
      },
      { id: 'floor-tax', name: 'floor cart, tax on', url: `${floor.url}${taxedPath}`, pid: floor.pid, taxed: true },
    ];
    const cases = process.env.BENCH_CASES
      ? process.env.BENCH_CASES.split(',').map(
          (id) => allCases.find((spec) => spec.id === id.trim()) ?? check(false, `unknown case ${id}`),
        )
      : allCases;
    const watch = await watchDatabase(db.name);
    const results = [];
    const warmups = {};
    let taxOn = false;
    for (const spec of cases) {
      if (spec.taxed && !taxOn) {
        await expectStatus(
          request(`${service.url}/api/dashboard/stores/${storeId}`, {
            method: 'PATCH',
            headers: merchant.session,
            body: { settings: { tax: TAX } },
            localAddress: merchant.sourceAddress,
          }),
          200,
          'PATCH /api/dashboard/stores/{storeId} (tax on)',
        );
        taxOn = true;
        const taxedServed = await expectStatus(request(`${service.url}${taxedPath}`), 200, 'service taxed cart');
        check(
          isDeepStrictEqual(taxedServed.json, expectedCart(storeId, ids, unknownId, true)),
          `the service taxes the cart per line (got ${taxedServed.text})`,
        );
        const taxedFloor = await expectStatus(request(`${floor.url}${taxedPath}`), 200, 'floor taxed cart');
        check(
          isDeepStrictEqual(taxedFloor.json, taxedServed.json),
          `the floor's taxed cart equals the service's (got ${taxedFloor.text})`,
        );
        console.log(
          'checked: with tax on, service and floor add 20 % per line for a French buyer (tax 20.09, total 120.54)',
        );
      }
      process.stdout.write(`  pre-warming the ${spec.id} ... `);
      const warm = await prewarm({ urls: [spec.url], pid: spec.pid });
      warmups[spec.id] = warm;
      console.log(
        `${warm.requests.toLocaleString('en-US')} requests in ${warm.seconds} s; server CPU ms/request per 5 s: ${warm.curve.map((v) => fixed(v, 2)).join(' > ')}`,
      );
      check(warm.failures === 0, `pre-warm of the ${spec.id} saw ${warm.failures} non-2xx answers or errors`);
      process.stdout.write(`  ${spec.name} ... `);
      const result = await measure({ ...spec, backendPids: watch.backendPids, transactions: watch.transactions });
      results.push(result);
      console.log(
        `${fixed(result.rps, 0)} req/s, p50 ${fixed(result.p50, 1)} ms, p99 ${fixed(result.p99, 1)} ms, non-2xx ${result.non2xx}; ` +
          `cores busy: server ${fixed(result.cpu.server, 2)}, pg ${fixed(result.cpu.postgres, 2)}, load ${fixed(result.cpu.load, 2)}, other ${fixed(result.cpu.other, 2)}`,
      );
      check(
        result.warmupFailuresAll === 0,
        `the ${spec.id}'s warm-up runs saw ${result.warmupFailuresAll} non-2xx answers or errors`,
      );
    }
    await watch.close();

    // The answer after the load must still be the same (nothing the load did changed it).
    const after = await expectStatus(
      request(`${service.url}${cartPath}`),
      200,
      'service GET /api/v1/cart after the load',
    );
    // With tax on, the cart without a country is untaxed still: loopback's country is unknown (XX).
    check(
      isDeepStrictEqual(after.json, taxOn ? { ...expected, taxBehavior: 'exclusive' } : expected),
      `the service still answers the same cart after the load (got ${after.text})`,
    );

    const serviceLogs = service.logs();
    const serviceProblems = problemsAfterStart(serviceLogs);
    const serviceHwm = memoryOf(service.pid).hwmMiB;
    const floorHwm = memoryOf(floor.pid).hwmMiB;
    await floor.stop();
    await service.stop();
    await db.drop();

    // 4. Figures.
    const byId = printLoadResults('cart results', cases, results);
    const ratios = {};
    if (byId.service && byId.floor) {
      ratios.throughput = byId.service.rps / byId.floor.rps;
      ratios.cpu = byId.service.serverCpuMsPerRequest / byId.floor.serverCpuMsPerRequest;
      ratios.p50 = byId.service.p50 / byId.floor.p50;
      console.log(ratioLine('service/floor throughput', ratios.throughput, { op: '>=', value: 0.6, note: 'issue 19' }));
      console.log(ratioLine('service/floor server CPU per request', ratios.cpu));
      console.log(ratioLine('service/floor latency p50', ratios.p50));
    }
    if (byId['service-tax'] && byId['floor-tax']) {
      ratios.taxThroughput = byId['service-tax'].rps / byId['floor-tax'].rps;
      ratios.taxCpu = byId['service-tax'].serverCpuMsPerRequest / byId['floor-tax'].serverCpuMsPerRequest;
      console.log(
        ratioLine('service/floor throughput, tax on', ratios.taxThroughput, { op: '>=', value: 0.6, note: 'issue 42' }),
      );
      console.log(ratioLine('service/floor server CPU per request, tax on', ratios.taxCpu));
    }
    console.log(
      `bytes per response (incl. headers): ${results.map((result) => `${result.name} ${fixed(result.bytesPerResponse, 0)} B`).join(', ')}`,
    );
    console.log(
      `process peak RSS over the whole run (VmHWM): service ${fixed(serviceHwm, 0)} MiB, floor ${fixed(floorHwm, 0)} MiB`,
    );
    console.log(
      `service log lines at warn or above after start-up: ${serviceProblems.length}${serviceProblems.length ? ` (first: ${JSON.stringify(serviceProblems[0]).slice(0, 300)})` : ''}`,
    );
    const failed = results.filter((result) => result.non2xx > 0 || result.errors > 0 || result.timeouts > 0);
    for (const result of failed)
      console.log(
        `!! ${result.name}: non-2xx ${result.non2xx} ${JSON.stringify(result.statusCodes)}, errors ${result.errors}, timeouts ${result.timeouts}`,
      );
    console.log(`\ncart took ${seconds(Date.now() - started)}`);
    if (failed.length > 0)
      throw new Error(`${failed.length} case(s) saw non-2xx answers or errors; the figures above do not count`);
    return { results, ratios, warmups };
  },
};
