/**
 * lighthouse: Lighthouse (the `lighthouse` npm package, 12.2.3) on the hosted storefront's store
 * page and a product page of a seeded store, in Debian's Chromium (/usr/bin/chromium, or
 * BENCH_CHROMIUM), headless, no network beyond loopback. Lighthouse's default run: a mobile device
 * with simulated slow-4G throttling. Prints the four category scores per page (performance,
 * accessibility, best practices, SEO) against the goals (≥ 95, 100, ≥ 95, ≥ 95), the audits that
 * lost points, and each page's transfer as Lighthouse saw it (HTML + CSS + JS, bytes on the wire:
 * the service sends them uncompressed) beside the same bytes gzip-compressed (the 30 KB budget of
 * issue 30, which test/storefront-pages.test.ts holds).
 *
 * Knobs: BENCH_CHROMIUM (/usr/bin/chromium), BENCH_LIGHTHOUSE_RUNS (3: runs per page; the median
 * performance score is kept).
 */
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { onCleanup } from './lib/cleanup.mjs';
import { freshDatabase, withClient } from './lib/db.mjs';
import { fixed, seconds, table } from './lib/format.mjs';
import { expectStatus, request } from './lib/http.mjs';
import { freePort } from './lib/proc.mjs';
import { createProduct, importKeys, provisionMerchant, startService, tempDir } from './lib/service.mjs';

const CHROMIUM = process.env.BENCH_CHROMIUM ?? '/usr/bin/chromium';
const RUNS = Math.max(1, Number(process.env.BENCH_LIGHTHOUSE_RUNS ?? 3));
const CATEGORIES = ['performance', 'accessibility', 'best-practices', 'seo'];
const GOALS = { performance: 95, accessibility: 100, 'best-practices': 95, seo: 95 };

const PRODUCTS = [
  {
    name: 'Nova Racer (Steam key)',
    price: 19.99,
    description:
      'An arcade racer across twelve neon cities.\n\nYou get a Steam key, shown on the order page as soon as you have paid.',
    deliveryMethods: ['licenseKeys'],
  },
  {
    name: 'Pixel Art Course',
    price: 49,
    description: 'Eight hours of video lessons.',
    deliveryMethods: ['manualDelivery'],
  },
  {
    name: 'Starship Soundtrack',
    price: 9.5,
    description: 'The game’s music in FLAC.',
    deliveryMethods: ['manualDelivery'],
  },
  {
    name: 'Pixel Studio Pro (subscription)',
    price: 9,
    description: 'The editor with every brush and export, updated every month.',
    deliveryMethods: ['manualDelivery'],
    plans: [
      { interval: 'month', price: 9, trialDays: 7 },
      { interval: 'year', price: 90 },
    ],
  },
  {
    name: 'Moon Miner (Steam key)',
    price: 14.99,
    description: 'Sold out, waiting for keys.',
    deliveryMethods: ['licenseKeys'],
  },
  ...Array.from({ length: 8 }, (_, i) => ({
    name: `Wallpaper pack ${i + 1}`,
    price: 2 + i,
    description: `Twenty wallpapers, set ${i + 1}.`,
    deliveryMethods: ['manualDelivery'],
  })),
];

/** Bytes on the wire and gzip bytes of the page's HTML, CSS and JS, from Lighthouse's network records. */
async function transferOf(lhr, baseUrl) {
  const items = lhr.audits['network-requests']?.details?.items ?? [];
  const counted = items.filter((item) => ['Document', 'Stylesheet', 'Script'].includes(item.resourceType));
  let wire = 0;
  let gzip = 0;
  for (const item of counted) {
    wire += item.transferSize ?? 0;
    if (!item.url.startsWith(baseUrl)) continue;
    const body = await fetch(item.url).then((response) => response.arrayBuffer());
    gzip += gzipSync(Buffer.from(body), { level: 9 }).byteLength;
  }
  return { wire, gzip, files: counted.map((item) => new URL(item.url).pathname) };
}

/** The audits that lost points in a category, with their score. */
function losses(lhr, category) {
  return lhr.categories[category].auditRefs
    .filter((ref) => ref.weight > 0)
    .map((ref) => lhr.audits[ref.id])
    .filter((audit) => audit.score !== null && audit.score < 1)
    .map((audit) => `${audit.id} ${fixed(audit.score, 2)}${audit.displayValue ? ` (${audit.displayValue})` : ''}`);
}

export default {
  name: 'lighthouse',
  budgetS: 400,
  title: 'Lighthouse on the hosted store page and a product page (mobile, simulated slow 4G)',
  measures:
    'Lighthouse 12 scores (performance, accessibility, best practices, SEO) and transfer of /s/{subdomain} and a product page',

  async run() {
    const started = Date.now();
    // Loaded here, not when run.mjs lists the benchmarks: Lighthouse is large.
    const [{ default: lighthouse }, chromeLauncher] = await Promise.all([
      import('lighthouse'),
      import('chrome-launcher'),
    ]);
    const workDir = tempDir('svc-bench-lighthouse-');
    const db = await freshDatabase();
    const port = await freePort();
    const publicUrl = `http://127.0.0.1:${port}`;
    const service = await startService({
      databaseUrl: db.url,
      encryptionKey: randomBytes(32),
      dataDir: workDir,
      env: { PORT: String(port), PUBLIC_URL: publicUrl },
    });
    console.log(`service pid ${service.pid} on ${service.url} (PUBLIC_URL ${publicUrl})`);
    const merchant = await provisionMerchant(service.url, { stores: 1, redisKeyPrefix: service.redisKeyPrefix });
    const [storeId] = merchant.storeIds;
    // The store's look, where this build's dashboard API takes it.
    const look = await request(`${service.url}/api/dashboard/stores/${storeId}`, {
      method: 'PATCH',
      headers: merchant.session,
      body: {
        name: 'Pixel Forge',
        description:
          'Games, soundtracks and art courses from an independent studio. Keys and files arrive as soon as you have paid.',
        accentColor: '#7c3aed',
      },
      localAddress: merchant.sourceAddress,
    });
    console.log(`store look (PATCH name, description, accentColor): ${look.status}`);
    const created = [];
    for (const product of PRODUCTS) created.push(await createProduct(service.url, merchant, storeId, product));
    await importKeys(service.url, merchant, storeId, created[0].id, [`NOVA-${randomBytes(6).toString('hex')}`]);
    const subdomain = await withClient(
      db.url,
      async (client) => (await client.query('select subdomain from store where id = $1', [storeId])).rows[0].subdomain,
    );
    const pages = [
      { name: 'store page', path: `/s/${subdomain}` },
      { name: 'product page', path: `/s/${subdomain}/products/${created[0].slug}` },
      // A recurring product's page: its plan choice, its per-plan offers.
      { name: 'recurring product page', path: `/s/${subdomain}/products/${created[3].slug}` },
    ];
    for (const page of pages) await expectStatus(request(`${publicUrl}${page.path}`), 200, page.name);
    console.log(`store /s/${subdomain} with ${created.length} products (one sold out)`);

    const chrome = await chromeLauncher.launch({
      chromePath: CHROMIUM,
      chromeFlags: [
        '--headless=new',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-dev-shm-usage',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--no-default-browser-check',
      ],
      logLevel: 'error',
    });
    const stopChrome = onCleanup('stop Chromium (lighthouse)', () => chrome.kill());
    console.log(`Chromium ${CHROMIUM} on port ${chrome.port}; ${RUNS} run(s) per page`);

    const rows = [];
    const notes = [];
    try {
      for (const page of pages) {
        const runs = [];
        for (let i = 0; i < RUNS; i++) {
          const result = await lighthouse(`${publicUrl}${page.path}`, {
            port: chrome.port,
            output: 'json',
            logLevel: 'error',
            onlyCategories: CATEGORIES,
          });
          runs.push(result.lhr);
        }
        runs.sort((a, b) => a.categories.performance.score - b.categories.performance.score);
        const lhr = runs[Math.floor(runs.length / 2)];
        const scores = Object.fromEntries(CATEGORIES.map((c) => [c, Math.round(lhr.categories[c].score * 100)]));
        const transfer = await transferOf(lhr, publicUrl);
        rows.push({
          page: page.name,
          ...scores,
          fcp: lhr.audits['first-contentful-paint'].displayValue,
          lcp: lhr.audits['largest-contentful-paint'].displayValue,
          tbt: lhr.audits['total-blocking-time'].displayValue,
          cls: lhr.audits['cumulative-layout-shift'].displayValue,
          wire: transfer.wire,
          gzip: transfer.gzip,
        });
        for (const category of CATEGORIES) {
          const lost = losses(lhr, category);
          if (lost.length > 0) notes.push(`${page.name}, ${category}: ${lost.join('; ')}`);
        }
        // What the console said (a 404 for /favicon.ico, say): the audit's items.
        for (const item of lhr.audits['errors-in-console']?.details?.items ?? [])
          notes.push(
            `${page.name}, console: ${item.source ?? ''} ${item.description ?? ''} ${item.sourceLocation?.url ?? item.url ?? ''}`,
          );
        if (lhr.runWarnings?.length) notes.push(`${page.name}, warnings: ${lhr.runWarnings.join(' | ')}`);
        notes.push(`${page.name}, files counted: ${transfer.files.join(', ')}`);
      }
    } finally {
      await stopChrome();
      await service.stop();
      await db.drop();
    }

    console.log('');
    console.log(
      table(rows, [
        { key: 'page', label: 'page', align: 'left', format: String },
        ...CATEGORIES.map((key) => ({
          key,
          label: `${key} (goal ${key === 'accessibility' ? '' : '≥ '}${GOALS[key]})`,
          format: String,
        })),
        { key: 'fcp', label: 'FCP', format: String },
        { key: 'lcp', label: 'LCP', format: String },
        { key: 'tbt', label: 'TBT', format: String },
        { key: 'cls', label: 'CLS', format: String },
        { key: 'wire', label: 'HTML+CSS+JS on the wire B', format: (v) => v.toLocaleString('en-US') },
        { key: 'gzip', label: 'same, gzip B (budget 30,720)', format: (v) => v.toLocaleString('en-US') },
      ]),
    );
    for (const note of notes) console.log(`  ${note}`);
    const missed = rows.flatMap((row) =>
      CATEGORIES.filter((c) => (c === 'accessibility' ? row[c] < 100 : row[c] < GOALS[c])).map(
        (c) => `${row.page} ${c} ${row[c]}`,
      ),
    );
    console.log(`goals: ${missed.length === 0 ? 'all met' : `NOT met: ${missed.join(', ')}`}`);
    const overBudget = rows.filter((row) => row.gzip > 30 * 1024);
    console.log(
      `transfer budget (30 KB gzip per page): ${overBudget.length === 0 ? 'met' : `NOT met: ${overBudget.map((r) => r.page).join(', ')}`}`,
    );
    console.log(`\nlighthouse took ${seconds(Date.now() - started)}`);
    return { rows, missed };
  },
};
