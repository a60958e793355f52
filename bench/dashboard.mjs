/**
 * dashboard: the seller dashboard's Orders page (apps/dashboard, served by `svc serve` at
 * /dashboard/) over a store with 1,000,000 orders (seeded as orders-paging seeds them), in
 * headless Chromium with the seller signed in: time from navigation to the first table row
 * painted, p50 over 20 loads, on the first page and on a page 500 pages deep (its cursor found by
 * following nextCursor over HTTP, then opened with `?cursor=`); beside each, the same
 * `orders.dashboardList` request the page makes, by a bare fetch() from the page; and how many
 * list requests each load made (one).
 *
 * "Painted": an init script watches the DOM; when `main table tbody tr` first appears it waits
 * for the next animation frame and a task after it (the frame that draws the row has been
 * produced), then reads performance.now(), which counts from the navigation's start.
 *
 * Knobs: BENCH_ORDERS / BENCH_OTHER_ORDERS (as orders-paging), BENCH_DASHBOARD_LOADS (20),
 * BENCH_DASHBOARD_DEEP_PAGE (500), CHROMIUM_PATH (/usr/bin/chromium).
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { onCleanup } from './lib/cleanup.mjs';
import { freshDatabase } from './lib/db.mjs';
import { fixed, seconds, table } from './lib/format.mjs';
import { expectStatus, request } from './lib/http.mjs';
import { provisionMerchant, REPO_ROOT, startService, tempDir } from './lib/service.mjs';
import { seed } from './orders-paging.mjs';

const ORDERS = Number(process.env.BENCH_ORDERS ?? 1_000_000);
const LOADS = Number(process.env.BENCH_DASHBOARD_LOADS ?? 20);
const DEEP_PAGE = Number(process.env.BENCH_DASHBOARD_DEEP_PAGE ?? 500);
const WARM_LOADS = 3;
const ROW = 'main table tbody tr';
const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const LIST = 'orders.dashboardList';

function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** The orders.dashboardList inputs of a /trpc request URL (batched: `/trpc/a,b?batch=1&input={"0":..}`). */
function listInputs(url) {
  const parsed = new URL(url);
  if (!parsed.pathname.startsWith('/trpc/')) return [];
  const names = decodeURIComponent(parsed.pathname.slice('/trpc/'.length)).split(',');
  const raw = parsed.searchParams.get('input');
  const input = raw ? JSON.parse(raw) : {};
  const batched = parsed.searchParams.get('batch') === '1';
  return names.flatMap((name, i) => (name === LIST ? [batched ? input[i] : input] : []));
}

/** Installed in every document before its scripts: the time the first table row was painted. */
function watchFirstRow(selector) {
  const state = { seen: false };
  const look = () => {
    if (state.seen || !document.querySelector(selector)) return;
    state.seen = true;
    requestAnimationFrame(() =>
      setTimeout(() => {
        window.__firstRowPaintedAt = performance.now();
      }, 0),
    );
  };
  new MutationObserver(look).observe(document, { childList: true, subtree: true });
}

export default {
  name: 'dashboard',
  title: `Dashboard Orders page, ${ORDERS.toLocaleString('en-US')} orders: first row painted (first page, page ${DEEP_PAGE + 1}) vs a bare fetch`,
  measures: `the Orders page in headless Chromium, signed in: navigation to the first table row painted, p50 of ${LOADS} loads, first page and ${DEEP_PAGE} pages deep, beside the page's own orders.dashboardList request by a bare fetch()`,
  budgetS: 1200,

  async run() {
    check(
      existsSync(path.join(REPO_ROOT, 'apps/dashboard/dist/index.html')),
      'apps/dashboard/dist is missing: build first (npm run build)',
    );
    check(existsSync(CHROMIUM_PATH), `no Chromium at ${CHROMIUM_PATH} (apt-get install chromium, or CHROMIUM_PATH)`);
    const started = Date.now();
    const db = await freshDatabase();
    const service = await startService({
      databaseUrl: db.url,
      encryptionKey: randomBytes(32),
      dataDir: tempDir('svc-bench-dashboard-'),
    });
    console.log(`database ${db.name}; service pid ${service.pid} on ${service.url}`);
    const merchant = await provisionMerchant(service.url, { stores: 2, redisKeyPrefix: service.redisKeyPrefix });
    const [storeId, otherStoreId] = merchant.storeIds;
    const seedStarted = Date.now();
    const total = await seed(db.url, storeId, otherStoreId);
    console.log(
      `seeded ${total.toLocaleString('en-US')} orders (store ${storeId} and another) in ${seconds(Date.now() - seedStarted)}`,
    );

    const browser = await chromium.launch({
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
    });
    onCleanup('close Chromium', () => browser.close());
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    // Signed in: the seller's session cookie (from registering over HTTP), as after sign-in.
    const [name, value] = merchant.session.cookie.split(/=(.*)/s);
    await context.addCookies([{ name, value, url: service.url, httpOnly: true, sameSite: 'Lax' }]);
    await context.addInitScript(watchFirstRow, ROW);
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    const violations = [];
    page.on('console', (message) => {
      if (/Content.Security.Policy|Refused to/i.test(message.text())) violations.push(message.text());
    });
    page.on('pageerror', (error) => violations.push(`page error: ${error.message}`));
    let trpcRequests = [];
    page.on('request', (req) => {
      if (req.url().startsWith(`${service.url}/trpc/`)) trpcRequests.push(req.url());
    });

    const ordersUrl = (cursor) =>
      `${service.url}/dashboard/stores/${storeId}/orders${cursor ? `?${new URLSearchParams({ cursor })}` : ''}`;

    /** One load: navigation to the first row painted (ms from the navigation's start) and the list calls it made. */
    const load = async (url) => {
      await page.goto('about:blank');
      trpcRequests = [];
      await page.goto(url, { waitUntil: 'commit' });
      await page.waitForFunction(() => window.__firstRowPaintedAt !== undefined, undefined, { polling: 50 });
      const paintedMs = await page.evaluate(() => window.__firstRowPaintedAt);
      const rows = await page.locator(ROW).count();
      check(rows > 1, `the Orders table shows orders (${rows} row(s): an empty table?)`);
      const listCalls = trpcRequests.flatMap(listInputs);
      // Where the list request sat in the load (Resource Timing, ms from the navigation's start).
      const listTiming = await page.evaluate(
        (name) =>
          performance
            .getEntriesByType('resource')
            .filter((entry) => entry.name.includes(name))
            .map((entry) => ({ start: entry.startTime, end: entry.responseEnd }))[0],
        LIST,
      );
      return { paintedMs, rows, listCalls, trpcCount: trpcRequests.length, listTiming };
    };

    // The page's own list request: its input, read from the first load.
    const first = await load(ordersUrl());
    check(first.listCalls.length === 1, `the first page made one list request (made ${first.listCalls.length})`);
    const pageInput = first.listCalls[0];
    check(pageInput.storeId === storeId, 'the page lists the benchmarked store');
    console.log(`the page's list request: ${LIST} ${JSON.stringify(pageInput)} (${first.rows} rows shown)`);

    // 500 pages deep: follow nextCursor with the page's own input, as the Next button would.
    const cookie = { cookie: merchant.session.cookie };
    const listOver = async (input) => {
      const answered = await expectStatus(
        request(`${service.url}/trpc/${LIST}?${new URLSearchParams({ input: JSON.stringify(input) })}`, {
          headers: cookie,
        }),
        200,
        LIST,
      );
      return answered.json.result.data;
    };
    const followStarted = Date.now();
    let cursor;
    for (let page = 0; page < DEEP_PAGE; page++) {
      const answer = await listOver({ ...pageInput, cursor });
      check(answer.hasMore && answer.nextCursor, `page ${page + 1} has a next page`);
      cursor = answer.nextCursor;
    }
    const deepFirst = (await listOver({ ...pageInput, cursor })).orders[0];
    const firstFirst = (await listOver(pageInput)).orders[0];
    console.log(
      `followed nextCursor ${DEEP_PAGE} times over HTTP in ${seconds(Date.now() - followStarted)}: page ${DEEP_PAGE + 1} starts with ${deepFirst.orderId} (${deepFirst.id})`,
    );

    const cases = [
      { name: 'first page', url: ordersUrl(), input: pageInput, firstOrder: firstFirst },
      {
        name: `page ${DEEP_PAGE + 1} (?cursor=)`,
        url: ordersUrl(cursor),
        input: { ...pageInput, cursor },
        firstOrder: deepFirst,
      },
    ];
    const results = [];
    for (const spec of cases) {
      for (let i = 0; i < WARM_LOADS; i++) await load(spec.url);
      const loads = [];
      for (let i = 0; i < LOADS; i++) loads.push(await load(spec.url));
      const perLoad = loads.map((one) => one.listCalls.length);
      check(
        loads.every((one) => one.listCalls.length === 1 && one.listCalls[0].cursor === spec.input.cursor),
        `${spec.name}: one list request per load, with the page's cursor (got ${perLoad.join(',')})`,
      );
      // The page shows that page: its first row is the order found over HTTP.
      const firstRow = await page.locator(ROW).first().textContent();
      check(
        firstRow.includes(spec.firstOrder.orderId) || firstRow.includes(spec.firstOrder.id),
        `${spec.name}: the first row is ${spec.firstOrder.orderId} (it says "${firstRow.slice(0, 120)}")`,
      );
      // The same request by a bare fetch from the page (same origin, the same cookie), after a warm-up.
      const fetchUrl = `/trpc/${LIST}?${new URLSearchParams({ input: JSON.stringify(spec.input) })}`;
      const fetchMs = await page.evaluate(
        async ({ url, count }) => {
          const times = [];
          for (let i = 0; i < count + 3; i++) {
            const t0 = performance.now();
            const response = await fetch(url, { credentials: 'same-origin', cache: 'no-store' });
            await response.json();
            if (!response.ok) throw new Error(`${url}: ${response.status}`);
            if (i >= 3) times.push(performance.now() - t0);
          }
          return times;
        },
        { url: fetchUrl, count: LOADS },
      );
      const painted = loads.map((one) => one.paintedMs);
      results.push({
        name: spec.name,
        p50: median(painted),
        min: Math.min(...painted),
        max: Math.max(...painted),
        fetchP50: median(fetchMs),
        fetchMax: Math.max(...fetchMs),
        listTrips: `${Math.max(...perLoad)} (each of ${LOADS})`,
        trpc: median(loads.map((one) => one.trpcCount)),
        listStart: median(loads.map((one) => one.listTiming?.start ?? NaN)),
        listEnd: median(loads.map((one) => one.listTiming?.end ?? NaN)),
      });
    }
    check(violations.length === 0, `the page reported: ${violations.join('; ')}`);
    await browser.close();
    await service.stop();
    await db.drop();

    console.log('');
    console.log(
      table(results, [
        { key: 'name', label: 'case', align: 'left' },
        { key: 'p50', label: 'first row painted p50 ms', format: (v) => fixed(v, 0) },
        { key: 'min', label: 'min', format: (v) => fixed(v, 0) },
        { key: 'max', label: 'max', format: (v) => fixed(v, 0) },
        { key: 'listStart', label: 'list sent p50', format: (v) => fixed(v, 0) },
        { key: 'listEnd', label: 'list answered p50', format: (v) => fixed(v, 0) },
        { key: 'fetchP50', label: 'bare fetch p50 ms', format: (v) => fixed(v, 1) },
        { key: 'fetchMax', label: 'max', format: (v) => fixed(v, 1) },
        { key: 'listTrips', label: 'list round trips per load', align: 'left' },
        { key: 'trpc', label: '/trpc requests per load', format: (v) => fixed(v, 0) },
      ]),
    );
    console.log(
      `(${LOADS} loads per case after ${WARM_LOADS} unmeasured; the browser's cache holds the immutable assets, as for a returning seller; ` +
        `"list sent/answered": the page's ${LIST} request in Resource Timing, ms from the navigation's start)`,
    );
    console.log(`\ndashboard took ${seconds(Date.now() - started)}`);
    return { results };
  },
};
