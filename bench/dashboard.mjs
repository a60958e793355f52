/**
 * dashboard: the seller dashboard's Orders page (apps/dashboard, served by `svc serve` at
 * /dashboard/) over a store with 1,000,000 orders (seeded as orders-paging seeds them), in
 * headless Chromium with the seller signed in: time from navigation to the first table row
 * painted, p50 over 20 loads, on the first page and on a page 500 pages deep (its cursor found by
 * following nextCursor over HTTP, then opened with `?cursor=`); beside each, the same
 * `orders.dashboardList` request the page makes, by a bare fetch() from the page; and how many
 * list requests each load made (one). And paging in the app, as a seller pages: from the page before
 * (page 2 for the first page, by `First page`; page 500 for page 501, by `Next page`), the time
 * from pressing the pager's link to the new page's first row painted, beside the same bare fetch,
 * and that the press made one list request.
 *
 * "Painted": an init script watches the DOM; when `main table tbody tr` first appears it waits
 * for the next animation frame and a task after it (the frame that draws the row has been
 * produced), then reads performance.now(), which counts from the navigation's start.
 *
 * Then the same for a webhook endpoint's page (issue 29) whose delivery log holds 100,000 attempts
 * (seeded by one INSERT ... SELECT generate_series): its first log page and the page 1,000 pages
 * deep (25 rows a page; its cursor found by following nextCursor over HTTP), each load's
 * `webhooks.deliveries` requests and /trpc requests counted, and EXPLAIN (ANALYZE) of the
 * repository's page statement at that depth, checked to be a seek on webhook_delivery_log_index
 * (no Sort, no OFFSET, a page's worth of rows read).
 *
 * Then the Subscriptions page (issue 40) over 1,000,000 subscriptions of the store (and 100,000 of
 * another, seeded as the subscription-figures benchmark seeds them): the first page and page 501,
 * measured as the Orders page is, one `subscriptions.list` request per load.
 *
 * Knobs: BENCH_ORDERS / BENCH_OTHER_ORDERS (as orders-paging), BENCH_DASHBOARD_LOADS (20),
 * BENCH_DASHBOARD_DEEP_PAGE (500), BENCH_DASHBOARD_DELIVERIES (100000),
 * BENCH_DASHBOARD_DELIVERY_DEEP_PAGE (1000), BENCH_SUBSCRIPTIONS (1000000),
 * BENCH_DASHBOARD_CASES (orders,deliveries,subscriptions),
 * CHROMIUM_PATH (/usr/bin/chromium).
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { onCleanup } from './lib/cleanup.mjs';
import { freshDatabase, withClient } from './lib/db.mjs';
import { fixed, seconds, table } from './lib/format.mjs';
import { expectStatus, request } from './lib/http.mjs';
import { provisionMerchant, REPO_ROOT, startService, tempDir } from './lib/service.mjs';
import { seed } from './orders-paging.mjs';
import { seedSubscriptionRows } from './subscription-figures.mjs';

const ORDERS = Number(process.env.BENCH_ORDERS ?? 1_000_000);
const LOADS = Number(process.env.BENCH_DASHBOARD_LOADS ?? 20);
const DEEP_PAGE = Number(process.env.BENCH_DASHBOARD_DEEP_PAGE ?? 500);
const WARM_LOADS = 3;
const ROW = 'main table tbody tr';
const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const LIST = 'orders.dashboardList';
const DELIVERIES = Number(process.env.BENCH_DASHBOARD_DELIVERIES ?? 100_000);
const DELIVERY_DEEP_PAGE = Number(process.env.BENCH_DASHBOARD_DELIVERY_DEEP_PAGE ?? 1000);
const DELIVERY_LIST = 'webhooks.deliveries';
const SUBSCRIPTIONS = Number(process.env.BENCH_SUBSCRIPTIONS ?? 1_000_000);
const SUBSCRIPTION_LIST = 'subscriptions.list';
const CASES = (process.env.BENCH_DASHBOARD_CASES ?? 'orders,deliveries,subscriptions')
  .split(',')
  .map((name) => name.trim());

function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
}

/** The nearest-rank percentile (0..1) of `values`. */
function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** The `list` procedure's inputs of a /trpc request URL (batched: `/trpc/a,b?batch=1&input={"0":..}`). */
function listInputs(url, list) {
  const parsed = new URL(url);
  if (!parsed.pathname.startsWith('/trpc/')) return [];
  const names = decodeURIComponent(parsed.pathname.slice('/trpc/'.length)).split(',');
  const raw = parsed.searchParams.get('input');
  const input = raw ? JSON.parse(raw) : {};
  const batched = parsed.searchParams.get('batch') === '1';
  return names.flatMap((name, i) => (name === list ? [batched ? input[i] : input] : []));
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

/**
 * Run in the page: presses the pager's link named `link` and answers the ms from the press to the
 * frame that paints a first row holding `text` (the next page's first item), as watchFirstRow
 * counts a load's, and when the list request it made was sent and answered.
 */
function clickAndTime({ selector, link, text }) {
  return new Promise((resolve, reject) => {
    const anchor = [...document.querySelectorAll('nav[aria-label="Pages"] a')].find(
      (a) => a.textContent.trim() === link,
    );
    if (!anchor) return reject(new Error(`no ${link} link in the pager`));
    const t0 = performance.now();
    const shown = () => document.querySelector(selector)?.textContent.includes(text);
    const observer = new MutationObserver(() => {
      if (!shown()) return;
      observer.disconnect();
      requestAnimationFrame(() =>
        setTimeout(() => {
          const painted = performance.now() - t0;
          // The list request the press made (Resource Timing), ms from the press.
          const trip = performance
            .getEntriesByType('resource')
            .find((entry) => entry.startTime >= t0 && entry.name.includes('/trpc/'));
          resolve({
            painted,
            sent: trip ? trip.startTime - t0 : NaN,
            answered: trip ? trip.responseEnd - t0 : NaN,
          });
        }, 0),
      );
    });
    observer.observe(document, { childList: true, subtree: true, characterData: true });
    anchor.click();
  });
}

/** The delivery log seed: one statement, `count` finished attempts to one endpoint over the last 30 days, one a ~26 s, newest first in time. */
const SEED_DELIVERIES_SQL = `
insert into webhook_delivery (id, webhook_id, store_id, event_id, event, attempt, status, due_at,
                              request_headers, response_code, response_body_preview, error_message, duration_ms,
                              created_at, updated_at)
select $5 || lpad(g::text, 30, '0'), $1, $2, 'evt_bench' || lpad(g::text, 31, '0'), 'order.created', 1,
       (case when g % 10 = 0 then 'failed' else 'success' end)::text,
       t,
       -- The headers an attempt went out with, as the dispatcher keeps them (signatures are stand-ins of their length).
       jsonb_build_object(
         'content-type', 'application/json', 'user-agent', 'svc-webhooks/1',
         'x-service-signature', 't=' || extract(epoch from t)::bigint || ',v1=' || repeat(md5(g::text), 2),
         'x-service-event', 'order.created', 'x-service-event-id', 'evt_bench' || lpad(g::text, 31, '0'),
         'x-service-delivery-id', $5 || lpad(g::text, 30, '0'), 'webhook-id', 'evt_bench' || lpad(g::text, 31, '0'),
         'webhook-timestamp', extract(epoch from t)::bigint::text,
         'webhook-signature', 'v1,' || encode(sha256(g::text::bytea), 'base64'),
         'host', '127.0.0.1:9', 'content-length', '412'),
       case when g % 10 = 0 then 500 else 200 end,
       case when g % 10 = 0 then '{"error":"bench receiver failed"}' else '{"ok":true}' end,
       case when g % 10 = 0 then 'HTTP 500' else null end,
       20 + g % 50, t, t + interval '30 milliseconds'
from generate_series(1, $3::int) as g,
     lateral (select now() - interval '1 minute' - (g * ($4::float8 / $3::int)) * interval '1 second') as at(t)`;

/** The repository's page statement (delivery-log.repo.ts selectDeliveryPage), for EXPLAIN at a cursor's position. */
const DELIVERY_PAGE_SQL = `select d.id, d.webhook_id, d.event_id, d.event, d.attempt, d.status, d.response_code, d.response_body_preview,
            d.error_message, d.duration_ms, d.request_headers, d.created_at,
            (extract(epoch from d.created_at) * 1000000)::bigint as created_us
       from webhook_delivery d
      where d.webhook_id = $1 and (d.created_at, d.id) < (timestamptz 'epoch' + ($2::bigint) * interval '1 microsecond', $3)
      order by d.created_at desc, d.id desc limit $4`;

const DELIVERY_PAGE_SIZE = 25;

export default {
  name: 'dashboard',
  title: `Dashboard Orders page (${ORDERS.toLocaleString('en-US')} orders), a webhook's delivery log (${DELIVERIES.toLocaleString('en-US')} attempts) and Subscriptions (${SUBSCRIPTIONS.toLocaleString('en-US')}): first row painted, first page and deep, vs a bare fetch`,
  measures: `the Orders page, a webhook endpoint's page and the Subscriptions page in headless Chromium, signed in: navigation to the first table row painted, p50 of ${LOADS} loads, first page and ${DEEP_PAGE} (orders, subscriptions) / ${DELIVERY_DEEP_PAGE} (deliveries) pages deep, beside the page's own list request by a bare fetch(), and the list requests per load`,
  budgetS: 1500,

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
    const cookie = { cookie: merchant.session.cookie };

    /** One load: navigation to the first row painted (ms from the navigation's start) and the list calls it made. */
    const load = async (url, list) => {
      await page.goto('about:blank');
      trpcRequests = [];
      await page.goto(url, { waitUntil: 'commit' });
      await page.waitForFunction(() => window.__firstRowPaintedAt !== undefined, undefined, { polling: 50 });
      const paintedMs = await page.evaluate(() => window.__firstRowPaintedAt);
      const rows = await page.locator(ROW).count();
      check(rows > 1, `the table shows rows (${rows} row(s): an empty table?)`);
      const listCalls = trpcRequests.flatMap((one) => listInputs(one, list));
      // Where the list request sat in the load (Resource Timing, ms from the navigation's start).
      const listTiming = await page.evaluate(
        (name) =>
          performance
            .getEntriesByType('resource')
            .filter((entry) => entry.name.includes(name))
            .map((entry) => ({ start: entry.startTime, end: entry.responseEnd }))[0],
        list,
      );
      return { paintedMs, rows, listCalls, trpcCount: trpcRequests.length, listTiming };
    };

    /** The list procedure over HTTP with the seller's cookie, as the page asks it. */
    const listOver = async (list, input) => {
      const answered = await expectStatus(
        request(`${service.url}/trpc/${list}?${new URLSearchParams({ input: JSON.stringify(input) })}`, {
          headers: cookie,
        }),
        200,
        list,
      );
      return answered.json.result.data;
    };

    /**
     * One screen, first page and `deep` pages deep: the page's own list input read from a first
     * load, nextCursor followed `deep` times over HTTP, then LOADS measured loads of each.
     */
    const measureScreen = async ({ label, list, url, deep, itemsOf, rowShows, rowText }) => {
      const first = await load(url(), list);
      check(
        first.listCalls.length === 1,
        `${label}: the first page made one list request (made ${first.listCalls.length})`,
      );
      const pageInput = first.listCalls[0];
      check(pageInput.storeId === storeId, `${label}: the page lists the benchmarked store`);
      console.log(`${label}: the page's list request: ${list} ${JSON.stringify(pageInput)} (${first.rows} rows shown)`);
      const followStarted = Date.now();
      let cursor;
      // cursors[k]: the cursor of page k + 1 (none for the first).
      const cursors = [undefined];
      for (let n = 0; n < deep; n++) {
        const answer = await listOver(list, { ...pageInput, cursor });
        check(answer.hasMore && answer.nextCursor, `${label}: page ${n + 1} has a next page`);
        cursor = answer.nextCursor;
        cursors.push(cursor);
      }
      const deepFirst = itemsOf(await listOver(list, { ...pageInput, cursor }))[0];
      const firstFirst = itemsOf(await listOver(list, pageInput))[0];
      console.log(
        `${label}: followed nextCursor ${deep} times over HTTP in ${seconds(Date.now() - followStarted)}: page ${deep + 1} starts with ${deepFirst.id}`,
      );
      const cases = [
        // In the app: from page 2 by `First page`, and from page `deep` by `Next page`.
        {
          name: `${label}, first page`,
          url: url(),
          input: pageInput,
          firstItem: firstFirst,
          from: url(cursors[1]),
          link: 'First page',
        },
        {
          name: `${label}, page ${deep + 1} (?cursor=)`,
          url: url(cursor),
          input: { ...pageInput, cursor },
          firstItem: deepFirst,
          from: url(cursors[deep - 1]),
          link: 'Next page',
        },
      ];
      const results = [];
      for (const spec of cases) {
        for (let i = 0; i < WARM_LOADS; i++) await load(spec.url, list);
        const loads = [];
        for (let i = 0; i < LOADS; i++) loads.push(await load(spec.url, list));
        const perLoad = loads.map((one) => one.listCalls.length);
        check(
          loads.every((one) => one.listCalls.length === 1 && one.listCalls[0].cursor === spec.input.cursor),
          `${spec.name}: one list request per load, with the page's cursor (got ${perLoad.join(',')})`,
        );
        // The page shows that page: its first row is the item found over HTTP.
        const firstRow = await page.locator(ROW).first().textContent();
        check(
          rowShows(firstRow, spec.firstItem),
          `${spec.name}: the first row is ${spec.firstItem.id} (it says "${firstRow.slice(0, 160)}")`,
        );
        // The same request by a bare fetch from the page (same origin, the same cookie), after a warm-up.
        const fetchUrl = `/trpc/${list}?${new URLSearchParams({ input: JSON.stringify(spec.input) })}`;
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
        // The seller pages in the app: from the page before (loaded, not timed), the pager's link
        // pressed; the time from the press to the page's first row painted, and the list requests
        // the press made.
        const navigations = [];
        for (let i = 0; i < WARM_LOADS + LOADS; i++) {
          await load(spec.from, list);
          trpcRequests = [];
          const paged = await page.evaluate(clickAndTime, {
            selector: ROW,
            link: spec.link,
            text: rowText(spec.firstItem),
          });
          const calls = trpcRequests.flatMap((one) => listInputs(one, list));
          check(
            calls.length === 1 && calls[0].cursor === spec.input.cursor,
            `${spec.name}: the pager's ${spec.link} made one list request, with the page's cursor (made ${calls.length})`,
          );
          if (i >= WARM_LOADS) navigations.push(paged);
        }
        const painted = loads.map((one) => one.paintedMs);
        results.push({
          name: spec.name,
          p50: median(painted),
          p95: percentile(painted, 0.95),
          min: Math.min(...painted),
          max: Math.max(...painted),
          fetchP50: median(fetchMs),
          fetchP95: percentile(fetchMs, 0.95),
          listTrips: `${Math.max(...perLoad)} (each of ${LOADS})`,
          trpc: `${Math.min(...loads.map((one) => one.trpcCount))}-${Math.max(...loads.map((one) => one.trpcCount))}`,
          listStart: median(loads.map((one) => one.listTiming?.start ?? NaN)),
          listEnd: median(loads.map((one) => one.listTiming?.end ?? NaN)),
          navP50: median(navigations.map((one) => one.painted)),
          navP95: percentile(
            navigations.map((one) => one.painted),
            0.95,
          ),
          navSent: median(navigations.map((one) => one.sent)),
          navAnswered: median(navigations.map((one) => one.answered)),
          navRatio: median(navigations.map((one) => one.painted)) / median(fetchMs),
        });
      }
      return { results, cursor };
    };

    const results = [];
    if (CASES.includes('orders')) {
      const seedStarted = Date.now();
      const total = await seed(db.url, storeId, otherStoreId);
      console.log(
        `seeded ${total.toLocaleString('en-US')} orders (store ${storeId} and another) in ${seconds(Date.now() - seedStarted)}`,
      );
      const orders = await measureScreen({
        label: 'Orders',
        list: LIST,
        url: (cursor) =>
          `${service.url}/dashboard/stores/${storeId}/orders${cursor ? `?${new URLSearchParams({ cursor })}` : ''}`,
        deep: DEEP_PAGE,
        itemsOf: (answer) => answer.orders,
        rowShows: (text, order) => text.includes(order.orderId) || text.includes(order.id),
        rowText: (order) => order.orderId ?? order.id,
      });
      results.push(...orders.results);
    }
    let plan;
    if (CASES.includes('deliveries')) {
      // An endpoint (created as the seller would: it is not sent anything, no event is made) and its log.
      const created = await expectStatus(
        request(`${service.url}/api/dashboard/stores/${storeId}/webhooks`, {
          method: 'POST',
          headers: merchant.session,
          body: { name: 'Bench receiver', url: 'http://127.0.0.1:9/bench-hook', events: ['order.created'] },
          localAddress: merchant.sourceAddress,
        }),
        201,
        'POST /api/dashboard/stores/{storeId}/webhooks',
      );
      const webhookId = created.json.id;
      // Another store's endpoint with as long a log: the table holds other endpoints' attempts too.
      const other = await expectStatus(
        request(`${service.url}/api/dashboard/stores/${otherStoreId}/webhooks`, {
          method: 'POST',
          headers: merchant.session,
          body: { name: 'Other receiver', url: 'http://127.0.0.1:9/other-hook', events: ['order.created'] },
          localAddress: merchant.sourceAddress,
        }),
        201,
        'POST /api/dashboard/stores/{storeId}/webhooks',
      );
      const seedStarted = Date.now();
      await withClient(db.url, async (client) => {
        await client.query(SEED_DELIVERIES_SQL, [webhookId, storeId, DELIVERIES, 30 * 86_400, 'bd']);
        await client.query(SEED_DELIVERIES_SQL, [other.json.id, otherStoreId, DELIVERIES, 30 * 86_400, 'bo']);
        await client.query('vacuum analyze webhook_delivery');
      });
      console.log(
        `seeded ${DELIVERIES.toLocaleString('en-US')} delivery attempts of endpoint ${webhookId}, and as many of another store's endpoint (one INSERT ... SELECT generate_series each) in ${seconds(Date.now() - seedStarted)}`,
      );
      const deliveries = await measureScreen({
        label: 'Delivery log',
        list: DELIVERY_LIST,
        url: (cursor) =>
          `${service.url}/dashboard/stores/${storeId}/webhooks/${webhookId}${cursor ? `?${new URLSearchParams({ cursor })}` : ''}`,
        deep: DELIVERY_DEEP_PAGE,
        itemsOf: (answer) => answer.deliveries,
        // The row's details name the attempt's id (x-service-delivery-id) and its event.
        rowShows: (text, delivery) => text.includes(delivery.id) && text.includes(delivery.eventId),
        rowText: (delivery) => delivery.id,
      });
      results.push(...deliveries.results);
      // The statement of the deep page, at the position its cursor carries (the last row of page
      // DELIVERY_DEEP_PAGE, found here by an OFFSET, the check's own business): a seek, not a scan.
      plan = await withClient(db.url, async (client) => {
        const position = await client.query(
          `select id, (extract(epoch from created_at) * 1000000)::bigint::text as us from webhook_delivery
           where webhook_id = $1 order by created_at desc, id desc offset $2 limit 1`,
          [webhookId, DELIVERY_DEEP_PAGE * DELIVERY_PAGE_SIZE - 1],
        );
        const { id, us } = position.rows[0];
        const explained = await client.query(`explain (analyze, buffers, format json) ${DELIVERY_PAGE_SQL}`, [
          webhookId,
          us,
          id,
          DELIVERY_PAGE_SIZE + 1,
        ]);
        return explained.rows[0]['QUERY PLAN'][0];
      });
      const top = plan.Plan;
      const nodes = [];
      const walk = (node) => {
        nodes.push(node);
        for (const child of node.Plans ?? []) walk(child);
      };
      walk(top);
      // A seek: an index scan whose index condition holds the cursor's position, reading about one
      // page of rows (an OFFSET would read the 25,000 rows before them), and no full sort.
      const scan = nodes.find(
        (node) => node['Node Type'].startsWith('Index') && node['Relation Name'] === 'webhook_delivery',
      );
      const describe = nodes
        .map(
          (n) =>
            `${n['Node Type']}${n['Index Name'] ? ` using ${n['Index Name']}` : ''}${n['Index Cond'] ? ` (${n['Index Cond']})` : ''}`,
        )
        .join(' > ');
      check(scan, `page ${DELIVERY_DEEP_PAGE + 1}'s statement scans an index of webhook_delivery (plan: ${describe})`);
      check(
        /created_at/.test(scan['Index Cond'] ?? ''),
        `page ${DELIVERY_DEEP_PAGE + 1}'s index condition starts at the cursor's position (plan: ${describe})`,
      );
      check(
        !nodes.some((node) => node['Node Type'] === 'Sort'),
        `page ${DELIVERY_DEEP_PAGE + 1}'s statement makes no full sort (plan: ${describe})`,
      );
      const read =
        scan['Actual Rows'] + (scan['Rows Removed by Filter'] ?? 0) + (scan['Rows Removed by Index Recheck'] ?? 0);
      check(
        read <= 4 * (DELIVERY_PAGE_SIZE + 1),
        `page ${DELIVERY_DEEP_PAGE + 1}'s index scan read about one page of rows (read ${read}; plan: ${describe})`,
      );
      console.log(
        `EXPLAIN ANALYZE of page ${DELIVERY_DEEP_PAGE + 1}'s statement: ${describe}; ` +
          `${read} rows read from the index, ${top['Shared Hit Blocks'] + (top['Shared Read Blocks'] ?? 0)} buffers, ` +
          `execution ${fixed(plan['Execution Time'], 3)} ms (planning ${fixed(plan['Planning Time'], 3)} ms)`,
      );
    }
    if (CASES.includes('subscriptions')) {
      const seedStarted = Date.now();
      // The product and plans are not seeded: the list shows the subscription's own product name.
      const plans = ['benchplanmonthly', 'benchplanquarterly', 'benchplanyearly'];
      await withClient(db.url, async (client) => {
        await seedSubscriptionRows(client, {
          storeId,
          productId: 'benchproduct',
          planIds: plans,
          count: SUBSCRIPTIONS,
        });
        await seedSubscriptionRows(client, {
          storeId: otherStoreId,
          productId: 'benchother',
          planIds: plans,
          count: Math.round(SUBSCRIPTIONS / 10),
        });
        await client.query('vacuum analyze subscription');
      });
      console.log(
        `seeded ${SUBSCRIPTIONS.toLocaleString('en-US')} subscriptions of store ${storeId}, and a tenth as many of another (one INSERT ... SELECT generate_series each) in ${seconds(Date.now() - seedStarted)}`,
      );
      const subscriptions = await measureScreen({
        label: 'Subscriptions',
        list: SUBSCRIPTION_LIST,
        url: (cursor) =>
          `${service.url}/dashboard/stores/${storeId}/subscriptions${cursor ? `?${new URLSearchParams({ cursor })}` : ''}`,
        deep: DEEP_PAGE,
        itemsOf: (answer) => answer.subscriptions,
        // Each seeded buyer's e-mail is its own (buyer<n>@example.com).
        rowShows: (text, subscription) => text.includes(subscription.customerEmail),
        rowText: (subscription) => subscription.customerEmail,
      });
      results.push(...subscriptions.results);
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
        { key: 'p95', label: 'p95', format: (v) => fixed(v, 0) },
        { key: 'min', label: 'min', format: (v) => fixed(v, 0) },
        { key: 'max', label: 'max', format: (v) => fixed(v, 0) },
        { key: 'listStart', label: 'list sent p50', format: (v) => fixed(v, 0) },
        { key: 'listEnd', label: 'list answered p50', format: (v) => fixed(v, 0) },
        { key: 'fetchP50', label: 'bare fetch p50 ms', format: (v) => fixed(v, 1) },
        { key: 'fetchP95', label: 'p95', format: (v) => fixed(v, 1) },
        { key: 'navP50', label: 'paged in the app p50 ms', format: (v) => fixed(v, 0) },
        { key: 'navP95', label: 'p95', format: (v) => fixed(v, 0) },
        { key: 'navSent', label: 'its list sent p50', format: (v) => fixed(v, 0) },
        { key: 'navAnswered', label: 'answered p50', format: (v) => fixed(v, 0) },
        { key: 'navRatio', label: 'in the app / bare fetch', format: (v) => fixed(v, 2) },
        { key: 'listTrips', label: 'list round trips per load', align: 'left' },
        { key: 'trpc', label: '/trpc requests per load', align: 'left' },
      ]),
    );
    console.log(
      `(${LOADS} loads per case after ${WARM_LOADS} unmeasured; the browser's cache holds the immutable assets, as for a returning seller; ` +
        `"list sent/answered": the page's list request (${LIST}, ${DELIVERY_LIST}, ${SUBSCRIPTION_LIST}) in Resource Timing, ms from the navigation's start)`,
    );
    console.log(`\ndashboard took ${seconds(Date.now() - started)}`);
    return { results, plan: plan ? { executionMs: plan['Execution Time'] } : undefined };
  },
};
