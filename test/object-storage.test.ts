/**
 * Black-box: two svc processes, each with its own DATA_DIR, sharing nothing but PostgreSQL,
 * Redis and an S3-compatible object store (s3rver, started here on loopback). A product file
 * uploaded through one downloads byte for byte through the other (a 302 to the store's presigned
 * URL); an image made by one is served by the other, immutable; the local disks hold no file. A
 * store that is down answers 503 with our error body and keeps nothing, and the processes
 * recover when it is back; a process killed in the middle of an upload leaves no row without its
 * object.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct } from './support/catalog.js';
import { freshDatabase } from './support/databases.js';
import { TEST_REDIS_URL } from './support/env.js';
import { buy, TEST_GATEWAY_SECRET } from './support/payments.js';
import { startS3Server, type RunningS3Server } from './support/s3-server.js';
import { createStoreFor, dashboard, registerSeller, type Seller } from './support/seller.js';
import { spawnServer, type RunningServer } from './support/server.js';

let s3: RunningS3Server;
let db: Awaited<ReturnType<typeof freshDatabase>>;
let a: RunningServer;
let b: RunningServer;
let seller: Seller;
let store: { id: string; subdomain: string };
/** What every process of this test is started with but its DATA_DIR. */
let shared: Record<string, string>;
const dataDirs = [mkdtempSync(path.join(tmpdir(), 'svc-s3-a-')), mkdtempSync(path.join(tmpdir(), 'svc-s3-b-'))];

beforeAll(async () => {
  s3 = await startS3Server();
  db = await freshDatabase();
  shared = {
    DATABASE_URL: db.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: `svc-test:${randomBytes(6).toString('hex')}:`,
    TRUST_PROXY: '127.0.0.1',
    APP_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    TEST_GATEWAY_SECRET,
    ...s3.env,
  };
  // Both start at once on the empty database: one migrates, the other waits for it (db/orm.ts).
  [a, b] = await Promise.all([
    spawnServer({ ...shared, DATA_DIR: dataDirs[0] }),
    spawnServer({ ...shared, DATA_DIR: dataDirs[1] }),
  ]);
  seller = await registerSeller(a.url);
  store = await createStoreFor(seller, 'Bucket Shop');
});

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await db?.drop();
  await s3?.dispose();
});

/** Every file under the processes' data directories that is not theirs to keep (keys, the pid file): uploads. */
function localUploads(): string[] {
  return dataDirs.flatMap((dir) =>
    readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && entry.parentPath !== dir)
      .map((entry) => path.join(entry.parentPath, entry.name)),
  );
}

function uploadFile(server: RunningServer, productId: string, bytes: Buffer, name: string, storeId = store.id) {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(bytes)], { type: 'application/pdf' }), name);
  return fetch(`${server.url}/api/dashboard/stores/${storeId}/products/${productId}/files`, {
    method: 'POST',
    headers: { cookie: seller.cookie, 'x-csrf-token': seller.csrfToken },
    body: form,
  });
}

function uploadImage(server: RunningServer, productId: string, bytes: Buffer) {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(bytes)], { type: 'image/png' }), 'picture');
  return fetch(`${server.url}/api/dashboard/stores/${store.id}/products/${productId}/images`, {
    method: 'POST',
    headers: { cookie: seller.cookie, 'x-csrf-token': seller.csrfToken },
    body: form,
  });
}

/** The signed link of the order's first file, as /delivery gives it, as a path and query. */
async function fileLinkOf(server: RunningServer, order: { id: string; token: string }): Promise<string> {
  const response = await fetch(`${server.url}/api/orders/${order.id}/delivery?token=${order.token}`);
  expect(response.status, await response.clone().text()).toBe(200);
  const delivery = (await response.json()) as { downloadFiles: Array<{ url: string }> };
  const link = new URL(delivery.downloadFiles[0]!.url);
  return `${link.pathname}${link.search}`;
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('two svc processes on one object store', () => {
  it('downloads through B, byte for byte, a product file uploaded through A (302 to a presigned URL)', async () => {
    const product = await createProduct(seller, store.id, { name: 'Manual', deliveryMethods: ['downloadFiles'] });
    const bytes = randomBytes(6 * 1024 * 1024 + 17);
    const uploaded = await uploadFile(a, product.id, bytes, 'Manuel – v2.pdf');
    expect(uploaded.status, await uploaded.clone().text()).toBe(201);
    expect((await uploaded.json()).sha256).toBe(sha256(bytes));

    const order = await buy(a.url, { storeId: store.id, productId: product.id });
    const link = await fileLinkOf(a, order);
    const redirect = await fetch(`${b.url}${link}`, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get('cache-control')).toBe('private, no-store');
    const location = new URL(redirect.headers.get('location')!);
    expect(location.origin).toBe(s3.endpoint);
    expect(location.searchParams.get('X-Amz-Expires')).toBe('300');

    const followed = await fetch(`${b.url}${link}`);
    expect(followed.status).toBe(200);
    expect(followed.headers.get('content-type')).toBe('application/pdf');
    expect(followed.headers.get('content-disposition')).toBe(
      `attachment; filename="Manuel _ v2.pdf"; filename*=UTF-8''Manuel%20%E2%80%93%20v2.pdf`,
    );
    expect(sha256(Buffer.from(await followed.arrayBuffer()))).toBe(sha256(bytes));

    // The link's own checks come first, as on local disk: a wrong signature is 403, on either process.
    const forged = link.replace(/sig=[^&]+/, 'sig=' + 'a'.repeat(64));
    expect((await fetch(`${b.url}${forged}`, { redirect: 'manual' })).status).toBe(403);
    // Nothing on either local disk: the file is in the bucket only.
    expect(localUploads()).toEqual([]);
    expect((await s3.keys(`${store.id}/`)).length).toBeGreaterThan(0);
  });

  it('serves through B, immutable, an image made by A', async () => {
    const product = await createProduct(seller, store.id, { name: 'Poster' });
    const png = await sharp({ create: { width: 800, height: 500, channels: 3, background: { r: 200, g: 40, b: 40 } } })
      .png()
      .toBuffer();
    const made = await uploadImage(a, product.id, png);
    expect(made.status, await made.clone().text()).toBe(201);
    const [image] = ((await made.json()) as { images: Array<{ variants: Array<{ url: string; width: number }> }> })
      .images;
    for (const variant of image!.variants) {
      const url = new URL(variant.url, a.url);
      const fromA = await fetch(`${a.url}${url.pathname}`);
      const fromB = await fetch(`${b.url}${url.pathname}`);
      expect(fromB.status).toBe(200);
      expect(fromB.headers.get('content-type')).toBe('image/webp');
      expect(fromB.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      const bytes = Buffer.from(await fromB.arrayBuffer());
      expect(bytes).toEqual(Buffer.from(await fromA.arrayBuffer()));
      expect((await sharp(bytes).metadata()).width).toBe(variant.width);
    }
    expect(localUploads()).toEqual([]);
  });

  it('answers 503 with our error body while the store is down, keeps nothing, and recovers when it is back', async () => {
    const product = await createProduct(seller, store.id, { name: 'Outage', deliveryMethods: ['downloadFiles'] });
    const before = await uploadFile(a, product.id, randomBytes(2000), 'before.pdf');
    expect(before.status).toBe(201);
    const order = await buy(a.url, { storeId: store.id, productId: product.id });
    const link = await fileLinkOf(a, order);
    const poster = await createProduct(seller, store.id, { name: 'Outage poster' });
    const png = await sharp({ create: { width: 300, height: 200, channels: 3, background: 'white' } })
      .png()
      .toBuffer();
    const made = await uploadImage(a, poster.id, png);
    expect(made.status).toBe(201);
    const imagePath = new URL(((await made.json()) as { images: Array<{ url: string }> }).images[0]!.url, a.url)
      .pathname;

    await s3.stop();
    try {
      const refused = await uploadFile(a, product.id, randomBytes(3000), 'during.pdf');
      expect(refused.status).toBe(503);
      expect(await refused.json()).toEqual({ error: expect.any(String), code: 'service_unavailable' });
      const download = await fetch(`${b.url}${link}`, { redirect: 'manual' });
      expect(download.status).toBe(503);
      expect((await download.json()).code).toBe('service_unavailable');
      const picture = await fetch(`${b.url}${imagePath}`);
      expect(picture.status).toBe(503);
      expect((await picture.json()).code).toBe('service_unavailable');
      // The processes stay up.
      expect((await fetch(`${a.url}/healthz`)).status).toBe(200);
    } finally {
      s3 = await startS3Server({ port: s3.port, directory: s3.directory });
    }
    // The refused upload left no row.
    const files = await (
      await dashboard(seller, 'GET', `/api/dashboard/stores/${store.id}/products/${product.id}/files`)
    ).json();
    expect(files.files.map((f: { name: string }) => f.name)).toEqual(['before.pdf']);

    const again = await uploadFile(b, product.id, randomBytes(3000), 'after.pdf');
    expect(again.status).toBe(201);
    expect((await fetch(`${a.url}${link}`)).status).toBe(200);
    expect((await fetch(`${a.url}${imagePath}`)).status).toBe(200);
  });

  it("removes from the store a logo replaced through B, and A's test objects when B wipes the test data", async () => {
    const shop = await createStoreFor(seller, 'Logo Shop');
    const picture = (r: number) =>
      sharp({ create: { width: 120, height: 60, channels: 3, background: { r, g: 10, b: 10 } } })
        .png()
        .toBuffer();
    const uploadLogo = async (server: RunningServer, bytes: Buffer) => {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(bytes)], { type: 'image/png' }), 'logo.png');
      const response = await fetch(`${server.url}/api/dashboard/stores/${shop.id}/logo`, {
        method: 'POST',
        headers: { cookie: seller.cookie, 'x-csrf-token': seller.csrfToken },
        body: form,
      });
      expect(response.status, await response.clone().text()).toBe(200);
      return ((await response.json()) as { logoUrl: string }).logoUrl;
    };
    await uploadLogo(a, await picture(10));
    const first = await s3.keys(`${shop.id}/`);
    expect(first).toHaveLength(1);
    const logoUrl = await uploadLogo(b, await picture(200));
    const second = await s3.keys(`${shop.id}/`);
    expect(second).toHaveLength(1);
    expect(second).not.toEqual(first);
    const served = await fetch(`${a.url}${logoUrl}`);
    expect(served.status).toBe(200);
    expect(served.headers.get('cache-control')).toContain('immutable');

    // A test product with a file and an image, made through A; a live one beside it.
    const testProduct = await createProduct(
      seller,
      shop.id,
      { name: 'Test book', deliveryMethods: ['downloadFiles'] },
      'test',
    );
    const testAuth = { cookie: seller.cookie, 'x-csrf-token': seller.csrfToken, 'x-svc-mode': 'test' };
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(randomBytes(5000))], { type: 'application/pdf' }), 'test.pdf');
    const testFile = await fetch(`${a.url}/api/dashboard/stores/${shop.id}/products/${testProduct.id}/files`, {
      method: 'POST',
      headers: testAuth,
      body: form,
    });
    expect(testFile.status, await testFile.clone().text()).toBe(201);
    const imageForm = new FormData();
    imageForm.append('file', new Blob([new Uint8Array(await picture(90))], { type: 'image/png' }), 'picture');
    const testImage = await fetch(`${a.url}/api/dashboard/stores/${shop.id}/products/${testProduct.id}/images`, {
      method: 'POST',
      headers: testAuth,
      body: imageForm,
    });
    expect(testImage.status, await testImage.clone().text()).toBe(201);
    const liveProduct = await createProduct(seller, shop.id, { name: 'Live book', deliveryMethods: ['downloadFiles'] });
    const liveFile = await uploadFile(a, liveProduct.id, randomBytes(4000), 'live.pdf', shop.id);
    expect(liveFile.status).toBe(201);
    const kept = [...second, `${shop.id}/${((await liveFile.json()) as { id: string }).id}`].sort();
    expect((await s3.keys(`${shop.id}/`)).length).toBeGreaterThan(kept.length);

    const wipe = await fetch(`${b.url}/api/dashboard/stores/${shop.id}/test-data`, {
      method: 'DELETE',
      headers: { cookie: seller.cookie, 'x-csrf-token': seller.csrfToken },
    });
    expect(wipe.status, await wipe.clone().text()).toBe(202);
    const jobId = ((await wipe.json()) as { id: string }).id;
    const deadline = Date.now() + 30_000;
    for (;;) {
      const job = (await (
        await fetch(`${b.url}/api/dashboard/stores/${shop.id}/test-data/${jobId}`, {
          headers: { cookie: seller.cookie },
        })
      ).json()) as { status: string; error: string | null };
      if (job.status === 'succeeded' || job.status === 'failed') {
        expect([job.status, job.error]).toEqual(['succeeded', null]);
        break;
      }
      if (Date.now() > deadline) throw new Error(`the wipe is still ${job.status}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // The test file and image (with its renditions) are gone from the store; the logo and the live file stay.
    expect(await s3.keys(`${shop.id}/`)).toEqual(kept);
  });

  it('leaves no file row without its object when a process is killed in the middle of an upload', async () => {
    const c = await spawnServer({ ...shared, DATA_DIR: mkdtempSync(path.join(tmpdir(), 'svc-s3-c-')) });
    const product = await createProduct(seller, store.id, { name: 'Interrupted', deliveryMethods: ['downloadFiles'] });
    // A 12 MiB upload whose end never comes: its first part reaches the store, then C is killed.
    const boundary = `svc-${randomBytes(8).toString('hex')}`;
    const request = http.request(`${c.url}/api/dashboard/stores/${store.id}/products/${product.id}/files`, {
      method: 'POST',
      headers: {
        cookie: seller.cookie,
        'x-csrf-token': seller.csrfToken,
        'content-type': `multipart/form-data; boundary=${boundary}`,
      },
    });
    const answered = new Promise<string>((resolve) => {
      request.on('error', (error) => resolve(`error: ${error.message}`));
      request.on('response', (response) => resolve(`answered ${response.statusCode}`));
    });
    request.write(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.pdf"\r\nContent-Type: application/pdf\r\n\r\n`,
    );
    request.write(randomBytes(12 * 1024 * 1024));
    const deadline = Date.now() + 30_000;
    while (s3.partsInFlight() === 0) {
      if (Date.now() > deadline) throw new Error('no part of the upload reached the store');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const exited = new Promise((resolve) => c.process.once('exit', resolve));
    c.process.kill('SIGKILL');
    await exited;
    expect(await answered).toMatch(/^error: /);

    // No row names the interrupted upload, and every file row of the database has its object.
    const files = await (
      await dashboard(seller, 'GET', `/api/dashboard/stores/${store.id}/products/${product.id}/files`)
    ).json();
    expect(files.files).toEqual([]);
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ storage_key: string }>('select storage_key from file');
      const held = new Set(await s3.keys());
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.filter((row) => !held.has(row.storage_key))).toEqual([]);
    } finally {
      await client.end();
    }
  });

  it('refuses to start on a malformed STORAGE_URL, saying why in one line', async () => {
    const refused = spawnServer({
      DATABASE_URL: db.url,
      DATA_DIR: mkdtempSync(path.join(tmpdir(), 'svc-s3-bad-')),
      APP_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      STORAGE_URL: 's3://svc-test?endpoint=127.0.0.1:9000',
    });
    const failure = await refused.then(
      () => undefined,
      (error: Error) => error.message,
    );
    const lines = (failure ?? '').split('\n').filter((line) => line.includes('STORAGE_URL'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(
      'STORAGE_URL has an endpoint that is not an http(s) origin; expected s3://<bucket>?endpoint=<url>&region=<region>&forcePathStyle=true',
    );
  });
});
