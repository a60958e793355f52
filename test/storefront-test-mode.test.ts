/**
 * Black-box, over HTTP: the hosted storefront's test mode (DESIGN §9.3). `/s/{subdomain}` shows
 * the live products; `?mode=test` shows the store's test products under a `Test mode` banner, on
 * the store, product and cart pages, with links and forms that keep the mode. The ETag is per
 * mode: a test product's change never changes the live page's ETag, nor the other way round. The
 * cart of test products is priced, checked out and paid with the test gateway; a cart that mixes
 * the modes is 400 `mixed_modes`.
 *
 * Test products are made as a seller makes them with the dashboard's Test mode on (X-Svc-Mode: test).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct, importKeys } from './support/catalog.js';
import { TEST_GATEWAY_SECRET } from './support/payments.js';
import { createStoreFor, dashboard, dashboardInMode, registerSeller, type Seller } from './support/seller.js';
import { startServer } from './support/server.js';

const PUBLIC_URL = 'https://shop.example.test';

let server: Awaited<ReturnType<typeof startServer>>;
let seller: Seller;
let store: { id: string; subdomain: string };
let live: { id: string; slug: string };
let racer: { id: string; slug: string };
let keys: string[];

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${server.url}${path}`, { headers });
const post = (path: string, body: unknown) =>
  fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

beforeAll(async () => {
  server = await startServer({ PUBLIC_URL, TEST_GATEWAY_SECRET });
  seller = await registerSeller(server.url);
  store = await createStoreFor(seller, 'Mode Shop');
  live = await createProduct(seller, store.id, { name: 'Live lamp', price: 12 });
  racer = await createProduct(
    seller,
    store.id,
    { name: 'Test racer', price: 3, deliveryMethods: ['licenseKeys'] },
    'test',
  );
  keys = [`TR-${randomBytes(4).toString('hex')}`, `TR-${randomBytes(4).toString('hex')}`];
  await importKeys(seller, store.id, racer.id, keys, 'test');
});
afterAll(async () => {
  await server?.stop();
});

describe('the store page', () => {
  it('shows the live products only, without a banner', async () => {
    const response = await get(`/s/${store.subdomain}`);
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain('Live lamp');
    expect(html).not.toContain('Test racer');
    expect(html).not.toContain('Test mode');
    expect(html).not.toContain('mode=test');
  });

  it('shows the test products under a Test mode banner at ?mode=test, every link and form keeping the mode', async () => {
    const response = await get(`/s/${store.subdomain}?mode=test`);
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain('<aside class="test-banner" aria-label="Test mode"><p><strong>Test mode</strong>');
    expect(html).toContain('Test racer');
    expect(html).toContain('$3.00');
    expect(html).not.toContain('Live lamp');
    expect(html).toContain(`<a class="store-name" href="/s/${store.subdomain}?mode=test">`);
    expect(html).toContain(`<a class="cart-link" href="/s/${store.subdomain}/cart?mode=test">Cart</a>`);
    expect(html).toContain(`href="/s/${store.subdomain}/products/${racer.slug}?mode=test"`);
    // The add-to-cart form is a GET form: the mode is a field of its own.
    expect(html).toContain(
      `<input type="hidden" name="add" value="${racer.id}">\n<input type="hidden" name="mode" value="test">`,
    );
    expect(html).toContain(`<link rel="canonical" href="${PUBLIC_URL}/s/${store.subdomain}?mode=test">`);
    expect(html).toContain('<meta name="robots" content="noindex">');
    // Anything but `test` is the live page.
    expect(await (await get(`/s/${store.subdomain}?mode=live`)).text()).toContain('Live lamp');
  });
});

describe('the product and cart pages', () => {
  it('show a test product at ?mode=test only, and a live product without it only', async () => {
    const page = await get(`/s/${store.subdomain}/products/${racer.slug}?mode=test`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('aria-label="Test mode"');
    expect(html).toContain('<h1>Test racer</h1>');
    expect(html).toContain(`"url":"${PUBLIC_URL}/s/${store.subdomain}/products/${racer.slug}?mode=test"`);
    expect(html).toContain(`<a href="/s/${store.subdomain}?mode=test">All products of Mode Shop</a>`);
    expect(html).toContain('<input type="hidden" name="mode" value="test">');

    const byId = await get(`/s/${store.subdomain}/products/${racer.id}?mode=test`);
    expect(byId.status).toBe(200);
    expect((await get(`/s/${store.subdomain}/products/${racer.slug}`)).status).toBe(404);
    expect((await get(`/s/${store.subdomain}/products/${live.slug}?mode=test`)).status).toBe(404);
    expect((await get(`/s/${store.subdomain}/products/${live.slug}`)).status).toBe(200);
  });

  it('gives the cart page the mode, so its module keeps a cart of test products apart', async () => {
    const page = await get(`/s/${store.subdomain}/cart?mode=test&add=${racer.id}&quantity=1`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('aria-label="Test mode"');
    expect(html).toContain(`data-store-id="${store.id}"`);
    expect(html).toContain('data-mode="test"');
    const livePage = await (await get(`/s/${store.subdomain}/cart`)).text();
    expect(livePage).not.toContain('data-mode');
    const module = await (await get('/assets/storefront/cart.js')).text();
    expect(module).toContain(':test');
  });
});

describe('ETags per mode', () => {
  it('a test change never changes the live ETag, and a live change never the test ETag', async () => {
    const other = await createStoreFor(seller, 'Etag Modes');
    const lamp = await createProduct(seller, other.id, { name: 'Desk lamp' });
    const kite = await createProduct(seller, other.id, { name: 'Test kite' }, 'test');
    const pages = [`/s/${other.subdomain}`, `/s/${other.subdomain}/cart`];
    const tags = async () => {
      const out: Record<string, string> = {};
      for (const path of pages) {
        for (const mode of ['', '?mode=test']) {
          const response = await get(`${path}${mode}`);
          expect(response.status, `${path}${mode}`).toBe(200);
          out[`${path}${mode}`] = response.headers.get('etag')!;
        }
      }
      return out;
    };
    const before = await tags();
    for (const path of pages) expect(before[path]).not.toBe(before[`${path}?mode=test`]);

    // A test product changes: every test ETag changes, no live one does.
    const renamedKite = await dashboardInMode(
      seller,
      'test',
      'PATCH',
      `/api/dashboard/stores/${other.id}/products/${kite.id}`,
      { name: 'Test kite 2' },
    );
    expect(renamedKite.status).toBe(200);
    for (const path of pages) {
      expect((await get(path, { 'if-none-match': before[path]! })).status, path).toBe(304);
      expect((await get(`${path}?mode=test`, { 'if-none-match': before[`${path}?mode=test`]! })).status).toBe(200);
    }
    expect(await (await get(`/s/${other.subdomain}?mode=test`)).text()).toContain('Test kite 2');
    const afterTest = await tags();

    // A live product changes: every live ETag changes, no test one does.
    const renamed = await dashboard(seller, 'PATCH', `/api/dashboard/stores/${other.id}/products/${lamp.id}`, {
      name: 'Floor lamp',
    });
    expect(renamed.status).toBe(200);
    for (const path of pages) {
      expect((await get(`${path}?mode=test`, { 'if-none-match': afterTest[`${path}?mode=test`]! })).status).toBe(304);
      expect((await get(path, { 'if-none-match': afterTest[path]! })).status, path).toBe(200);
    }
    expect(await (await get(`/s/${other.subdomain}`)).text()).toContain('Floor lamp');
  });
});

describe('the cart of test products', () => {
  const cartUrl = (cart: unknown) =>
    `/api/v1/cart?storeId=${encodeURIComponent(store.id)}&cart=${encodeURIComponent(JSON.stringify(cart))}`;

  it('is priced, checked out and paid with the test gateway; its keys are delivered', async () => {
    const priced = await get(cartUrl([{ productId: racer.id, quantity: 1 }]));
    expect(priced.status).toBe(200);
    const cart = await priced.json();
    expect(cart.lines).toMatchObject([{ productId: racer.id, name: 'Test racer', quantity: 1, stock: 2 }]);

    const checkout = await post('/api/v1/checkout', {
      shopId: store.id,
      cart: [{ productId: racer.id, quantity: 1 }],
      email: `buyer-${randomBytes(4).toString('hex')}@example.test`,
    });
    expect(checkout.status, await checkout.clone().text()).toBe(200);
    const { url, orderId } = await checkout.json();
    const token = new URL(url).searchParams.get('token')!;
    // The store offers only manual payments; a test order is paid with the test gateway all the same.
    const start = await post('/api/checkout/start', { orderId, token, paymentMethod: 'test' });
    expect(start.status, await start.clone().text()).toBe(200);
    expect((await start.json()).redirectUrl).toBe(`${PUBLIC_URL}/pay/test/${orderId}`);
    const paid = await fetch(`${server.url}/pay/test/${orderId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${encodeURIComponent(token)}`,
      redirect: 'manual',
    });
    expect(paid.status).toBe(303);
    const delivery = await (await get(`/api/orders/${orderId}/delivery?token=${token}`)).json();
    expect(delivery.status).toBe('completed');
    expect(delivery.licenseKeys).toHaveLength(1);
    expect(keys).toContain(delivery.licenseKeys[0].key);
  });

  it('is 400 mixed_modes when it holds a live product too', async () => {
    const mixed = [
      { productId: racer.id, quantity: 1 },
      { productId: live.id, quantity: 1 },
    ];
    const priced = await get(cartUrl(mixed));
    expect(priced.status).toBe(400);
    expect((await priced.json()).code).toBe('mixed_modes');
    const checkout = await post('/api/v1/checkout', { shopId: store.id, cart: mixed, email: 'mixed@example.test' });
    expect(checkout.status).toBe(400);
    expect((await checkout.json()).code).toBe('mixed_modes');
  });
});
