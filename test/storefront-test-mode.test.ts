/**
 * Black-box, over HTTP: the hosted storefront's test mode (docs/architecture.md, Test mode). `/s/{subdomain}` shows
 * the live products; `?mode=test` shows the store's test products under a `Test mode` banner, on
 * the store, product and cart pages, with links and forms that keep the mode, to the seller's side
 * only: a preview token (the dashboard's View store link: `?preview=` once, then the svc_preview
 * cookie) or a member's session. A stranger asking for test mode gets the live store, and a test
 * product's id is unknown to them, on the pages and on the API (catalog, cart, checkout, order
 * creation), so they never reach its goods. The ETag is per mode: a test product's change never
 * changes the live page's ETag, nor the other way round. The cart of test products is priced,
 * checked out and paid with the test gateway (with the token); a cart that mixes the modes is 400
 * `mixed_modes`.
 *
 * Test products are made as a seller makes them with the dashboard's Test mode on (X-Svc-Mode: test).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct, importKeys } from './support/catalog.js';
import { TEST_GATEWAY_SECRET } from './support/payments.js';
import { bearer, previewCookie, previewToken } from './support/preview.js';
import {
  createKeyFor,
  createStoreFor,
  dashboard,
  dashboardInMode,
  registerSeller,
  type Seller,
} from './support/seller.js';
import { startServer } from './support/server.js';

const PUBLIC_URL = 'https://shop.example.test';

let server: Awaited<ReturnType<typeof startServer>>;
let seller: Seller;
let store: { id: string; subdomain: string };
let live: { id: string; slug: string };
let racer: { id: string; slug: string };
let keys: string[];
/** The store's preview token, as the dashboard's View store link carries it. */
let token: string;

const get = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${server.url}${path}`, { headers, redirect: 'manual' });
const cartUrl = (cart: unknown) =>
  `/api/v1/cart?storeId=${encodeURIComponent(store.id)}&cart=${encodeURIComponent(JSON.stringify(cart))}`;
/** A page as the seller's browser gets it once the View store link set the svc_preview cookie. */
const seen = (path: string, headers: Record<string, string> = {}) => get(path, { ...previewCookie(token), ...headers });
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
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
  token = await previewToken(seller, store.id);
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
    const response = await seen(`/s/${store.subdomain}?mode=test`);
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
    expect(response.headers.get('cache-control')).toBe('private, no-cache');
    // Anything but `test` is the live page.
    expect(await (await seen(`/s/${store.subdomain}?mode=live`)).text()).toContain('Live lamp');
  });
});

describe('who sees test mode', () => {
  const isLive = async (response: Response) => {
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain('Live lamp');
    expect(html).not.toContain('Test racer');
    expect(html).not.toContain('Test mode');
    expect(html).not.toContain('mode=test');
  };

  it('the View store link: ?preview= sets the svc_preview cookie for the store’s pages and answers 303 without it', async () => {
    const opened = await get(`/s/${store.subdomain}?mode=test&preview=${encodeURIComponent(token)}`);
    expect(opened.status).toBe(303);
    expect(opened.headers.get('location')).toBe(`/s/${store.subdomain}?mode=test`);
    const cookie = opened.headers.getSetCookie().find((value) => value.startsWith('svc_preview='))!;
    expect(cookie).toContain(`svc_preview=${token}`);
    expect(cookie).toContain(`Path=/s/${store.subdomain}`);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Lax');
    expect(Number(/Max-Age=(\d+)/.exec(cookie)![1])).toBeGreaterThan(3500);
    expect(Number(/Max-Age=(\d+)/.exec(cookie)![1])).toBeLessThanOrEqual(3600);
    const page = await (await get(`/s/${store.subdomain}?mode=test`, { cookie: cookie.split(';')[0]! })).text();
    expect(page).toContain('Test racer');
  });

  it('a member’s session sees the test products; a stranger, another store’s seller and a bad token the live store', async () => {
    expect(await (await get(`/s/${store.subdomain}?mode=test`, { cookie: seller.cookie })).text()).toContain(
      'Test racer',
    );
    await isLive(await get(`/s/${store.subdomain}?mode=test`));
    const other = await registerSeller(server.url);
    await createStoreFor(other, 'Elsewhere');
    await isLive(await get(`/s/${store.subdomain}?mode=test`, { cookie: other.cookie }));
    const otherToken = await previewToken(other, (await createStoreFor(other, 'Elsewhere 2')).id);
    const forged = `${token.slice(0, -4)}${token.endsWith('0000') ? '1111' : '0000'}`;
    for (const bad of [otherToken, forged, 'svc_preview_nothing'])
      await isLive(await get(`/s/${store.subdomain}?mode=test`, previewCookie(bad)));
    // A bad token in the link sets no cookie.
    const link = await get(`/s/${store.subdomain}?mode=test&preview=${encodeURIComponent(forged)}`);
    expect(link.status).toBe(303);
    expect(link.headers.getSetCookie().some((value) => value.startsWith('svc_preview='))).toBe(false);
    // The product and cart pages too: the test product is unknown, the cart page live.
    expect((await get(`/s/${store.subdomain}/products/${racer.slug}?mode=test`)).status).toBe(404);
    expect((await get(`/s/${store.subdomain}/products/${racer.id}?mode=test`)).status).toBe(404);
    const cart = await (await get(`/s/${store.subdomain}/cart?mode=test`)).text();
    expect(cart).not.toContain('data-mode');
    expect(cart).not.toContain('data-preview');
  });

  it('gives a stranger the live catalog for mode=test, and nothing of a test product anywhere on the API', async () => {
    const catalog = await (await get(`/api/stores/by-subdomain/${store.subdomain}/storefront?mode=test`)).json();
    expect(catalog.products.map((p: { name: string }) => p.name)).toEqual(['Live lamp']);
    const products = await (await get(`/api/stores/by-subdomain/${store.subdomain}/products?mode=test`)).json();
    expect(products.products.map((p: { name: string }) => p.name)).toEqual(['Live lamp']);

    const cart = [{ productId: racer.id, quantity: 1 }];
    const priced = await (await get(cartUrl(cart))).json();
    expect(priced).toMatchObject({ lines: [], removed: [{ productId: racer.id, reason: 'unknown_product' }] });
    const email = 'stranger@example.test';
    for (const [path, body] of [
      ['/api/v1/checkout', { shopId: store.id, cart, email }],
      ['/api/embed/checkout', { shopId: store.id, cart, email }],
      ['/api/orders/create', { storeId: store.id, cart, email }],
    ] as const) {
      const refused = await post(path, body);
      expect(refused.status, path).toBe(400);
      expect((await refused.json()).code, path).toBe('product_unavailable');
    }
    // A mixed cart is the live part alone for a stranger: no test product, no mixed_modes.
    const mixed = await (await get(cartUrl([...cart, { productId: live.id, quantity: 1 }]))).json();
    expect(mixed.lines.map((l: { productId: string }) => l.productId)).toEqual([live.id]);
    // A test coupon meets a cart of test products only: the stranger's cart has none, so it is live.
    const created = await dashboardInMode(seller, 'test', 'POST', `/api/dashboard/stores/${store.id}/coupons`, {
      code: 'TESTHALF',
      discountType: 'percent',
      discountValue: 50,
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const check = { storeId: store.id, code: 'TESTHALF', cart };
    expect(await (await post('/api/coupons/validate', check)).json()).toMatchObject({ valid: false });
    expect(await (await post('/api/coupons/validate', check, bearer(token))).json()).toMatchObject({
      valid: true,
      discount: 1.5,
    });
  });

  it('answers 401 to a credential that does not open the store’s test mode, and takes a test key of the store', async () => {
    const other = await registerSeller(server.url);
    const otherStore = await createStoreFor(other, 'Key Shop');
    const otherToken = await previewToken(other, otherStore.id);
    const liveKey = (await createKeyFor(seller, { scopes: ['order:read'], storeIds: [store.id] })).key;
    const testKey = (await createKeyFor(seller, { scopes: ['order:read'], storeIds: [store.id], mode: 'test' })).key;
    const otherTestKey = (
      await createKeyFor(other, { scopes: ['order:read'], storeIds: [otherStore.id], mode: 'test' })
    ).key;
    const expired = `svc_preview_${store.id}.1000000000.${'0'.repeat(64)}`;
    const catalog = `/api/stores/by-subdomain/${store.subdomain}/storefront?mode=test`;
    for (const [credential, message] of [
      [otherToken, 'This preview token is for another store.'],
      [`${token.slice(0, -1)}${token.endsWith('0') ? '1' : '0'}`, 'This preview token is not valid.'],
      [expired, 'This preview token is not valid.'],
      [liveKey, 'Test products need a test key (sk_test_…) or a preview token, not a live key.'],
      [otherTestKey, 'This test key may not reach this store.'],
      ['sk_test_nothing', 'Malformed API key.'],
    ] as const) {
      const refused = await get(catalog, bearer(credential));
      expect(refused.status, credential).toBe(401);
      expect(await refused.json(), credential).toEqual({ error: message, code: 'unauthorized' });
      const order = await post(
        '/api/orders/create',
        { storeId: store.id, cart: [{ productId: racer.id, quantity: 1 }], email: 'x@example.test' },
        bearer(credential),
      );
      expect(order.status, credential).toBe(401);
    }
    const byKey = await (await get(catalog, bearer(testKey))).json();
    expect(byKey.products.map((p: { name: string }) => p.name)).toEqual(['Test racer']);
    const byToken = await (await get(catalog, bearer(token))).json();
    expect(byToken.products.map((p: { name: string }) => p.name)).toEqual(['Test racer']);
  });
});

describe('the product and cart pages', () => {
  it('show a test product at ?mode=test only, and a live product without it only', async () => {
    const page = await seen(`/s/${store.subdomain}/products/${racer.slug}?mode=test`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('aria-label="Test mode"');
    expect(html).toContain('<h1>Test racer</h1>');
    expect(html).toContain(`"url":"${PUBLIC_URL}/s/${store.subdomain}/products/${racer.slug}?mode=test"`);
    expect(html).toContain(`<a href="/s/${store.subdomain}?mode=test">All products of Mode Shop</a>`);
    expect(html).toContain('<input type="hidden" name="mode" value="test">');

    const byId = await seen(`/s/${store.subdomain}/products/${racer.id}?mode=test`);
    expect(byId.status).toBe(200);
    expect((await seen(`/s/${store.subdomain}/products/${racer.slug}`)).status).toBe(404);
    expect((await seen(`/s/${store.subdomain}/products/${live.slug}?mode=test`)).status).toBe(404);
    expect((await seen(`/s/${store.subdomain}/products/${live.slug}`)).status).toBe(200);
  });

  it('gives the cart page the mode and the preview token, so its module keeps a cart of test products apart', async () => {
    const page = await seen(`/s/${store.subdomain}/cart?mode=test&add=${racer.id}&quantity=1`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('aria-label="Test mode"');
    expect(html).toContain(`data-store-id="${store.id}"`);
    expect(html).toContain(`data-mode="test" data-preview="${token}"`);
    // A member's session gets a token made for the hour, the same on every page of that hour.
    const bySession = await (await get(`/s/${store.subdomain}/cart?mode=test`, { cookie: seller.cookie })).text();
    const made = /data-preview="(svc_preview_[^"]+)"/.exec(bySession)![1]!;
    expect(await (await get(`/s/${store.subdomain}/cart?mode=test`, { cookie: seller.cookie })).text()).toContain(
      `data-preview="${made}"`,
    );
    expect((await get(`/api/stores/by-subdomain/${store.subdomain}/products?mode=test`, bearer(made))).status).toBe(
      200,
    );
    const livePage = await (await seen(`/s/${store.subdomain}/cart`)).text();
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
    const otherToken = await previewToken(seller, other.id);
    const seenIn = (path: string, headers: Record<string, string> = {}) =>
      get(path, { ...previewCookie(otherToken), ...headers });
    const pages = [`/s/${other.subdomain}`, `/s/${other.subdomain}/cart`];
    const tags = async () => {
      const out: Record<string, string> = {};
      for (const path of pages) {
        for (const mode of ['', '?mode=test']) {
          const response = await seenIn(`${path}${mode}`);
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
      expect((await seenIn(path, { 'if-none-match': before[path]! })).status, path).toBe(304);
      expect((await seenIn(`${path}?mode=test`, { 'if-none-match': before[`${path}?mode=test`]! })).status).toBe(200);
    }
    expect(await (await seenIn(`/s/${other.subdomain}?mode=test`)).text()).toContain('Test kite 2');
    const afterTest = await tags();

    // A live product changes: every live ETag changes, no test one does.
    const renamed = await dashboard(seller, 'PATCH', `/api/dashboard/stores/${other.id}/products/${lamp.id}`, {
      name: 'Floor lamp',
    });
    expect(renamed.status).toBe(200);
    for (const path of pages) {
      expect((await seenIn(`${path}?mode=test`, { 'if-none-match': afterTest[`${path}?mode=test`]! })).status).toBe(
        304,
      );
      expect((await seenIn(path, { 'if-none-match': afterTest[path]! })).status, path).toBe(200);
    }
    expect(await (await seenIn(`/s/${other.subdomain}`)).text()).toContain('Floor lamp');
    // A stranger's test-mode ETag is the live one: what they hold is the live page.
    const stranger = await get(`/s/${other.subdomain}?mode=test`, {
      'if-none-match': afterTest[`/s/${other.subdomain}`]!,
    });
    expect(stranger.status).toBe(200);
  });
});

describe('the cart of test products', () => {
  it('is priced, checked out (with the preview token) and paid with the test gateway; its keys are delivered', async () => {
    const priced = await get(cartUrl([{ productId: racer.id, quantity: 1 }]), bearer(token));
    expect(priced.status).toBe(200);
    const cart = await priced.json();
    expect(cart.lines).toMatchObject([{ productId: racer.id, name: 'Test racer', quantity: 1, stock: 2 }]);

    const checkout = await post(
      '/api/v1/checkout',
      {
        shopId: store.id,
        cart: [{ productId: racer.id, quantity: 1 }],
        email: `buyer-${randomBytes(4).toString('hex')}@example.test`,
      },
      bearer(token),
    );
    expect(checkout.status, await checkout.clone().text()).toBe(200);
    const { url, orderId } = await checkout.json();
    // Once the order exists, its checkout token opens it as for any order: no preview token needed.
    const checkoutToken = new URL(url).searchParams.get('token')!;
    // The store offers only manual payments; a test order is paid with the test gateway all the same.
    const start = await post('/api/checkout/start', { orderId, token: checkoutToken, paymentMethod: 'test' });
    expect(start.status, await start.clone().text()).toBe(200);
    expect((await start.json()).redirectUrl).toBe(`${PUBLIC_URL}/pay/test/${orderId}`);
    const paid = await fetch(`${server.url}/pay/test/${orderId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${encodeURIComponent(checkoutToken)}`,
      redirect: 'manual',
    });
    expect(paid.status).toBe(303);
    const delivery = await (await get(`/api/orders/${orderId}/delivery?token=${checkoutToken}`)).json();
    expect(delivery.status).toBe('completed');
    expect(delivery.licenseKeys).toHaveLength(1);
    expect(keys).toContain(delivery.licenseKeys[0].key);
  });

  it('is 400 mixed_modes when it holds a live product too', async () => {
    const mixed = [
      { productId: racer.id, quantity: 1 },
      { productId: live.id, quantity: 1 },
    ];
    const priced = await get(cartUrl(mixed), bearer(token));
    expect(priced.status).toBe(400);
    expect((await priced.json()).code).toBe('mixed_modes');
    const checkout = await post(
      '/api/v1/checkout',
      { shopId: store.id, cart: mixed, email: 'mixed@example.test' },
      bearer(token),
    );
    expect(checkout.status).toBe(400);
    expect((await checkout.json()).code).toBe('mixed_modes');
  });
});
