/**
 * storage: uploads and downloads on both file backends (issue 43), one after the other in one
 * sitting: local disk (DATA_DIR, the default) and an S3-compatible object store (STORAGE_URL;
 * s3rver on loopback, the store the tests use, lib/s3rver.mjs). For each backend, a fresh
 * database and one `svc serve`:
 *
 * - `upload`: BENCH_STORAGE_UPLOADS (10) product files of BENCH_STORAGE_FILE_MB (10) MiB, one at a
 *   time through the dashboard's multipart route: MiB/s, and the service's peak RSS;
 * - `upload big`: one file of BENCH_STORAGE_BIG_MB (90) MiB: the peak RSS must stay where the
 *   10 MiB uploads left it (the upload streams; it is never held whole);
 * - `download`: the 10 MiB file BENCH_STORAGE_DOWNLOADS (20) times by its signed link, as a buyer
 *   fetches it (local: svc streams it; object store: svc answers 302 to a presigned URL and the
 *   bytes come from the store), each checked against its SHA-256: MiB/s and the peak RSS;
 * - `images`: BENCH_STORAGE_IMAGES (100) product images uploaded 8 at a time, then each served
 *   once through svc (`/images/...`, what a storefront fetches): images/s and the peak RSS.
 *
 * The order the download needs is written with SQL (completed, with a line of the product) and
 * its link signed with the service's own signer (modules/fulfilment/delivery.service.js), so the
 * route's checks run as for a real buyer. Not a ratio against a floor: the figures are the two
 * backends side by side, and the RSS rows are the check.
 *
 * Knobs: BENCH_STORAGE_UPLOADS, BENCH_STORAGE_FILE_MB, BENCH_STORAGE_BIG_MB, BENCH_STORAGE_DOWNLOADS,
 * BENCH_STORAGE_IMAGES, BENCH_STORAGE_BACKENDS (local,s3).
 */
import { createHash, randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { freshDatabase, withClient } from './lib/db.mjs';
import { fixed, table } from './lib/format.mjs';
import { memoryOf, trackPeakRss } from './lib/proc.mjs';
import { startS3rver } from './lib/s3rver.mjs';
import { createProduct, importDist, problemsAfterStart, provisionMerchant, startService } from './lib/service.mjs';

const UPLOADS = Number(process.env.BENCH_STORAGE_UPLOADS ?? 10);
const FILE_MB = Number(process.env.BENCH_STORAGE_FILE_MB ?? 10);
const BIG_MB = Number(process.env.BENCH_STORAGE_BIG_MB ?? 90);
const DOWNLOADS = Number(process.env.BENCH_STORAGE_DOWNLOADS ?? 20);
const IMAGES = Number(process.env.BENCH_STORAGE_IMAGES ?? 100);
const BACKENDS = (process.env.BENCH_STORAGE_BACKENDS ?? 'local,s3').split(',').filter(Boolean);
const MiB = 1024 * 1024;

function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
}

const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');

/** POSTs `bytes` as the one part `file` of a multipart body to `url` with the seller's session; resolves the JSON answer. */
async function postFile(url, session, bytes, name, type) {
  const form = new FormData();
  form.append('file', new Blob([bytes], { type }), name);
  const response = await fetch(url, { method: 'POST', headers: session, body: form });
  const text = await response.text();
  check(response.status === 201, `POST ${url} answered ${response.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/** Runs `work` while sampling the service's RSS; resolves { ms, peakMiB, result }. */
async function measured(pid, work) {
  const rss = trackPeakRss(pid);
  const t0 = performance.now();
  const result = await work();
  return { ms: performance.now() - t0, peakMiB: rss.done(), result };
}

async function runBackend(backend, signFileLink) {
  const encryptionKey = randomBytes(32);
  const store = backend === 's3' ? await startS3rver() : undefined;
  const db = await freshDatabase();
  const service = await startService({ databaseUrl: db.url, encryptionKey, env: store?.env ?? {} });
  console.log(
    `${backend}: database ${db.name}, service pid ${service.pid}${store ? `, s3rver ${store.endpoint}` : ''}`,
  );
  const merchant = await provisionMerchant(service.url, {
    scopes: ['product:write'],
    redisKeyPrefix: service.redisKeyPrefix,
  });
  const [storeId] = merchant.storeIds;
  const filesUrl = (productId) => `${service.url}/api/dashboard/stores/${storeId}/products/${productId}/files`;
  const rows = [];
  const idle = memoryOf(service.pid).rssMiB;

  // Warm: the first upload loads the multipart parser (and the SDK's client) as a live process has.
  const warm = await createProduct(service.url, merchant, storeId, {
    name: 'Warm',
    price: 5,
    deliveryMethods: ['downloadFiles'],
  });
  await postFile(filesUrl(warm.id), merchant.session, randomBytes(1024), 'warm.bin', 'application/octet-stream');

  const file = randomBytes(FILE_MB * MiB);
  const products = [];
  for (let i = 0; i < UPLOADS; i++)
    products.push(
      await createProduct(service.url, merchant, storeId, {
        name: `Manual ${i + 1}`,
        price: 5,
        deliveryMethods: ['downloadFiles'],
      }),
    );
  const uploads = await measured(service.pid, async () => {
    const stored = [];
    for (const product of products)
      stored.push(await postFile(filesUrl(product.id), merchant.session, file, 'manual.pdf', 'application/pdf'));
    return stored;
  });
  for (const stored of uploads.result) check(stored.sha256 === sha256(file), 'an upload stored other bytes');
  rows.push([
    backend,
    `upload ${UPLOADS} x ${FILE_MB} MiB`,
    fixed((UPLOADS * FILE_MB) / (uploads.ms / 1000), 1),
    'MiB/s',
    fixed(uploads.peakMiB, 0),
  ]);

  const bigProduct = await createProduct(service.url, merchant, storeId, {
    name: 'Big',
    price: 5,
    deliveryMethods: ['downloadFiles'],
  });
  const big = randomBytes(BIG_MB * MiB);
  const bigUpload = await measured(service.pid, () =>
    postFile(filesUrl(bigProduct.id), merchant.session, big, 'big.iso', 'application/octet-stream'),
  );
  check(bigUpload.result.sha256 === sha256(big), 'the big upload stored other bytes');
  rows.push([
    backend,
    `upload 1 x ${BIG_MB} MiB`,
    fixed(BIG_MB / (bigUpload.ms / 1000), 1),
    'MiB/s',
    fixed(bigUpload.peakMiB, 0),
  ]);

  // The download: a completed order of the first product, and its file's signed link.
  const fileId = uploads.result[0].id;
  const orderId = `bench${randomBytes(10).toString('hex')}`;
  await withClient(db.url, (client) =>
    client.query(
      `with o as (insert into "order" (id, store_id, status, product_name, price_minor, currency, customer_email, paid_at, completed_at, created_at, updated_at)
         values ($1, $2, 'completed', 'Manual 1', 500, 'USD', 'buyer@example.test', now(), now(), now(), now()) returning id)
       insert into order_line (id, order_id, product_id, product_name, quantity, unit_price_minor)
       select 'l' || substr(o.id, 2), o.id, $3, 'Manual 1', 1, 500 from o`,
      [orderId, storeId, products[0].id],
    ),
  );
  const expires = Math.floor(Date.now() / 1000) + 3600;
  const sig = signFileLink({ deps: { config: { encryptionKey } } }, orderId, fileId, expires);
  const link = `${service.url}/api/orders/${orderId}/files/${fileId}?expires=${expires}&sig=${sig}`;
  const downloads = await measured(service.pid, async () => {
    let redirected = 0;
    for (let i = 0; i < DOWNLOADS; i++) {
      const response = await fetch(link);
      check(response.status === 200, `the download answered ${response.status}`);
      if (response.redirected) redirected++;
      check(sha256(Buffer.from(await response.arrayBuffer())) === sha256(file), 'a download brought other bytes');
    }
    return redirected;
  });
  check(
    downloads.result === (backend === 's3' ? DOWNLOADS : 0),
    `${downloads.result} of ${DOWNLOADS} downloads redirected`,
  );
  rows.push([
    backend,
    `download ${DOWNLOADS} x ${FILE_MB} MiB${backend === 's3' ? ' (302)' : ''}`,
    fixed((DOWNLOADS * FILE_MB) / (downloads.ms / 1000), 1),
    'MiB/s',
    fixed(downloads.peakMiB, 0),
  ]);

  const picture = await sharp({ create: { width: 1600, height: 1000, channels: 3, background: '#336699' } })
    .composite([
      { input: { create: { width: 800, height: 500, channels: 3, background: '#ffcc00' } }, left: 200, top: 200 },
    ])
    .png()
    .toBuffer();
  const pictured = await createProduct(service.url, merchant, storeId, {
    name: 'Pictured',
    price: 5,
    deliveryMethods: ['manualDelivery'],
  });
  const imageProducts = [pictured];
  // A product holds at most 5 images; the uploads spread over as many products as they need.
  while (imageProducts.length * 5 < IMAGES)
    imageProducts.push(
      await createProduct(service.url, merchant, storeId, {
        name: `Pictured ${imageProducts.length + 1}`,
        price: 5,
        deliveryMethods: ['manualDelivery'],
      }),
    );
  const imagesUrl = (productId) => `${service.url}/api/dashboard/stores/${storeId}/products/${productId}/images`;
  const made = await measured(service.pid, async () => {
    const urls = [];
    let next = 0;
    const lane = async () => {
      while (next < IMAGES) {
        const i = next++;
        const product = imageProducts[i % imageProducts.length];
        const answer = await postFile(imagesUrl(product.id), merchant.session, picture, 'picture.png', 'image/png');
        urls.push(new URL(answer.images.at(-1).url, service.url).href);
      }
    };
    await Promise.all(Array.from({ length: 8 }, lane));
    return urls;
  });
  rows.push([
    backend,
    `upload ${IMAGES} images (8 at a time)`,
    fixed(IMAGES / (made.ms / 1000), 1),
    'images/s',
    fixed(made.peakMiB, 0),
  ]);
  const served = await measured(service.pid, async () => {
    for (const url of made.result) {
      const response = await fetch(url);
      check(response.status === 200, `GET ${url} answered ${response.status}`);
      await response.arrayBuffer();
    }
  });
  rows.push([
    backend,
    `serve ${IMAGES} images`,
    fixed(IMAGES / (served.ms / 1000), 1),
    'images/s',
    fixed(served.peakMiB, 0),
  ]);

  const problems = problemsAfterStart(service.logs());
  await service.stop();
  await db.drop();
  await store?.stop();
  return { rows, idle, problems };
}

export default {
  name: 'storage',
  budgetS: 600,
  title: 'file uploads and downloads on local disk and on an S3-compatible object store',
  measures: `${FILE_MB} MiB product file uploads and downloads, a ${BIG_MB} MiB upload and ${IMAGES} images on each backend: throughput and the service's peak RSS`,

  async run() {
    const { signFileLink } = await importDist('modules/fulfilment/delivery.service.js');
    const rows = [];
    for (const backend of BACKENDS) {
      const result = await runBackend(backend, signFileLink);
      console.log(
        `${backend}: RSS idle after start ${fixed(result.idle, 0)} MiB; log lines at warn or above: ${result.problems.length}`,
      );
      rows.push(...result.rows);
    }
    console.log();
    console.log(
      table(
        rows.map(([backend, name, rate, unit, peak]) => ({ backend, name, rate, unit, peak })),
        [
          { key: 'backend', label: 'backend', align: 'left' },
          { key: 'name', label: 'case', align: 'left' },
          { key: 'rate', label: 'rate' },
          { key: 'unit', label: 'unit', align: 'left' },
          { key: 'peak', label: 'service peak RSS MiB' },
        ],
      ),
    );
  },
};
