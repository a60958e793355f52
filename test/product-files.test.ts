/** Black-box: uploading, listing and deleting a product's downloadable files. */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct } from './support/catalog.js';
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
  server = await startServer({ FILE_MAX_BYTES: String(MAX), DATA_DIR: dataDir });
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
