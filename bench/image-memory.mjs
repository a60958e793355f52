/**
 * image-memory: the service's memory while image uploads are decoded (issue 37, outside probe
 * finding 3). A server started as in production (NODE_ENV=production, svc's Node flags: the
 * 512 MiB heap limit `npm start` passes) takes rounds of BENCH_IMAGE_UPLOADS (32) product image
 * uploads all in flight at once, through the merchant API:
 *
 * - `bombs`: PNGs of 6300 × 6300 pixels in about 130 KB each (what the probe sent: 39.7 million
 *   pixels, just under the old 40 million cap); each must be refused (413) from its header;
 * - `largest`: PNGs of 4096 × 4096 (the most pixels accepted, 16.8 million) with some detail,
 *   about 0.3 MB each; each must be stored (201), two decoded at a time, the rest waiting;
 *   BENCH_IMAGE_ROUNDS (4) rounds of them, about the 130 uploads the probe made.
 *
 * It samples the server's RSS every 50 ms and prints the peak of each round, the RSS once idle
 * after them, and the latency of a cheap request (GET /api/store/{subdomain}) sent every 100 ms
 * while idle and during the uploads (the probe saw sign-in go from 150 to 800 ms). The target:
 * peak RSS under BENCH_IMAGE_RSS_TARGET_MIB (300) MiB. Not a ratio against a floor: there is no
 * floor for memory, the figure is absolute (the probe measured 729 MB with 32 in flight).
 *
 * The service starts with svc's environment as `npm start` sets it (PROCESS_ENV of
 * apps/server/src/node-flags.ts: glibc's malloc gives a picture's buffers back once freed);
 * BENCH_IMAGE_DEFAULT_MALLOC=1 starts it without, to see what that setting is worth.
 *
 * Knobs: BENCH_IMAGE_UPLOADS (32), BENCH_IMAGE_ROUNDS (4), BENCH_IMAGE_RSS_TARGET_MIB (300),
 * BENCH_IMAGE_DEFAULT_MALLOC (unset).
 */
import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { freshDatabase } from './lib/db.mjs';
import { fixed, seconds, table } from './lib/format.mjs';
import { expectStatus, request } from './lib/http.mjs';
import { memoryOf, trackPeakRss } from './lib/proc.mjs';
import { createProduct, problemsAfterStart, provisionMerchant, startService } from './lib/service.mjs';

const UPLOADS = Number(process.env.BENCH_IMAGE_UPLOADS ?? 32);
const ROUNDS = Number(process.env.BENCH_IMAGE_ROUNDS ?? 4);
const RSS_TARGET_MIB = Number(process.env.BENCH_IMAGE_RSS_TARGET_MIB ?? 300);

const METRICS_TOKEN = randomBytes(16).toString('hex');

/** The V8 heap (total) and the memory outside it that V8 knows of (Buffers), in MiB, from /metrics. */
async function heapOf(baseUrl) {
  const text = await (
    await fetch(`${baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
  ).text();
  const value = (name) => Number(new RegExp(`^${name} ([0-9.e+]+)`, 'm').exec(text)?.[1] ?? NaN) / 2 ** 20;
  return { heap: value('nodejs_heap_size_total_bytes'), external: value('nodejs_external_memory_bytes') };
}

function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
}

/** A white 6300 × 6300 PNG: 39.7 million pixels in about 130 KB. */
function bomb() {
  return sharp({ create: { width: 6300, height: 6300, channels: 3, background: '#ffffff' } })
    .png({ compressionLevel: 9 })
    .toBuffer();
}

/** A 4096 × 4096 PNG with bands and blocks (so it is no trivial file), well under 2 MB. */
function largest() {
  const blocks = [];
  for (let i = 0; i < 16; i++)
    blocks.push({
      input: {
        create: {
          width: 256,
          height: 4096,
          channels: 3,
          background: { r: (i * 53) % 256, g: (i * 97) % 256, b: (i * 31) % 256 },
        },
      },
      left: i * 256,
      top: 0,
    });
  return sharp({ create: { width: 4096, height: 4096, channels: 3, background: '#336699' } })
    .composite(blocks)
    .png({ compressionLevel: 9 })
    .toBuffer();
}

function quantile(sorted, q) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** GET `url` every 100 ms until stopped; resolves the latencies in ms. */
function probeLatency(url) {
  const latencies = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      const response = await fetch(url);
      await response.arrayBuffer();
      check(response.status === 200, `GET ${url} answered ${response.status}`);
      latencies.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return latencies.sort((a, b) => a - b);
    },
  };
}

export default {
  name: 'image-memory',
  budgetS: 300,
  title: 'RSS of a production server while 32 product image uploads are in flight',
  measures:
    'peak RSS of a production-flagged server (512 MiB heap flag) with 32 image uploads in flight: 6300 x 6300 PNGs (refused) and 4096 x 4096 PNGs (stored), target under 300 MiB',

  async run() {
    const started = Date.now();
    const db = await freshDatabase();
    const service = await startService({
      databaseUrl: db.url,
      encryptionKey: randomBytes(32),
      env: {
        NODE_ENV: 'production',
        PUBLIC_URL: 'https://shop.example.test',
        // Production refuses to start without a mail server; nothing is mailed here.
        SMTP_URL: 'smtp://127.0.0.1:9',
        // /metrics for the heap figures (in production it needs a token).
        METRICS_TOKEN: METRICS_TOKEN,
        ...(process.env.BENCH_IMAGE_DEFAULT_MALLOC === '1' ? { MALLOC_MMAP_THRESHOLD_: undefined } : {}),
      },
    });
    console.log(`database ${db.name}`);
    if (process.env.BENCH_IMAGE_DEFAULT_MALLOC === '1')
      console.log(
        "BENCH_IMAGE_DEFAULT_MALLOC=1: the service runs with glibc's malloc as it comes (no MALLOC_MMAP_THRESHOLD_)",
      );
    console.log(`service pid ${service.pid} on ${service.url} (started in ${seconds(Date.now() - started)})`);
    const merchant = await provisionMerchant(service.url, {
      stores: 1,
      scopes: ['product:write'],
      redisKeyPrefix: service.redisKeyPrefix,
    });
    const [storeId] = merchant.storeIds;
    const store = await expectStatus(
      request(`${service.url}/api/dashboard/stores/${storeId}`, { headers: merchant.session }),
      200,
      'GET /api/dashboard/stores/{storeId}',
    );
    const products = [];
    for (let i = 0; i < UPLOADS; i++)
      products.push(
        await createProduct(service.url, merchant, storeId, {
          name: `Pictured ${i + 1}`,
          price: 5,
          deliveryMethods: ['manualDelivery'],
        }),
      );
    const pictures = { bombs: await bomb(), largest: await largest() };
    console.log(
      `pictures: 6300 x 6300 PNG ${fixed(pictures.bombs.length / 1024, 0)} KiB, 4096 x 4096 PNG ${fixed(pictures.largest.length / 1024, 0)} KiB`,
    );

    const upload = async (productId, bytes) => {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(bytes)], { type: 'image/png' }), 'picture.png');
      const response = await fetch(`${service.url}/api/merchant/v1/stores/${storeId}/products/${productId}/images`, {
        method: 'POST',
        headers: { authorization: `Bearer ${merchant.apiKey}` },
        body: form,
      });
      const text = await response.text();
      return { status: response.status, text };
    };
    const probeUrl = `${service.url}/api/store/${store.json.subdomain}`;

    // Warm: sharp is loaded on the first upload, as in a fresh production process.
    const small = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#fff' } })
      .png()
      .toBuffer();
    await expectStatus(upload(products[0].id, small), 201, 'warm-up upload');
    const idleProbe = probeLatency(probeUrl);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const idleLatency = await idleProbe.stop();
    const baseline = memoryOf(service.pid).rssMiB;

    const rows = [];
    const rounds = [
      { name: 'bombs', bytes: pictures.bombs, status: 413 },
      ...Array.from({ length: ROUNDS }, (_, i) => ({ name: `largest ${i + 1}`, bytes: pictures.largest, status: 201 })),
    ];
    for (const round of rounds) {
      const rss = trackPeakRss(service.pid);
      const probe = probeLatency(probeUrl);
      const t0 = performance.now();
      const results = await Promise.all(products.map((product) => upload(product.id, round.bytes)));
      const elapsed = performance.now() - t0;
      const latency = await probe.stop();
      const peak = rss.done();
      const wrong = results.filter((r) => r.status !== round.status);
      check(
        wrong.length === 0,
        `${round.name}: ${wrong.length} of ${results.length} uploads answered other than ${round.status}: ${wrong[0]?.status} ${wrong[0]?.text.slice(0, 200)}`,
      );
      const { heap, external } = await heapOf(service.url);
      rows.push({
        heap,
        external,
        name: round.name,
        uploads: results.length,
        status: round.status,
        seconds: elapsed / 1000,
        peak,
        after: memoryOf(service.pid).rssMiB,
        p50: quantile(latency, 0.5),
        max: latency[latency.length - 1],
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    const idle = memoryOf(service.pid);

    console.log(
      `\nRSS before the rounds (sharp loaded, idle): ${fixed(baseline, 0)} MiB; GET /api/store/{subdomain} idle: p50 ${fixed(quantile(idleLatency, 0.5), 1)} ms, max ${fixed(idleLatency[idleLatency.length - 1], 1)} ms`,
    );
    console.log(
      table(rows, [
        { key: 'name', label: `round (${UPLOADS} in flight)`, align: 'left' },
        { key: 'status', label: 'each answered', format: String },
        { key: 'seconds', label: 'round s', format: (v) => fixed(v, 1) },
        { key: 'peak', label: 'peak RSS MiB', format: (v) => fixed(v, 0) },
        { key: 'after', label: 'RSS after MiB', format: (v) => fixed(v, 0) },
        { key: 'heap', label: 'V8 heap MiB', format: (v) => fixed(v, 0) },
        { key: 'external', label: 'external MiB', format: (v) => fixed(v, 0) },
        { key: 'p50', label: 'lookup p50 ms', format: (v) => fixed(v, 1) },
        { key: 'max', label: 'lookup max ms', format: (v) => fixed(v, 1) },
      ]),
    );
    const peak = Math.max(...rows.map((row) => row.peak));
    console.log(
      `RSS idle 5 s after the last round: ${fixed(idle.rssMiB, 0)} MiB; whole-process peak (VmHWM) ${fixed(idle.hwmMiB, 0)} MiB`,
    );
    console.log(
      `peak RSS with ${UPLOADS} uploads in flight: ${fixed(peak, 0)} MiB (target < ${RSS_TARGET_MIB} MiB: ${peak < RSS_TARGET_MIB ? 'met' : 'NOT met'})`,
    );
    // Not a failure of the run: on a busy 2-core machine the decoding can starve the event loop
    // enough for the rate limiter's 250 ms Redis deadline to pass (it then limits in process).
    const problems = problemsAfterStart(service.logs());
    if (problems.length > 0)
      console.log(
        `the service logged ${problems.length} warning(s) or error(s); the first: ${JSON.stringify(problems[0].msg)}`,
      );
  },
};
