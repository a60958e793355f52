/**
 * @svc/sdk against the built server over HTTP, as a merchant's code and a theme use it:
 * every merchant operation, the theme flow cart -> checkout -> payment -> delivery, the
 * customer sign-in, auto-pagination, typed errors, and the automatic Idempotency-Key.
 */
import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import {
  constructEvent,
  createCustomerClient,
  createMerchantClient,
  createLicenseClient,
  createThemeClient,
  isSvcError,
  SvcConflictError,
  SvcApiError,
  SvcAuthenticationError,
  SvcConnectionError,
  SvcError,
  SvcInvalidRequestError,
  SvcNotFoundError,
  SvcPermissionError,
  verifySignature,
  type MerchantClient,
} from '@svc/sdk';
import { API_KEY_SCOPES } from '@svc/schemas';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct, importKeys } from './support/catalog.js';
import { insertOrders } from './support/orders.js';
import { buy, pay, TEST_GATEWAY_SECRET } from './support/payments.js';
import { previewToken } from './support/preview.js';
import { createKeyFor, createStoreFor, dashboard, registerSeller, type Seller } from './support/seller.js';
import { startServer } from './support/server.js';
import { startSmtpListener } from './support/smtp.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

const ALL_SCOPES = [...API_KEY_SCOPES];

let server: Awaited<ReturnType<typeof startServer>>;
let smtp: Awaited<ReturnType<typeof startSmtpListener>>;
let db: pg.Client;
let seller: Seller;
let store: { id: string; subdomain: string };
let merchantKey = '';
let merchant: MerchantClient;

beforeAll(async () => {
  smtp = await startSmtpListener();
  server = await startServer({ TEST_GATEWAY_SECRET, SMTP_URL: smtp.url, WEBHOOK_POLL_MS: '100' });
  db = new pg.Client({ connectionString: server.db.url });
  await db.connect();
  seller = await registerSeller(server.url);
  store = await createStoreFor(seller);
  const settings = await dashboard(seller, 'PATCH', `/api/dashboard/stores/${store.id}`, {
    settings: { paymentMethods: ['test', 'manual'] },
  });
  expect(settings.status, await settings.clone().text()).toBe(200);
  const { key } = await createKeyFor(seller, { scopes: ALL_SCOPES, storeIds: [store.id] });
  merchantKey = key;
  merchant = createMerchantClient({ baseUrl: server.url, apiKey: key });
});
afterAll(async () => {
  await db?.end();
  await server?.stop();
  await smtp?.stop();
});

/** A store of its own, with orders written straight to the database. */
async function storeWithOrders(count: number) {
  const own = await createStoreFor(seller);
  const { key } = await createKeyFor(seller, { scopes: ALL_SCOPES, storeIds: [own.id] });
  const base = Date.now() - count * 1000;
  const orders = await insertOrders(
    server.db.url,
    own.id,
    Array.from({ length: count }, (_, i) => ({
      status: i % 3 === 0 ? 'completed' : 'pending',
      createdAt: new Date(base + i * 1000),
    })),
  );
  return { store: own, client: createMerchantClient({ baseUrl: server.url, apiKey: key }), orders };
}

describe('merchant client: orders', () => {
  it('lists, reads and updates orders with the types the router declares', async () => {
    const { store: own, client, orders } = await storeWithOrders(3);
    const page = await client.orders.list({ storeId: own.id, limit: 2 });
    expect(page.orders).toHaveLength(2);
    expect(page.hasMore).toBe(true);
    expect(page.nextCursor).toEqual(expect.any(String));
    const rest = await client.orders.list({ storeId: own.id, limit: 2, cursor: page.nextCursor! });
    expect([...page.orders, ...rest.orders].map((o) => o.id).sort()).toEqual(orders.map((o) => o.id).sort());

    const detail = await client.orders.get({ storeId: own.id, orderId: orders[0]!.id });
    expect(detail).toMatchObject({ id: orders[0]!.id, storeId: own.id, note: '', customFieldResponses: [] });
    // Buyer IPs and user agents never leave the service.
    expect(JSON.stringify(detail)).not.toContain('198.51.100.7');
    expect(JSON.stringify(detail)).not.toContain('TestAgent');

    const updated = await client.orders.update({ storeId: own.id, orderId: orders[0]!.id, note: 'packed by the SDK' });
    expect(updated.note).toBe('packed by the SDK');
    expect((await client.orders.get({ storeId: own.id, orderId: orders[0]!.id })).note).toBe('packed by the SDK');
  });

  it('walks every page: 250 orders, each once, newest first, filters kept', async () => {
    const { store: own, client, orders } = await storeWithOrders(250);
    const requests: string[] = [];
    const counting = createMerchantClient({
      baseUrl: server.url,
      apiKey: (await createKeyFor(seller, { scopes: ALL_SCOPES, storeIds: [own.id] })).key,
      fetch: (url, init) => {
        requests.push(url);
        return fetch(url, init);
      },
    });
    const seen: string[] = [];
    for await (const order of counting.orders.iterate({ storeId: own.id, limit: 100 })) seen.push(order.id);
    expect(seen).toHaveLength(250);
    expect(new Set(seen).size).toBe(250);
    expect(seen).toEqual([...orders].reverse().map((o) => o.id));
    expect(requests).toHaveLength(3);

    const completed: string[] = [];
    for await (const order of client.orders.iterate({ storeId: own.id, status: 'completed', limit: 30 })) {
      expect(order.status).toBe('completed');
      completed.push(order.id);
    }
    expect(completed).toHaveLength(84);

    // Breaking out early fetches nothing more.
    requests.length = 0;
    for await (const order of counting.orders.iterate({ storeId: own.id, limit: 10 })) if (order) break;
    expect(requests).toHaveLength(1);
  });
});

describe('merchant client: typed errors', () => {
  it('401 for an unknown key, 403 for another store or a missing scope, 404 for an unknown order, 400 with issues', async () => {
    const unknown = createMerchantClient({ baseUrl: server.url, apiKey: `sk_${'A'.repeat(40)}` });
    const e401 = await unknown.orders.list({ storeId: store.id }).catch((e: unknown) => e);
    expect(e401).toBeInstanceOf(SvcAuthenticationError);
    expect(e401).toBeInstanceOf(SvcApiError);
    expect(e401).toBeInstanceOf(SvcError);
    expect(isSvcError(e401)).toBe(true);
    expect(e401).toMatchObject({
      status: 401,
      code: 'unauthorized',
      type: 'authentication',
      procedure: 'orders.list',
      requestId: expect.any(String),
    });

    const other = await createStoreFor(seller);
    const e403 = await merchant.orders.list({ storeId: other.id }).catch((e: unknown) => e);
    expect(e403).toBeInstanceOf(SvcPermissionError);
    expect(e403).toMatchObject({ status: 403, type: 'permission' });

    const readOnly = createMerchantClient({
      baseUrl: server.url,
      apiKey: (await createKeyFor(seller, { scopes: ['order:read'], storeIds: [store.id] })).key,
    });
    const scope = await readOnly.webhooks.list({ storeId: store.id }).catch((e: unknown) => e);
    expect(scope).toBeInstanceOf(SvcPermissionError);
    expect(scope).toMatchObject({ status: 403, code: 'scope_missing' });

    const e404 = await merchant.orders.get({ storeId: store.id, orderId: 'no-such-order' }).catch((e: unknown) => e);
    expect(e404).toBeInstanceOf(SvcNotFoundError);
    expect(e404).toMatchObject({ status: 404, code: 'not_found', type: 'not_found' });

    const e400 = await merchant.orders.list({ storeId: store.id, limit: 500 }).catch((e: unknown) => e);
    expect(e400).toBeInstanceOf(SvcInvalidRequestError);
    expect(e400).toMatchObject({ status: 400, code: 'validation_failed' });
    expect((e400 as SvcInvalidRequestError).issues.map((i) => i.path)).toContain('limit');
  });

  it('a 4xx is not retried; a refused connection is retried, then answered as SvcConnectionError', async () => {
    const calls: string[] = [];
    const client = createMerchantClient({
      baseUrl: server.url,
      apiKey: `sk_${'B'.repeat(40)}`,
      fetch: (url, init) => {
        calls.push(url);
        return fetch(url, init);
      },
    });
    await expect(client.orders.list({ storeId: store.id })).rejects.toBeInstanceOf(SvcAuthenticationError);
    expect(calls).toHaveLength(1);

    const closed = createMerchantClient({
      baseUrl: 'http://127.0.0.1:9',
      apiKey: `sk_${'C'.repeat(40)}`,
      maxRetries: 1,
    });
    const started = Date.now();
    const error = await closed.orders.list({ storeId: store.id }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SvcConnectionError);
    expect(error).toMatchObject({ code: 'connection_failed', type: 'connection' });
    expect((error as SvcConnectionError).status).toBeUndefined();
    expect(Date.now() - started).toBeGreaterThanOrEqual(300); // one backoff wait
  });

  it('refuses a malformed key before any request', () => {
    expect(() => createMerchantClient({ baseUrl: server.url, apiKey: ' sk_abc ' })).toThrow(TypeError);
    expect(() => createMerchantClient({ baseUrl: 'not a url', apiKey: `sk_${'D'.repeat(40)}` })).toThrow(SvcError);
    expect(() => createMerchantClient({ baseUrl: server.url, apiKey: `sk_prod_${'D'.repeat(40)}` })).toThrow(TypeError);
  });

  it("exposes the key's mode: test for an sk_test_ key, live for sk_live_ and for keys issued before modes", () => {
    const client = (apiKey: string) => createMerchantClient({ baseUrl: server.url, apiKey });
    expect(client(`sk_test_${'E'.repeat(40)}`).mode).toBe('test');
    expect(client(`sk_live_${'E'.repeat(40)}`).mode).toBe('live');
    expect(client(`sk_${'E'.repeat(40)}`).mode).toBe('live');
  });
});

describe('merchant client: webhooks', () => {
  let receiver: WebhookReceiver;
  const secrets = new Map<string, string>();
  beforeAll(async () => {
    receiver = await startWebhookReceiver({ secretFor: (path) => secrets.get(path) });
  });
  afterAll(async () => {
    await receiver?.close();
  });

  it('every endpoint operation: create, list, get, update, test, deliveries, retry, replay, rotate, delete', async () => {
    const url = `${receiver.url}/sdk-${randomBytes(4).toString('hex')}`;
    const created = await merchant.webhooks.create({
      storeId: store.id,
      name: 'SDK hook',
      url,
      events: ['order.paid'],
    });
    expect(created.secret).toMatch(/^whsec_/);
    secrets.set(new URL(url).pathname, created.secret);

    expect((await merchant.webhooks.list({ storeId: store.id })).webhooks.map((w) => w.id)).toContain(created.id);
    const fetched = await merchant.webhooks.get({ storeId: store.id, webhookId: created.id });
    expect(fetched).toMatchObject({ id: created.id, url, enabled: true });
    expect(fetched).not.toHaveProperty('secret');

    const updated = await merchant.webhooks.update({
      storeId: store.id,
      webhookId: created.id,
      name: 'Renamed',
      events: ['order.paid', 'order.completed'],
    });
    expect(updated).toMatchObject({ name: 'Renamed', events: ['order.paid', 'order.completed'] });

    const { delivery } = await merchant.webhooks.test({ storeId: store.id, webhookId: created.id });
    expect(delivery).toMatchObject({ event: 'webhook.test', webhookId: created.id });
    const path = new URL(url).pathname;
    const [hit] = await receiver.waitFor(1, { where: (h) => h.path === path });
    // The SDK verifies what the service signed.
    const verified = await verifySignature(hit!.rawBody, hit!.headers, created.secret);
    expect(verified.scheme).toMatch(/^(service|standard)$/);
    const event = await constructEvent(hit!.rawBody, hit!.headers, created.secret);
    expect(event.event).toBe('webhook.test');

    const log = await merchant.webhooks.deliveries({ storeId: store.id, webhookId: created.id });
    expect(log.deliveries.map((d) => d.id)).toContain(delivery.id);
    const walked = [];
    for await (const d of merchant.webhooks.iterateDeliveries({ storeId: store.id, webhookId: created.id, limit: 1 }))
      walked.push(d.id);
    expect(walked).toEqual(log.deliveries.map((d) => d.id));

    const retried = await merchant.webhooks.retry({
      storeId: store.id,
      webhookId: created.id,
      deliveryId: delivery.id,
    });
    expect(retried).toBeDefined();
    await receiver.waitFor(2, { where: (h) => h.path === path });

    const replayed = await merchant.webhooks.replay({
      storeId: store.id,
      webhookId: created.id,
      from: new Date(Date.now() - 3600_000).toISOString(),
      to: new Date(Date.now() + 60_000).toISOString(),
    });
    expect(replayed.queued).toEqual(expect.any(Number));

    const rotated = await merchant.webhooks.rotate({ storeId: store.id, webhookId: created.id });
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(created.secret);

    await expect(merchant.webhooks.delete({ storeId: store.id, webhookId: created.id })).resolves.toBeUndefined();
    await expect(merchant.webhooks.get({ storeId: store.id, webhookId: created.id })).rejects.toBeInstanceOf(
      SvcNotFoundError,
    );
  });
});

describe('theme client', () => {
  it('cart -> checkout -> payment -> delivery, for a key product', async () => {
    const product = await createProduct(seller, store.id, {
      name: 'SDK Key',
      price: 12,
      deliveryMethods: ['licenseKeys'],
    });
    await importKeys(seller, store.id, product.id, [
      `SDK-${randomBytes(4).toString('hex')}`,
      `SDK-${randomBytes(4).toString('hex')}`,
    ]);
    const theme = createThemeClient({ baseUrl: server.url, storeId: store.id, subdomain: store.subdomain });

    const front = await theme.storefront();
    expect(front.store.id).toBe(store.id);
    expect((await theme.products()).map((p) => p.id)).toContain(product.id);

    const cart = await theme.cart.get([
      { productId: product.id, quantity: 1 },
      { productId: 'gone', quantity: 1 },
      { productId: product.id, quantity: 1 },
    ]);
    expect(cart.lines).toEqual([
      expect.objectContaining({ productId: product.id, quantity: 2, unitPrice: 12, lineTotal: 24 }),
    ]);
    expect(cart.removed).toEqual([{ productId: 'gone', reason: 'unknown_product' }]);

    const coupon = await theme.coupons.validate({ code: 'NOPE', cart: cart.lines });
    expect(coupon.valid).toBe(false);

    const email = `sdk-${randomBytes(4).toString('hex')}@example.test`;
    const { url, orderId } = await theme.checkout({ cart: cart.lines, email });
    const token = new URL(url).searchParams.get('token')!;
    expect(token).toBeTruthy();

    const started = await theme.startPayment({ orderId, token, paymentMethod: 'test' });
    expect(started).toMatchObject({ orderId, paymentMethod: 'test', price: 24 });

    // Unpaid: the delivery is a typed 409.
    await expect(theme.orders.delivery({ orderId, token })).rejects.toMatchObject({ status: 409, type: 'conflict' });
    expect((await pay(server.url, { orderId, amount: 24 })).status).toBe(200);

    const delivery = await theme.orders.delivery({ orderId, token });
    expect(delivery.status).toBe('completed');
    expect(delivery.licenseKeys).toHaveLength(2);
    const keys = await theme.orders.keys({ orderId, token });
    expect(keys.keys.map((k) => k.key).sort()).toEqual(delivery.licenseKeys!.map((k) => k.key).sort());

    // Another buyer's token is a typed 403.
    await expect(theme.orders.delivery({ orderId, token: 'x'.repeat(43) })).rejects.toBeInstanceOf(SvcPermissionError);
  });

  it("shows the store's test products to a client made with mode test and the store's preview token, and only to it", async () => {
    const testProduct = await createProduct(seller, store.id, { name: 'SDK Test Teapot', price: 5 }, 'test');
    const live = createThemeClient({ baseUrl: server.url, subdomain: store.subdomain });
    const test = createThemeClient({
      baseUrl: server.url,
      subdomain: store.subdomain,
      mode: 'test',
      previewToken: await previewToken(seller, store.id),
    });
    expect([live.mode, test.mode]).toEqual(['live', 'test']);
    // Without the token, test mode is the seller's: the live store, and a test product is unknown.
    const stranger = createThemeClient({ baseUrl: server.url, subdomain: store.subdomain, mode: 'test' });
    expect((await stranger.products()).map((p) => p.id)).not.toContain(testProduct.id);
    expect((await stranger.cart.get([{ productId: testProduct.id, quantity: 1 }])).removed).toEqual([
      { productId: testProduct.id, reason: 'unknown_product' },
    ]);
    // A token that no longer opens it is a typed 401.
    const expired = createThemeClient({
      baseUrl: server.url,
      subdomain: store.subdomain,
      mode: 'test',
      previewToken: `svc_preview_${store.id}.1000000000.${'0'.repeat(64)}`,
    });
    await expect(expired.products()).rejects.toMatchObject({ status: 401, code: 'unauthorized' });

    const testFront = await test.storefront();
    expect(testFront.products.map((p) => p.id)).toEqual([testProduct.id]);
    expect((await test.products()).map((p) => p.id)).toEqual([testProduct.id]);
    expect((await live.storefront()).products.map((p) => p.id)).not.toContain(testProduct.id);
    expect((await live.products()).map((p) => p.id)).not.toContain(testProduct.id);
    // The cart takes its products' mode, whichever client asks.
    expect((await test.cart.get([{ productId: testProduct.id, quantity: 1 }])).lines).toEqual([
      expect.objectContaining({ productId: testProduct.id, unitPrice: 5 }),
    ]);
  });

  it('embed checkout and orders/create answer through the same client', async () => {
    const product = await createProduct(seller, store.id, { name: 'SDK Manual', price: 3 });
    const theme = createThemeClient({ baseUrl: server.url, storeId: store.id });
    const embed = await theme.embedCheckout({
      cart: [{ productId: product.id, quantity: 1 }],
      email: 'embed@example.test',
    });
    expect(embed.url).toContain(`/checkout/${embed.orderId}`);
    const created = await theme.createOrder({
      cart: [{ productId: product.id, quantity: 2 }],
      email: 'create@example.test',
    });
    expect(created.order).toMatchObject({ status: 'pending', price: 6, email: 'create@example.test' });
    expect(created.checkoutToken).toEqual(expect.any(String));
    // A call needing the subdomain says so instead of sending a bad request.
    await expect(theme.storefront()).rejects.toThrow(/subdomain/);

    // Given only the subdomain, the client finds the store id itself, once.
    const lookups: string[] = [];
    const bySubdomain = createThemeClient({
      baseUrl: server.url,
      subdomain: store.subdomain,
      fetch: (url, init) => {
        lookups.push(new URL(url).pathname);
        return fetch(url, init);
      },
    });
    expect(await bySubdomain.storeId()).toBe(store.id);
    const cart = await bySubdomain.cart.get([{ productId: product.id, quantity: 1 }]);
    expect(cart.storeId).toBe(store.id);
    expect(lookups.filter((p) => p === '/trpc/stores.lookup')).toHaveLength(1);
  });

  it('sends an Idempotency-Key with every order-creating call, the same one on its retries', async () => {
    const product = await createProduct(seller, store.id, { name: 'SDK Retry', price: 4 });
    const seen: Array<string | null> = [];
    let failFirst = true;
    const theme = createThemeClient({
      baseUrl: server.url,
      storeId: store.id,
      fetch: async (url, init) => {
        const key = new Headers(init.headers).get('idempotency-key');
        seen.push(key);
        const response = await fetch(url, init);
        if (failFirst) {
          // The order was made, but the answer is lost on the way back.
          failFirst = false;
          throw new TypeError('socket hang up');
        }
        return response;
      },
    });
    const first = await theme.checkout({ cart: [{ productId: product.id, quantity: 1 }], email: 'retry@example.test' });
    expect(seen).toHaveLength(2);
    expect(seen[0]).toMatch(/^[0-9a-f-]{32,36}$/);
    expect(seen[1]).toBe(seen[0]);
    const count = await db.query(
      `select count(*)::int as n from "order" where store_id = $1 and customer_email = 'retry@example.test'`,
      [store.id],
    );
    expect(count.rows[0].n).toBe(1);

    // Each call has its own key; a caller's own key is sent as given.
    const second = await theme.checkout(
      { cart: [{ productId: product.id, quantity: 1 }], email: 'retry@example.test' },
      { idempotencyKey: 'my-key-1' },
    );
    expect(second.orderId).not.toBe(first.orderId);
    expect(seen.at(-1)).toBe('my-key-1');
    const again = await theme.checkout(
      { cart: [{ productId: product.id, quantity: 1 }], email: 'retry@example.test' },
      { idempotencyKey: 'my-key-1' },
    );
    expect(again.orderId).toBe(second.orderId);

    const reused = await theme
      .checkout(
        { cart: [{ productId: product.id, quantity: 2 }], email: 'retry@example.test' },
        { idempotencyKey: 'my-key-1' },
      )
      .catch((e: unknown) => e);
    expect(reused).toMatchObject({ status: 422, code: 'idempotency_key_reused', type: 'idempotency' });
  });
});

describe('customer client', () => {
  it('signs in with the e-mailed code and lists the buyer orders', async () => {
    const product = await createProduct(seller, store.id, { name: 'SDK Customer', price: 2 });
    const email = `cust-${randomBytes(4).toString('hex')}@example.test`;
    const theme = createThemeClient({ baseUrl: server.url, storeId: store.id });
    const { orderId } = await theme.checkout({ cart: [{ productId: product.id, quantity: 1 }], email });

    const me = createCustomerClient({ baseUrl: server.url, storeId: store.id });
    await expect(me.orders.list()).rejects.toBeInstanceOf(SvcAuthenticationError);
    await me.auth.requestCode({ email });
    const mail = await smtp.waitFor((m) => m.to.includes(email));
    const code = /\b(\d{6})\b/.exec(mail.text)![1]!;
    const customer = await me.auth.verify({ email, code });
    expect(customer).toMatchObject({ email, storeId: store.id });

    const profile = await me.profile();
    expect(profile).toMatchObject({ email });
    const ids = [];
    for await (const order of me.orders.iterate()) ids.push(order.id);
    expect(ids).toEqual([orderId]);
    expect((await me.orders.get({ orderId })).id).toBe(orderId);

    await me.auth.logout();
    await expect(me.orders.list()).rejects.toBeInstanceOf(SvcAuthenticationError);
  });
});

describe('CORS on /trpc, for the clients in a browser', () => {
  const preflight = (path: string, origin: string) =>
    fetch(`${server.url}/trpc/${path}`, {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, idempotency-key',
      },
    });

  it('opens the public theme procedures to every origin, without credentials', async () => {
    for (const path of [
      'checkout.checkout',
      'checkout.cart',
      'catalog.storefront',
      'fulfilment.delivery',
      'coupons.validate',
    ]) {
      const answer = await preflight(path, 'https://any-theme.example');
      expect(answer.status).toBe(204);
      expect(answer.headers.get('access-control-allow-origin')).toBe('*');
      expect(answer.headers.get('access-control-allow-credentials')).toBeNull();
      expect(answer.headers.get('access-control-allow-headers')).toContain('idempotency-key');
    }
    const real = await fetch(
      `${server.url}/trpc/catalog.storefront?input=${encodeURIComponent(JSON.stringify({ subdomain: store.subdomain }))}`,
      {
        headers: { origin: 'https://any-theme.example' },
      },
    );
    expect(real.status).toBe(200);
    expect(real.headers.get('access-control-allow-origin')).toBe('*');
    expect(real.headers.get('access-control-expose-headers')).toContain('Retry-After');
  });

  it('allows the customer procedures only from the store origins, with credentials', async () => {
    const origin = `https://shop-${randomBytes(4).toString('hex')}.example`;
    const patched = await dashboard(seller, 'PATCH', `/api/dashboard/stores/${store.id}`, { allowedOrigins: [origin] });
    expect(patched.status).toBe(200);
    const allowed = await preflight('customer.orders', origin);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(origin);
    expect(allowed.headers.get('access-control-allow-credentials')).toBe('true');
    const stranger = await preflight('customer.orders', 'https://stranger.example');
    expect(stranger.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('gives merchant, dashboard and sign-in procedures, and mixed batches, no CORS at all', async () => {
    for (const path of ['orders.list', 'webhooks.create', 'stores.list', 'auth.login', 'checkout.cart,orders.list']) {
      const answer = await preflight(path, 'https://any-theme.example');
      expect(answer.headers.get('access-control-allow-origin'), path).toBeNull();
    }
  });
});

describe('the license client and the merchant license resources', () => {
  it('activates, validates and deactivates with typed results and errors; the merchant lists, disables and enables', async () => {
    const product = await createProduct(seller, store.id, {
      name: 'Licensed app',
      price: 5,
      deliveryMethods: ['licenseKeys'],
      licenseActivationLimit: 1,
    } as never);
    const key = `SDK-${randomBytes(8).toString('hex')}`;
    await importKeys(seller, store.id, product.id, [key]);
    await buy(server.url, { storeId: store.id, productId: product.id, email: 'licensee@example.test' });

    const licenses = createLicenseClient({ baseUrl: server.url, productId: product.id });
    const { instance, license } = await licenses.activate(key, 'workstation');
    expect(license).toMatchObject({ status: 'active', activationLimit: 1, activationUsage: 1 });
    const full = await licenses.activate(key, 'laptop').catch((e: unknown) => e);
    expect(full).toBeInstanceOf(SvcConflictError);
    expect((full as SvcConflictError).code).toBe('activation_limit_reached');
    expect(await licenses.validate(key, instance.id)).toMatchObject({
      valid: true,
      reason: null,
      instance: { id: instance.id },
    });
    const missing = await licenses.validate('NOT-THE-KEY').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(SvcNotFoundError);

    const listed = await merchant.licenses.list({ storeId: store.id, productId: product.id });
    expect(listed.licenses.map((l) => l.id)).toEqual([license.id]);
    const all = [];
    for await (const item of merchant.licenses.iterate({ storeId: store.id, productId: product.id })) all.push(item.id);
    expect(all).toEqual([license.id]);
    expect((await merchant.licenses.disable({ storeId: store.id, licenseId: license.id })).status).toBe('disabled');
    expect(await licenses.validate(key)).toMatchObject({ valid: false, reason: 'disabled' });
    expect((await merchant.licenses.enable({ storeId: store.id, licenseId: license.id })).status).toBe('active');
    await merchant.licenses.removeInstance({ storeId: store.id, licenseId: license.id, instanceId: instance.id });
    expect((await merchant.licenses.get({ storeId: store.id, licenseId: license.id })).instances).toEqual([]);
    const gone = await licenses.deactivate(key, instance.id).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(SvcNotFoundError);
    expect(() => createLicenseClient({ baseUrl: server.url, productId: '' })).toThrow(TypeError);
  });
});

describe('merchant client: the store and its look', () => {
  it('reads the store, changes its name, description and accent colour, and sees an uploaded logo', async () => {
    const before = await merchant.stores.get({ storeId: store.id });
    expect(before).toMatchObject({ id: store.id, subdomain: store.subdomain, logoUrl: null });
    const changed = await merchant.stores.update({
      storeId: store.id,
      name: before.name,
      description: 'Software, delivered.',
      accentColor: '#1F6FEB',
    });
    expect(changed).toMatchObject({ description: 'Software, delivered.', accentColor: '#1f6feb' });
    const bad = await merchant.stores.update({ storeId: store.id, accentColor: 'blue' }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(SvcInvalidRequestError);

    // The logo: a multipart upload, then read through the client.
    const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#1f6feb' } })
      .png()
      .toBuffer();
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'logo.png');
    const uploaded = await fetch(`${server.url}/api/merchant/v1/stores/${store.id}/logo`, {
      method: 'POST',
      headers: { authorization: `Bearer ${merchantKey}` },
      body: form,
    });
    expect(uploaded.status, await uploaded.clone().text()).toBe(200);
    const { logoUrl } = (await uploaded.json()) as { logoUrl: string };
    expect((await merchant.stores.get({ storeId: store.id })).logoUrl).toBe(logoUrl);
    expect(await merchant.stores.update({ storeId: store.id, accentColor: null })).toMatchObject({
      accentColor: null,
      logoUrl,
    });
  });
});

describe('merchant client: coupons and refunds', () => {
  it('creates, lists, reads, updates and deletes coupons, and refunds a paid order', async () => {
    const code = `SDK${randomBytes(3).toString('hex').toUpperCase()}`;
    const coupon = await merchant.coupons.create({
      storeId: store.id,
      code,
      discountType: 'percent',
      discountValue: 15,
    });
    expect(coupon).toMatchObject({ code, discountType: 'percent', discountValue: 15, active: true });
    const taken = await merchant.coupons
      .create({ storeId: store.id, code, discountType: 'percent', discountValue: 5 })
      .catch((e: unknown) => e);
    expect(taken).toBeInstanceOf(SvcConflictError);
    expect((await merchant.coupons.list({ storeId: store.id })).coupons.map((c) => c.id)).toContain(coupon.id);
    expect(await merchant.coupons.get({ storeId: store.id, couponId: coupon.id })).toEqual(coupon);
    expect(await merchant.coupons.update({ storeId: store.id, couponId: coupon.id, active: false })).toMatchObject({
      id: coupon.id,
      active: false,
    });
    await merchant.coupons.delete({ storeId: store.id, couponId: coupon.id });
    expect(
      await merchant.coupons.get({ storeId: store.id, couponId: coupon.id }).catch((e: unknown) => e),
    ).toBeInstanceOf(SvcNotFoundError);

    const product = await createProduct(seller, store.id, {
      name: 'Refunded app',
      price: 3,
      deliveryMethods: ['licenseKeys'],
    });
    await importKeys(seller, store.id, product.id, [`REFUND-${randomBytes(6).toString('hex')}`]);
    const order = await buy(server.url, { storeId: store.id, productId: product.id, email: 'refund@example.test' });
    expect(await merchant.orders.refund({ storeId: store.id, orderId: order.id })).toMatchObject({
      id: order.id,
      status: 'refunded',
    });
    expect((await merchant.orders.get({ storeId: store.id, orderId: order.id })).status).toBe('refunded');

    await importKeys(seller, store.id, product.id, [`MARKED-${randomBytes(6).toString('hex')}`]);
    const unpaid = await createThemeClient({ baseUrl: server.url, storeId: store.id }).checkout({
      cart: [{ productId: product.id, quantity: 1 }],
      email: 'transfer@example.test',
    });
    expect(await merchant.orders.markPaid({ storeId: store.id, orderId: unpaid.orderId })).toMatchObject({
      id: unpaid.orderId,
      status: 'completed',
      paid: 3,
    });
    const twice = await merchant.orders
      .markPaid({ storeId: store.id, orderId: unpaid.orderId })
      .catch((e: unknown) => e);
    expect(twice).toBeInstanceOf(SvcInvalidRequestError);
    expect((twice as SvcInvalidRequestError).code).toBe('order_not_pending');
  });
});

describe('merchant client: products and key stock', () => {
  it('creates, lists, walks, reads, updates and archives products; imports keys and lists them masked', async () => {
    const created = await merchant.products.create({
      storeId: store.id,
      name: 'SDK product',
      price: 6,
      deliveryMethods: ['licenseKeys'],
      status: 'draft',
    });
    expect(created).toMatchObject({ name: 'SDK product', price: 6, status: 'draft', stock: 0 });
    const page = await merchant.products.list({ storeId: store.id, status: 'draft', limit: 1 });
    expect(page.products[0]!.id).toBe(created.id);
    const walked = [];
    for await (const product of merchant.products.iterate({ storeId: store.id, status: 'draft' }))
      walked.push(product.id);
    expect(walked).toContain(created.id);
    expect(
      await merchant.products.update({ storeId: store.id, productId: created.id, status: 'active' }),
    ).toMatchObject({ status: 'active' });

    const values = Array.from({ length: 150 }, (_, i) => `SDK-STOCK-${created.id}-${i}`);
    expect(
      await merchant.licenseKeys.add({ storeId: store.id, productId: created.id, keys: [...values, values[0]!] }),
    ).toEqual({ added: 150, duplicates: 1 });
    expect((await merchant.products.get({ storeId: store.id, productId: created.id })).stock).toBe(150);
    const first = await merchant.licenseKeys.list({ storeId: store.id, productId: created.id, limit: 10 });
    expect(first.counts).toEqual({ available: 150, assigned: 0, disabled: 0 });
    expect(JSON.stringify(first)).not.toContain('SDK-STOCK');
    const all = [];
    for await (const key of merchant.licenseKeys.iterate({ storeId: store.id, productId: created.id }))
      all.push(key.id);
    expect(new Set(all).size).toBe(150);

    // Images: added by a multipart upload, then reordered and removed through the client.
    const uploadImage = async (width: number) => {
      const png = await sharp({ create: { width, height: 100, channels: 3, background: '#336699' } })
        .png()
        .toBuffer();
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'picture.png');
      const response = await fetch(`${server.url}/api/merchant/v1/stores/${store.id}/products/${created.id}/images`, {
        method: 'POST',
        headers: { authorization: `Bearer ${merchantKey}` },
        body: form,
      });
      expect(response.status, await response.clone().text()).toBe(201);
    };
    await uploadImage(200);
    await uploadImage(300);
    const pictured = await merchant.products.get({ storeId: store.id, productId: created.id });
    expect(pictured.images.map((i) => i.width)).toEqual([200, 300]);
    const ids = pictured.images.map((i) => i.id);
    const reordered = await merchant.productImages.reorder({
      storeId: store.id,
      productId: created.id,
      imageIds: [ids[1]!, ids[0]!],
    });
    expect(reordered.images.map((i) => i.width)).toEqual([300, 200]);
    await merchant.productImages.remove({ storeId: store.id, productId: created.id, imageId: ids[1]! });
    expect(
      (await merchant.products.get({ storeId: store.id, productId: created.id })).images.map((i) => i.width),
    ).toEqual([200]);

    await merchant.products.archive({ storeId: store.id, productId: created.id });
    expect(
      await merchant.products.get({ storeId: store.id, productId: created.id }).catch((e: unknown) => e),
    ).toBeInstanceOf(SvcNotFoundError);
  });
});
