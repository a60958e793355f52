/**
 * In-process, over real HTTP: what a storefront page costs the database when the browser already
 * holds it. A revalidation (`If-None-Match` with the page's ETag) is answered 304 after exactly
 * one SQL statement, the one that finds the ETag (catalog `storefrontVersion`), on the store page,
 * a product page and the cart page; a 200 runs more. Counted at the driver: every statement the
 * app sends, through the ORM or as a prepared statement, goes through `pg.Client#query`.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct, importKeys } from './support/catalog.js';
import { startInProcess, type InProcessApp } from './support/in-process.js';
import { createStoreFor, registerSeller } from './support/seller.js';

let app: InProcessApp;
let store: { id: string; subdomain: string };
let product: { id: string; slug: string };

/** The statements sent while `recording` is set (their SQL text, for the failure message). */
let recording = false;
const statements: string[] = [];
// Kept to call with the client as `this` (apply), and to put back after.
// eslint-disable-next-line @typescript-eslint/unbound-method
const originalQuery = pg.Client.prototype.query;

function textOf(config: unknown): string {
  if (typeof config === 'string') return config;
  if (config && typeof config === 'object' && 'text' in config) return String(config.text);
  return String(config);
}

beforeAll(async () => {
  // Every pooled connection is a pg.Client: the ORM's (knex) and db/prepared.ts's alike.
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    if (recording) statements.push(textOf(args[0]).replace(/\s+/g, ' ').slice(0, 200));
    return (originalQuery as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof pg.Client.prototype.query;
  app = await startInProcess();
  const seller = await registerSeller(app.url);
  store = await createStoreFor(seller, 'Quiet Shop');
  product = await createProduct(seller, store.id, { name: 'Quiet key', price: 3, deliveryMethods: ['licenseKeys'] });
  await importKeys(seller, store.id, product.id, ['QUIET-0001']);
  await createProduct(seller, store.id, { name: 'Quiet e-book', price: 7, deliveryMethods: ['manualDelivery'] });
});
afterAll(async () => {
  pg.Client.prototype.query = originalQuery;
  await app?.close();
});

/** The statements one GET sends, and its answer. */
async function counted(path: string, headers: Record<string, string> = {}) {
  statements.length = 0;
  recording = true;
  try {
    const response = await fetch(`${app.url}${path}`, { headers });
    await response.arrayBuffer();
    return { response, statements: [...statements] };
  } finally {
    recording = false;
  }
}

describe('a storefront page revalidated with its ETag', () => {
  for (const [page, path] of [
    ['the store page', () => `/s/${store.subdomain}`],
    ['a product page (by slug)', () => `/s/${store.subdomain}/products/${product.slug}`],
    ['the cart page', () => `/s/${store.subdomain}/cart`],
  ] as const) {
    it(`${page}: 200 runs the catalog reads; 304 runs the ETag's one statement and nothing else`, async () => {
      const full = await counted(path());
      expect(full.response.status).toBe(200);
      const etag = full.response.headers.get('etag');
      expect(etag).toMatch(/^".+"$/);
      // The 200 reads the version and then the page's data: more than one statement.
      expect(full.statements.length, full.statements.join('\n')).toBeGreaterThan(1);

      const again = await counted(path(), { 'if-none-match': etag! });
      expect(again.response.status).toBe(304);
      expect(again.response.headers.get('etag')).toBe(etag);
      expect(again.statements, again.statements.join('\n')).toHaveLength(1);
      expect(again.statements[0]).toContain('from store s');
    });
  }

  it('a stale ETag gets the page (200), not a 304', async () => {
    const stale = await counted(`/s/${store.subdomain}`, { 'if-none-match': '"stale.etag.store"' });
    expect(stale.response.status).toBe(200);
    expect(stale.statements.length).toBeGreaterThan(1);
  });
});
