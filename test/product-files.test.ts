/**
 * Black-box: uploading, listing and deleting a product's downloadable files; the media type a
 * file is stored and served with (a Content-Type that cannot be sent back as a header is refused
 * at upload, and one stored before that rule is served as application/octet-stream).
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct } from './support/catalog.js';
import { pay, TEST_GATEWAY_SECRET } from './support/payments.js';
import { createStoreFor, dashboard, registerSeller, type Seller } from './support/seller.js';
import { startServer } from './support/server.js';

const MAX = 64 * 1024;
let server: Awaited<ReturnType<typeof startServer>>;
let seller: Seller;
let store: { id: string };
let product: { id: string };

const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-files-'));

/** Every file under the server's data directory, by path: what its storage holds. */
function storedFiles(): string[] {
  return readdirSync(dataDir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name))
    .sort();
}

beforeAll(async () => {
  server = await startServer({ FILE_MAX_BYTES: String(MAX), DATA_DIR: dataDir, TEST_GATEWAY_SECRET });
  seller = await registerSeller(server.url);
  store = await createStoreFor(seller);
  product = await createProduct(seller, store.id, { name: 'E-book', deliveryMethods: ['downloadFiles'] });
});
afterAll(() => server?.stop());

function upload(who: Seller | null, bytes: Buffer, opts: { name?: string; csrf?: boolean; productId?: string } = {}) {
  const form = new FormData();
  form.append('file', new Blob([bytes], { type: 'application/pdf' }), opts.name ?? 'book.pdf');
  const headers: Record<string, string> = {};
  if (who) headers.cookie = who.cookie;
  if (who && opts.csrf !== false) headers['x-csrf-token'] = who.csrfToken;
  return fetch(`${server.url}/api/dashboard/stores/${store.id}/products/${opts.productId ?? product.id}/files`, {
    method: 'POST',
    headers,
    body: form,
  });
}

describe('product files', () => {
  it('stores an upload with its size and SHA-256, lists it and deletes it', async () => {
    const bytes = randomBytes(40_000);
    const response = await upload(seller, bytes, { name: '../../etc/My Book.pdf' });
    expect(response.status).toBe(201);
    const file = await response.json();
    expect(file).toEqual({
      id: expect.any(String),
      livemode: true,
      productId: product.id,
      name: 'My Book.pdf',
      contentType: 'application/pdf',
      size: 40_000,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      createdAt: expect.any(String),
    });
    const list = await (
      await dashboard(seller, 'GET', `/api/dashboard/stores/${store.id}/products/${product.id}/files`)
    ).json();
    expect(list.files.map((f: { id: string }) => f.id)).toContain(file.id);
    expect(
      (await dashboard(seller, 'DELETE', `/api/dashboard/stores/${store.id}/products/${product.id}/files/${file.id}`))
        .status,
    ).toBe(204);
    const after = await (
      await dashboard(seller, 'GET', `/api/dashboard/stores/${store.id}/products/${product.id}/files`)
    ).json();
    expect(after.files.map((f: { id: string }) => f.id)).not.toContain(file.id);
  });

  it('refuses a file over the limit with 413 and keeps nothing of it', async () => {
    const response = await upload(seller, randomBytes(MAX + 1));
    expect(response.status).toBe(413);
    expect((await response.json()).code).toBe('payload_too_large');
    const list = await (
      await dashboard(seller, 'GET', `/api/dashboard/stores/${store.id}/products/${product.id}/files`)
    ).json();
    expect(list.files.every((f: { size: number }) => f.size <= MAX)).toBe(true);
  });

  it('refuses a body with a second part after the file with 400, and keeps nothing of either', async () => {
    const listed = async () =>
      (await (await dashboard(seller, 'GET', `/api/dashboard/stores/${store.id}/products/${product.id}/files`)).json())
        .files.length as number;
    const before = { rows: await listed(), stored: storedFiles() };
    const bodies = [
      [
        ['file', 'first.pdf'],
        ['file', 'second.pdf'],
      ],
      [
        ['file', 'first.pdf'],
        ['note', null],
      ],
    ] as const;
    for (const parts of bodies) {
      const form = new FormData();
      for (const [name, filename] of parts) {
        if (filename) form.append(name, new Blob([randomBytes(20_000)], { type: 'application/pdf' }), filename);
        else form.append(name, 'hello');
      }
      const response = await fetch(`${server.url}/api/dashboard/stores/${store.id}/products/${product.id}/files`, {
        method: 'POST',
        headers: { cookie: seller.cookie, 'x-csrf-token': seller.csrfToken },
        body: form,
      });
      expect(response.status, JSON.stringify(parts)).toBe(400);
      expect(await response.json()).toEqual({
        error: expect.any(String),
        code: 'validation_failed',
        issues: [{ path: 'file', message: 'Send one part, named file, holding the file.' }],
      });
    }
    expect(await listed()).toBe(before.rows);
    expect(storedFiles()).toEqual(before.stored);
  });

  it('takes exactly the limit', async () => {
    expect((await upload(seller, randomBytes(MAX))).status).toBe(201);
  });

  it('needs a session, the CSRF token and manageProducts', async () => {
    const bytes = randomBytes(10);
    expect((await upload(null, bytes)).status).toBe(401);
    const noCsrf = await upload(seller, bytes, { csrf: false });
    expect(noCsrf.status).toBe(403);
    expect((await noCsrf.json()).code).toBe('csrf_failed');
    const staff = await registerSeller(server.url);
    await dashboard(seller, 'POST', `/api/dashboard/stores/${store.id}/members`, {
      email: staff.email,
      permissions: ['viewOrders'],
    });
    const denied = await upload(staff, bytes);
    expect(denied.status).toBe(403);
    expect((await denied.json()).code).toBe('permission_missing');
  });

  it('answers 404 for a product of another store and 415 for a JSON body', async () => {
    const other = await createStoreFor(seller);
    const foreign = await createProduct(seller, other.id);
    expect((await upload(seller, randomBytes(10), { productId: foreign.id })).status).toBe(404);
    const json = await fetch(`${server.url}/api/dashboard/stores/${store.id}/products/${product.id}/files`, {
      method: 'POST',
      headers: { cookie: seller.cookie, 'x-csrf-token': seller.csrfToken, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(json.status).toBe(415);
  });
});

/** A multipart body of one file part whose Content-Type header is `type`, byte for byte (FormData would clean it). */
function rawPart(type: string, bytes: Buffer, name = 'scan.png'): { body: Buffer; contentType: string } {
  const boundary = `svc${randomBytes(8).toString('hex')}`;
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: ${type}\r\n\r\n`;
  return {
    body: Buffer.concat([Buffer.from(head, 'latin1'), bytes, Buffer.from(`\r\n--${boundary}--\r\n`, 'latin1')]),
    contentType: `multipart/form-data; boundary=${boundary}`,
  };
}

describe('the media type of an upload', () => {
  const post = (url: string, part: { body: Buffer; contentType: string }, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${url}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': part.contentType },
      body: new Uint8Array(part.body),
    });

  it('refuses a Content-Type with a control character (415, our error body) on a product file and a payment proof, keeping nothing', async () => {
    const before = storedFiles();
    const files = `/api/dashboard/stores/${store.id}/products/${product.id}/files`;
    const refused = await post(files, rawPart('image/png\x01', randomBytes(500)), {
      cookie: seller.cookie,
      'x-csrf-token': seller.csrfToken,
    });
    expect(refused.status).toBe(415);
    expect(await refused.json()).toEqual({ error: expect.any(String), code: 'unsupported_media_type' });

    const created = await fetch(`${server.url}/api/orders/create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        storeId: store.id,
        cart: [{ productId: product.id, quantity: 1 }],
        email: 'p@example.test',
      }),
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const { order, checkoutToken } = await created.json();
    const started = await fetch(`${server.url}/api/checkout/start`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ orderId: order.id, token: checkoutToken, paymentMethod: 'manual' }),
    });
    expect(started.status, await started.clone().text()).toBe(200);
    const proof = `/api/orders/${order.id}/payment-proof?token=${checkoutToken}`;
    for (const type of ['image/png\x01', 'image/png\x7f']) {
      const response = await post(proof, rawPart(type, randomBytes(300)));
      expect(response.status, JSON.stringify(type)).toBe(415);
      expect((await response.json()).code).toBe('unsupported_media_type');
    }
    expect(storedFiles()).toEqual(before);
    // A plain one is taken as sent.
    const taken = await post(proof, rawPart('image/png', randomBytes(300)));
    expect(taken.status, await taken.clone().text()).toBe(201);
    expect((await taken.json()).proof.contentType).toBe('image/png');

    // A proof stored with such a type before the check: the seller's download still works.
    const db = new pg.Client({ connectionString: server.db.url });
    await db.connect();
    try {
      await db.query('update file set content_type = $1 where order_id = $2', ['image/png\x01', order.id]);
    } finally {
      await db.end();
    }
    const download = await fetch(`${server.url}/api/dashboard/stores/${store.id}/orders/${order.id}/payment-proof`, {
      headers: { cookie: seller.cookie, 'x-csrf-token': seller.csrfToken },
    });
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/octet-stream');
  });

  it('serves a file whose stored type could not be a header as application/octet-stream, instead of failing', async () => {
    const bad = await createProduct(seller, store.id, { name: 'Old upload', deliveryMethods: ['downloadFiles'] });
    const bytes = randomBytes(1000);
    const uploaded = await upload(seller, bytes, { productId: bad.id, name: 'old.png' });
    expect(uploaded.status).toBe(201);
    const file = await uploaded.json();
    // As an upload stored before the check left it.
    const db = new pg.Client({ connectionString: server.db.url });
    await db.connect();
    try {
      await db.query('update file set content_type = $1 where id = $2', ['image/png\x01', file.id]);
    } finally {
      await db.end();
    }
    const created = await fetch(`${server.url}/api/orders/create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ storeId: store.id, cart: [{ productId: bad.id, quantity: 1 }], email: 'o@example.test' }),
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const { order, checkoutToken } = await created.json();
    expect((await (await pay(server.url, { orderId: order.id, amount: order.price })).json()).outcome).toBe('settled');
    const delivery = await (await fetch(`${server.url}/api/orders/${order.id}/delivery?token=${checkoutToken}`)).json();
    const link = new URL(delivery.downloadFiles[0].url);
    const download = await fetch(`${server.url}${link.pathname}${link.search}`);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/octet-stream');
    expect(Buffer.from(await download.arrayBuffer())).toEqual(bytes);
  });
});
