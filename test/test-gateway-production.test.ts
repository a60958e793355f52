/**
 * Black-box, against a server started in production: the test gateway settles test orders only
 * (docs/architecture.md, Test mode). A test order is paid on the test gateway's page (no secret needed) or by a
 * notification signed with TEST_GATEWAY_SECRET; a live order is refused by both, with nothing
 * settled or recorded, and cannot even choose the test gateway at checkout. A test order takes no
 * real gateway (Stripe without a test key); `manual` (no gateway) tells the buyer to send no money.
 * Live orders with real gateways are unchanged.
 *
 * Test products are made as a seller makes them with the dashboard's Test mode on (X-Svc-Mode:
 * test); an order takes its products' mode. Only the seller's side orders them (here a preview
 * token of the store): a stranger gets the live store and nothing of a test product, so the test
 * gateway's free settlement never hands out a test product's goods.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct, importKeys } from './support/catalog.js';
import { notify, signedNotification, TEST_GATEWAY_SECRET } from './support/payments.js';
import { bearer, previewToken } from './support/preview.js';
import { createStoreFor, dashboard, registerSeller } from './support/seller.js';
import { startServer } from './support/server.js';

const PUBLIC_URL = 'https://shop.example.test';

let server: Awaited<ReturnType<typeof startServer>>;
let bare: Awaited<ReturnType<typeof startServer>>;
let db: pg.Client;
let store: { id: string; subdomain: string };
let liveProduct: { id: string };
let testProduct: { id: string; slug: string };
/** The store's preview token: the seller's side, which test orders need. */
let preview: string;

const post = (path: string, body: unknown, base = server.url, headers: Record<string, string> = {}) =>
  fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

const payOnPage = (orderId: string, token: string, base = server.url) =>
  fetch(`${base}/pay/test/${orderId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `token=${encodeURIComponent(token)}`,
    redirect: 'manual',
  });

/** A pending order of one product; `credential` (a preview token) for a test product. */
async function pendingOrder(productId: string, credential?: string, base = server.url, shopId = store.id) {
  const response = await post(
    '/api/v1/checkout',
    {
      shopId,
      cart: [{ productId, quantity: 1 }],
      email: `buyer-${randomBytes(4).toString('hex')}@example.test`,
    },
    base,
    credential ? bearer(credential) : {},
  );
  expect(response.status, await response.clone().text()).toBe(200);
  const { url, orderId } = await response.json();
  return { orderId: orderId as string, token: new URL(url).searchParams.get('token')! };
}

async function orderRow(orderId: string, client = db) {
  const { rows } = await client.query(
    'select status, livemode, payment_method, (select count(*)::int from payment_notification n where n.order_id = o.id) as notifications from "order" o where id = $1',
    [orderId],
  );
  return rows[0] as { status: string; livemode: boolean; payment_method: string; notifications: number };
}

beforeAll(async () => {
  server = await startServer({
    NODE_ENV: 'production',
    PUBLIC_URL,
    SMTP_URL: 'smtp://127.0.0.1:9',
    TEST_GATEWAY_SECRET,
  });
  db = new pg.Client({ connectionString: server.db.url });
  await db.connect();
  const seller = await registerSeller(server.url);
  store = await createStoreFor(seller, 'Prod Shop');
  const settings = await dashboard(seller, 'PATCH', `/api/dashboard/stores/${store.id}`, {
    settings: { paymentMethods: ['test', 'manual'] },
  });
  expect(settings.status, await settings.clone().text()).toBe(200);
  liveProduct = await createProduct(seller, store.id, { name: 'Live key', deliveryMethods: ['licenseKeys'] });
  await importKeys(seller, store.id, liveProduct.id, [`L-${randomBytes(4).toString('hex')}`]);
  testProduct = await createProduct(seller, store.id, { name: 'Test key', deliveryMethods: ['licenseKeys'] }, 'test');
  await importKeys(
    seller,
    store.id,
    testProduct.id,
    Array.from({ length: 5 }, () => `T-${randomBytes(4).toString('hex')}`),
    'test',
  );
  preview = await previewToken(seller, store.id);
});
afterAll(async () => {
  await db?.end();
  await Promise.all([server?.stop(), bare?.stop()]);
});

describe('a test order in production', () => {
  it('is settled on the test gateway’s page, and its key delivered', async () => {
    const { orderId, token } = await pendingOrder(testProduct.id, preview);
    expect((await orderRow(orderId)).livemode).toBe(false);
    const start = await post('/api/checkout/start', { orderId, token, paymentMethod: 'test' });
    expect(start.status, await start.clone().text()).toBe(200);
    expect((await start.json()).redirectUrl).toBe(`${PUBLIC_URL}/pay/test/${orderId}`);
    const page = await fetch(`${server.url}/pay/test/${orderId}?token=${token}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<button type="submit" class="primary">Pay');

    expect((await payOnPage(orderId, token)).status).toBe(303);
    expect((await orderRow(orderId)).status).toBe('completed');
    const delivery = await (await fetch(`${server.url}/api/orders/${orderId}/delivery?token=${token}`)).json();
    expect(delivery.licenseKeys).toHaveLength(1);
  });

  it('is settled by a notification signed with TEST_GATEWAY_SECRET', async () => {
    const { orderId, token } = await pendingOrder(testProduct.id, preview);
    expect((await post('/api/checkout/start', { orderId, token, paymentMethod: 'test' })).status).toBe(200);
    const response = await notify(server.url, signedNotification({ orderId, amount: 9.99 }));
    expect(response.status, await response.clone().text()).toBe(200);
    expect((await response.json()).outcome).not.toBe('unknown_order');
    expect((await orderRow(orderId)).status).toBe('completed');
  });

  it('is refused by a real gateway (Stripe without a test key); manual says to send no money', async () => {
    const { orderId, token } = await pendingOrder(testProduct.id, preview);
    const session = await fetch(`${server.url}/api/checkout/session`, {
      headers: { cookie: `svc_checkout=${orderId}.${token}` },
    });
    expect(session.status, await session.clone().text()).toBe(200);
    // Stripe is not configured here; the store offers test and manual.
    expect((await session.json()).paymentMethods).toEqual(['test', 'manual']);
    const stripe = await post('/api/checkout/start', { orderId, token, paymentMethod: 'stripe' });
    expect(stripe.status).toBe(400);
    expect(await orderRow(orderId)).toMatchObject({ status: 'pending', payment_method: '' });
    const manual = await post('/api/checkout/start', { orderId, token, paymentMethod: 'manual' });
    expect(manual.status, await manual.clone().text()).toBe(200);
    expect((await manual.json()).instructions).toMatch(/^This is a test order: send no money\./);
    expect(await orderRow(orderId)).toMatchObject({ status: 'pending', payment_method: 'manual' });
  });
});

describe('a stranger in production', () => {
  it('gets the live store for mode=test and cannot order a test product, so never reaches its goods', async () => {
    const page = await (await fetch(`${server.url}/s/${store.subdomain}?mode=test`)).text();
    expect(page).toContain('Live key');
    expect(page).not.toContain('Test key');
    expect(page).not.toContain('Test mode');
    expect((await fetch(`${server.url}/s/${store.subdomain}/products/${testProduct.slug}?mode=test`)).status).toBe(404);
    const catalog = await (
      await fetch(`${server.url}/api/stores/by-subdomain/${store.subdomain}/products?mode=test`)
    ).json();
    expect(catalog.products.map((p: { id: string }) => p.id)).toEqual([liveProduct.id]);
    const cart = [{ productId: testProduct.id, quantity: 1 }];
    for (const [path, body] of [
      ['/api/v1/checkout', { shopId: store.id, cart, email: 'stranger@example.test' }],
      ['/api/orders/create', { storeId: store.id, cart, email: 'stranger@example.test' }],
    ] as const) {
      const refused = await post(path, body);
      expect(refused.status, path).toBe(400);
      expect((await refused.json()).code, path).toBe('product_unavailable');
    }
    const { rows } = await db.query('select count(*)::int as n from "order" where store_id = $1 and not livemode', [
      store.id,
    ]);
    // Only the seller's own test orders (the tests above, each with the preview token).
    const before = rows[0].n as number;
    expect((await post('/api/orders/create', { storeId: store.id, cart, email: 's@example.test' })).status).toBe(400);
    const after = await db.query('select count(*)::int as n from "order" where store_id = $1 and not livemode', [
      store.id,
    ]);
    expect(after.rows[0].n).toBe(before);
  });
});

describe('a live order in production', () => {
  it('cannot choose the test gateway at checkout', async () => {
    const { orderId, token } = await pendingOrder(liveProduct.id);
    const start = await post('/api/checkout/start', { orderId, token, paymentMethod: 'test' });
    expect(start.status).toBe(400);
    expect((await start.json()).issues).toEqual([
      { path: 'paymentMethod', message: 'The test gateway settles test orders only.' },
    ]);
    expect(await orderRow(orderId)).toMatchObject({ status: 'pending', livemode: true, payment_method: '' });
  });

  it('is refused by the test gateway’s page and its signed notification, and nothing is settled or recorded', async () => {
    const { orderId, token } = await pendingOrder(liveProduct.id);
    // The buyer chose a real gateway, then someone tries the test gateway on it.
    expect((await post('/api/checkout/start', { orderId, token, paymentMethod: 'manual' })).status).toBe(200);

    const page = await fetch(`${server.url}/pay/test/${orderId}?token=${token}`);
    expect(page.status).toBe(400);
    expect(await page.text()).toContain('The test gateway settles test orders only.');
    const pay = await payOnPage(orderId, token);
    expect(pay.status).toBe(400);

    for (const type of ['payment.succeeded', 'payment.refunded'] as const) {
      const notified = await notify(server.url, signedNotification({ orderId, amount: 9.99, type }));
      expect(notified.status).toBe(400);
      expect(await notified.json()).toMatchObject({
        code: 'validation_failed',
        error: 'The test gateway settles test orders only.',
      });
    }
    expect(await orderRow(orderId)).toMatchObject({ status: 'pending', payment_method: 'manual', notifications: 0 });
  });

  it('still pays with a real gateway (manual) as before', async () => {
    const { orderId, token } = await pendingOrder(liveProduct.id);
    const start = await post('/api/checkout/start', { orderId, token, paymentMethod: 'manual' });
    expect(start.status, await start.clone().text()).toBe(200);
    const { instructions } = await start.json();
    // The manual instructions themselves, with no test-order notice before them.
    expect(instructions).toMatch(/^Pay \$9\.99 to Prod Shop, who will send you their payment details\. /);
    expect(instructions).not.toContain('test order');
  });
});

describe('production without TEST_GATEWAY_SECRET', () => {
  it('settles a test order on the pay page, and answers 404 to test notifications', async () => {
    bare = await startServer({ NODE_ENV: 'production', PUBLIC_URL, SMTP_URL: 'smtp://127.0.0.1:9' });
    const client = new pg.Client({ connectionString: bare.db.url });
    await client.connect();
    try {
      const seller = await registerSeller(bare.url);
      const shop = await createStoreFor(seller, 'Bare Shop');
      const product = await createProduct(
        seller,
        shop.id,
        { name: 'Test file', deliveryMethods: ['manualDelivery'] },
        'test',
      );
      const { orderId, token } = await pendingOrder(product.id, await previewToken(seller, shop.id), bare.url, shop.id);
      // The store offers only `manual`: a test order is offered the test gateway all the same.
      const start = await post('/api/checkout/start', { orderId, token, paymentMethod: 'test' }, bare.url);
      expect(start.status, await start.clone().text()).toBe(200);
      const notified = await notify(bare.url, signedNotification({ orderId, amount: 9.99 }));
      expect(notified.status).toBe(404);
      expect((await orderRow(orderId, client)).status).toBe('pending');
      expect((await payOnPage(orderId, token, bare.url)).status).toBe(303);
      expect((await orderRow(orderId, client)).status).not.toBe('pending');
    } finally {
      await client.end();
    }
  });
});
