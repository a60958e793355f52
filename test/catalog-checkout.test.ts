/**
 * Black-box: what a theme builder and a buyer touch before payment: the public catalog,
 * the cart, checkout from a theme, an embed and the public order route, and the stock
 * and outbox behind them.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct, importKeys } from './support/catalog.js';
import { clientIp, createKeyFor, createStoreFor, dashboard, registerSeller, type Seller } from './support/seller.js';
import { startServer } from './support/server.js';

const PUBLIC_URL = 'https://shop-api.example.test';
let server: Awaited<ReturnType<typeof startServer>>;
let db: pg.Client;
let seller: Seller;
let store: { id: string; subdomain: string };
let keyed: { id: string };
let manual: { id: string };
let archived: { id: string };
let draft: { id: string };
let withFields: { id: string };

beforeAll(async () => {
  server = await startServer({ PUBLIC_URL });
  db = new pg.Client({ connectionString: server.db.url });
  await db.connect();
  seller = await registerSeller(server.url);
  store = await createStoreFor(seller);
  keyed = await createProduct(seller, store.id, { name: 'Game Key', price: 9.99, deliveryMethods: ['licenseKeys'] });
  await importKeys(seller, store.id, keyed.id, ['AAAA-1111', 'BBBB-2222', 'CCCC-3333']);
  manual = await createProduct(seller, store.id, { name: 'Coaching', price: 25, minQuantity: 2, maxQuantity: 5 });
  archived = await createProduct(seller, store.id, { name: 'Old', status: 'archived' });
  draft = await createProduct(seller, store.id, { name: 'Soon', status: 'draft' });
  withFields = await createProduct(seller, store.id, {
    name: 'Account Boost',
    price: 5,
    customFields: [
      { name: 'Username', required: true },
      { name: 'Region', type: 'text' },
    ],
  });
});

afterAll(async () => {
  await db?.end();
  await server?.stop();
});

function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp(), ...headers },
    body: JSON.stringify(body),
  });
}

const cartUrl = (cart: unknown, storeId = store.id) =>
  `${server.url}/api/v1/cart?storeId=${encodeURIComponent(storeId)}&cart=${encodeURIComponent(typeof cart === 'string' ? cart : JSON.stringify(cart))}`;

describe('public catalog', () => {
  it('shows the active products of the store, with stock as a number or null, and no instructions', async () => {
    const response = await fetch(`${server.url}/api/stores/by-subdomain/${store.subdomain}/storefront`);
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.store).toMatchObject({ id: store.id, subdomain: store.subdomain });
    const names = body.products.map((p: { name: string }) => p.name);
    expect(names).toEqual(['Game Key', 'Coaching', 'Account Boost']);
    expect(body.products[0]).toMatchObject({ id: keyed.id, price: 9.99, currency: 'USD', stock: 3 });
    expect(body.products[1].stock).toBeNull();
    expect(JSON.stringify(body)).not.toMatch(/deliveryInstructions|status/);
    const products = await (await fetch(`${server.url}/api/stores/by-subdomain/${store.subdomain}/products`)).json();
    expect(products.products).toEqual(body.products);
  });

  it('is never rate limited', async () => {
    const ip = clientIp();
    const statuses = await Promise.all(
      Array.from({ length: 70 }, () =>
        fetch(`${server.url}/api/stores/by-subdomain/${store.subdomain}/products`, {
          headers: { 'x-forwarded-for': ip },
        }).then((r) => r.status),
      ),
    );
    expect(new Set(statuses)).toEqual(new Set([200]));
  });

  it('answers an unknown store with 404', async () => {
    expect(
      (await fetch(`${server.url}/api/stores/by-subdomain/no-such-${randomBytes(3).toString('hex')}/storefront`))
        .status,
    ).toBe(404);
  });
});

describe('GET /api/v1/cart', () => {
  it.each([
    [
      'merges duplicate lines',
      [
        { productId: 'keyed', quantity: 1 },
        { productId: 'keyed', quantity: 1 },
      ],
      { lines: [{ product: 'keyed', quantity: 2 }], removed: [], adjusted: [] },
    ],
    [
      'removes unknown and unavailable products with a reason',
      [
        { productId: 'nope', quantity: 1 },
        { productId: 'archived', quantity: 1 },
        { productId: 'draft', quantity: 1 },
        { productId: 'manual', quantity: 2 },
      ],
      {
        lines: [{ product: 'manual', quantity: 2 }],
        removed: [
          { product: 'nope', reason: 'unknown_product' },
          { product: 'archived', reason: 'unavailable' },
          { product: 'draft', reason: 'unavailable' },
        ],
        adjusted: [],
      },
    ],
    [
      'clamps to the minimum and the maximum',
      [{ productId: 'manual', quantity: 1 }],
      {
        lines: [{ product: 'manual', quantity: 2 }],
        removed: [],
        adjusted: [{ product: 'manual', requested: 1, quantity: 2, reason: 'min_quantity' }],
      },
    ],
    [
      'clamps to the maximum',
      [{ productId: 'manual', quantity: 9 }],
      {
        lines: [{ product: 'manual', quantity: 5 }],
        removed: [],
        adjusted: [{ product: 'manual', requested: 9, quantity: 5, reason: 'max_quantity' }],
      },
    ],
    [
      'clamps to the key stock',
      [{ productId: 'keyed', quantity: 7 }],
      {
        lines: [{ product: 'keyed', quantity: 3 }],
        removed: [],
        adjusted: [{ product: 'keyed', requested: 7, quantity: 3, reason: 'stock' }],
      },
    ],
  ])('%s', async (_name, lines, expected) => {
    const ids: Record<string, string> = {
      keyed: keyed.id,
      manual: manual.id,
      archived: archived.id,
      draft: draft.id,
      nope: 'nope000000000000000000000',
    };
    const cart = lines.map((line) => ({ ...line, productId: ids[line.productId]! }));
    const response = await fetch(cartUrl(cart));
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(
      body.lines.map((l: { productId: string; quantity: number }) => ({
        productId: l.productId,
        quantity: l.quantity,
      })),
    ).toEqual(expected.lines.map((l) => ({ productId: ids[l.product], quantity: l.quantity })));
    expect(body.removed).toEqual(expected.removed.map((r) => ({ productId: ids[r.product], reason: r.reason })));
    expect(body.adjusted).toEqual(
      expected.adjusted.map((a) => ({
        productId: ids[a.product],
        requested: a.requested,
        quantity: a.quantity,
        reason: a.reason,
      })),
    );
  });

  it('prices lines from the database and totals them', async () => {
    const body = await (
      await fetch(
        cartUrl([
          { productId: keyed.id, quantity: 2 },
          { productId: manual.id, quantity: 3 },
        ]),
      )
    ).json();
    expect(body).toMatchObject({
      storeId: store.id,
      currency: 'USD',
      lines: [
        { productId: keyed.id, name: 'Game Key', quantity: 2, unitPrice: 9.99, lineTotal: 19.98, stock: 3 },
        { productId: manual.id, name: 'Coaching', quantity: 3, unitPrice: 25, lineTotal: 75, stock: null },
      ],
      subtotal: 94.98,
      itemCount: 5,
    });
  });

  it.each([
    ['not JSON', '{nope'],
    ['not an array', '{"productId":"x","quantity":1}'],
    ['a line without quantity', '[{"productId":"x"}]'],
    ['a line with a price', '[{"productId":"x","quantity":1,"price":0.01}]'],
    ['a zero quantity', '[{"productId":"x","quantity":0}]'],
  ])('refuses a cart that is %s with 400', async (_name, cart) => {
    const response = await fetch(cartUrl(cart));
    expect(response.status).toBe(400);
    expect((await response.json()).code).toBe('validation_failed');
  });

  it('gives the same answer through /trpc', async () => {
    const cart = JSON.stringify([
      { productId: keyed.id, quantity: 5 },
      { productId: 'zzz', quantity: 1 },
    ]);
    const rest = await (await fetch(cartUrl(cart))).json();
    const rpc = await fetch(
      `${server.url}/trpc/checkout.cart?input=${encodeURIComponent(JSON.stringify({ storeId: store.id, cart }))}`,
    );
    expect((await rpc.json()).result.data).toEqual(rest);
  });

  it('accepts the store subdomain as storeId', async () => {
    const response = await fetch(cartUrl([{ productId: manual.id, quantity: 2 }], store.subdomain));
    expect((await response.json()).storeId).toBe(store.id);
  });
});

describe('POST /api/v1/checkout', () => {
  it('creates a pending order priced by the server, and its url opens that order with its token', async () => {
    const email = `buyer-${randomBytes(4).toString('hex')}@example.test`;
    const response = await post('/api/v1/checkout', {
      shopId: store.subdomain,
      cart: [{ productId: keyed.id, quantity: 2 }],
      email,
    });
    expect(response.status).toBe(200);
    const { url, orderId } = await response.json();
    const parsed = new URL(url);
    expect(`${parsed.origin}${parsed.pathname}`).toBe(`${PUBLIC_URL}/checkout/${orderId}`);
    const token = parsed.searchParams.get('token')!;
    expect(token.length).toBeGreaterThanOrEqual(40);

    const { rows } = await db.query(
      'select status, price_minor, customer_email, checkout_token_hash from "order" where id = $1',
      [orderId],
    );
    expect(rows[0]).toMatchObject({ status: 'pending', price_minor: '1998', customer_email: email });
    expect(rows[0].checkout_token_hash).not.toContain(token);

    const enter = await post('/api/checkout/enter', { orderId, token });
    expect(enter.status).toBe(200);
    const entered = await enter.json();
    expect(entered.order).toMatchObject({
      id: orderId,
      status: 'pending',
      price: 19.98,
      currency: 'USD',
      email,
      lines: [{ productId: keyed.id, quantity: 2, unitPrice: 9.99 }],
    });
    const cookie = enter.headers.getSetCookie().find((c) => c.startsWith('svc_checkout='))!;
    expect(cookie).toMatch(/HttpOnly/);
    const session = await fetch(`${server.url}/api/checkout/session`, { headers: { cookie: cookie.split(';')[0]! } });
    expect(session.status).toBe(200);
    expect((await session.json()).order.id).toBe(orderId);

    expect(
      (await post('/api/checkout/enter', { orderId, token: token.replace(/.$/, token.endsWith('A') ? 'B' : 'A') }))
        .status,
    ).toBe(403);
    expect((await fetch(`${server.url}/api/checkout/session`)).status).toBe(401);
  });

  it.each([
    ['a line carrying a price', { cart: [{ productId: 'KEYED', quantity: 1, price: 0.01 }] }, 400, 'validation_failed'],
    [
      'a body carrying a status',
      { cart: [{ productId: 'KEYED', quantity: 1 }], status: 'paid' },
      400,
      'validation_failed',
    ],
    ['a body carrying a total', { cart: [{ productId: 'KEYED', quantity: 1 }], total: 0 }, 400, 'validation_failed'],
    ['an empty cart', { cart: [] }, 400, 'cart_empty'],
    ['more keys than in stock', { cart: [{ productId: 'KEYED', quantity: 4 }] }, 400, 'out_of_stock'],
    ['an archived product', { cart: [{ productId: 'ARCHIVED', quantity: 1 }] }, 400, 'product_unavailable'],
    ['a quantity under the minimum', { cart: [{ productId: 'MANUAL', quantity: 1 }] }, 400, 'validation_failed'],
    [
      'a missing required custom field',
      { cart: [{ productId: 'FIELDS', quantity: 1 }], customFields: { Region: 'EU' } },
      400,
      'validation_failed',
    ],
    [
      'an unknown custom field',
      { cart: [{ productId: 'FIELDS', quantity: 1 }], customFields: { Username: 'x', Admin: 'yes' } },
      400,
      'validation_failed',
    ],
  ])('refuses %s', async (_name, body, status, code) => {
    const ids: Record<string, string> = {
      KEYED: keyed.id,
      ARCHIVED: archived.id,
      MANUAL: manual.id,
      FIELDS: withFields.id,
    };
    const text = JSON.stringify({ shopId: store.id, email: 'b@example.test', ...body }).replace(
      /KEYED|ARCHIVED|MANUAL|FIELDS/g,
      (m) => ids[m]!,
    );
    const before = (await db.query('select count(*)::int as n from "order" where store_id = $1', [store.id])).rows[0].n;
    const response = await fetch(`${server.url}/api/v1/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: text,
    });
    expect(response.status).toBe(status);
    expect((await response.json()).code).toBe(code);
    const after = (await db.query('select count(*)::int as n from "order" where store_id = $1', [store.id])).rows[0].n;
    expect(after).toBe(before); // nothing half-written
  });

  it('keeps the custom field answers in the product field order', async () => {
    const response = await post('/api/v1/checkout', {
      shopId: store.id,
      cart: [{ productId: withFields.id, quantity: 1 }],
      email: 'f@example.test',
      customFields: { Region: 'EU', Username: 'neo' },
    });
    const { orderId } = await response.json();
    const { rows } = await db.query('select custom_field_responses from "order" where id = $1', [orderId]);
    expect(rows[0].custom_field_responses).toEqual([
      { name: 'Username', value: 'neo' },
      { name: 'Region', value: 'EU' },
    ]);
  });

  it('refuses a banned store with 403 store_banned', async () => {
    const other = await createStoreFor(seller);
    const product = await createProduct(seller, other.id);
    await db.query('update store set banned = true where id = $1', [other.id]);
    const response = await post('/api/v1/checkout', {
      shopId: other.id,
      cart: [{ productId: product.id, quantity: 1 }],
      email: 'b@example.test',
    });
    expect(response.status).toBe(403);
    expect((await response.json()).code).toBe('store_banned');
  });

  it('is never rate limited', async () => {
    const ip = clientIp();
    const statuses: number[] = [];
    for (let i = 0; i < 35; i++) {
      statuses.push(
        (
          await post(
            '/api/v1/checkout',
            { shopId: store.id, cart: [{ productId: manual.id, quantity: 2 }], email: 'n@example.test' },
            { 'x-forwarded-for': ip },
          )
        ).status,
      );
    }
    expect(new Set(statuses)).toEqual(new Set([200]));
  });

  it('records order.created in the outbox with the order, in the same transaction', async () => {
    const { orderId } = await (
      await post('/api/v1/checkout', {
        shopId: store.id,
        cart: [{ productId: manual.id, quantity: 2 }],
        email: 'o@example.test',
      })
    ).json();
    const { rows } = await db.query(
      `select type, payload from event where type = 'order.created' and payload->'order'->>'id' = $1`,
      [orderId],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].payload.order).toMatchObject({ id: orderId, status: 'pending', price: 50 });
    expect(JSON.stringify(rows[0].payload)).not.toMatch(/buyerIp|userAgent|checkoutToken/);
  });
});

describe('POST /api/embed/checkout', () => {
  it('answers a preflight from any origin and creates an order', async () => {
    const preflight = await fetch(`${server.url}/api/embed/checkout`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://someones-blog.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
    const response = await post(
      '/api/embed/checkout',
      { shopId: store.id, cart: [{ productId: manual.id, quantity: 2 }], email: 'e@example.test' },
      { origin: 'https://someones-blog.example' },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(await response.json()).toEqual({ url: expect.stringContaining('/checkout/'), orderId: expect.any(String) });
  });

  it('answers request 31 within 60 s with exactly the documented 429 body', async () => {
    const ip = clientIp();
    for (let i = 0; i < 30; i++) {
      const ok = await post(
        '/api/embed/checkout',
        { shopId: store.id, cart: [{ productId: manual.id, quantity: 2 }], email: 'e@example.test' },
        { 'x-forwarded-for': ip },
      );
      expect(ok.status).toBe(200);
    }
    const limited = await post(
      '/api/embed/checkout',
      { shopId: store.id, cart: [{ productId: manual.id, quantity: 2 }], email: 'e@example.test' },
      { 'x-forwarded-for': ip },
    );
    expect(limited.status).toBe(429);
    expect(await limited.text()).toBe('{"error":"Too many requests. Please try again later."}');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('POST /api/orders/create', () => {
  it('answers 201 with the order and its checkout token, and is limited to 10 per minute', async () => {
    const ip = clientIp();
    const body = { storeId: store.subdomain, cart: [{ productId: manual.id, quantity: 3 }], email: 'c@example.test' };
    const first = await post('/api/orders/create', body, { 'x-forwarded-for': ip });
    expect(first.status).toBe(201);
    const created = await first.json();
    expect(created).toEqual({
      order: expect.objectContaining({
        status: 'pending',
        price: 75,
        subtotal: 75,
        discount: 0,
        currency: 'USD',
        email: 'c@example.test',
        orderId: expect.stringMatching(/^ORD-\d+$/),
      }),
      checkoutToken: expect.any(String),
    });
    expect(
      (await post('/api/checkout/enter', { orderId: created.order.id, token: created.checkoutToken })).status,
    ).toBe(200);
    for (let i = 0; i < 9; i++)
      expect((await post('/api/orders/create', body, { 'x-forwarded-for': ip })).status).toBe(201);
    const limited = await post('/api/orders/create', body, { 'x-forwarded-for': ip });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBeTruthy();
  });

  it('needs an e-mail', async () => {
    expect(
      (await post('/api/orders/create', { storeId: store.id, cart: [{ productId: manual.id, quantity: 2 }] })).status,
    ).toBe(400);
  });
});

describe('license-key stock', () => {
  it('masks every listed key by one rule: eight dots, and only past eight characters its last four (issue 26)', async () => {
    const product = await createProduct(seller, store.id, { name: 'Masked', deliveryMethods: ['licenseKeys'] });
    const long = `LONG-${randomBytes(16).toString('hex')}-WXYZ`;
    await importKeys(seller, store.id, product.id, ['Q', 'QWERT', 'ABCDEFGH', 'ABCDEFGHI', long]);
    const { key } = await createKeyFor(seller, { scopes: ['product:read'], storeIds: [store.id] });
    const lists = [
      await dashboard(seller, 'GET', `/api/dashboard/stores/${store.id}/products/${product.id}/license-keys?limit=10`),
      await fetch(`${server.url}/api/merchant/v1/stores/${store.id}/products/${product.id}/license-keys?limit=10`, {
        headers: { authorization: `Bearer ${key}` },
      }),
    ];
    for (const response of lists) {
      expect(response.status, await response.clone().text()).toBe(200);
      const body = (await response.json()) as Record<string, Array<{ masked: string }>>;
      const masks = (body.keys ?? body.licenseKeys)!.map((k) => k.masked).sort();
      expect(masks).toEqual(['••••••••', '••••••••', '••••••••', '••••••••FGHI', '••••••••WXYZ']);
    }
  });

  it('imports 10,000 keys with 1,000 duplicates as added 9000, duplicates 1000, and keeps none in clear', async () => {
    const product = await createProduct(seller, store.id, { name: 'Bulk', deliveryMethods: ['licenseKeys'] });
    const unique = Array.from(
      { length: 9000 },
      (_, i) => `BULK-${i.toString().padStart(5, '0')}-${randomBytes(4).toString('hex')}`,
    );
    const keys = [...unique, ...unique.slice(0, 500).map((k) => `  ${k} `), ...unique.slice(500, 1000), '', '   '];
    expect(keys.filter((k) => k.trim()).length).toBe(10_000);
    expect(await importKeys(seller, store.id, product.id, keys)).toEqual({ added: 9000, duplicates: 1000 });
    // A second import of some of them: all duplicates against stock.
    expect(await importKeys(seller, store.id, product.id, unique.slice(0, 10))).toEqual({ added: 0, duplicates: 10 });

    const dump = execFileSync('pg_dump', ['--data-only', '--table=license_key', server.db.url], {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    });
    expect(dump.split('\n').length).toBeGreaterThan(9000);
    for (const key of [unique[0]!, unique[4321]!, unique[8999]!]) expect(dump).not.toContain(key);
    expect(dump).not.toContain('BULK-');

    const listed = await (
      await dashboard(seller, 'GET', `/api/dashboard/stores/${store.id}/products/${product.id}/license-keys?limit=3`)
    ).json();
    expect(listed.keys).toHaveLength(3);
    expect(listed.counts).toEqual({ available: 9000, assigned: 0, revoked: 0 });
    for (const key of listed.keys) {
      expect(key.masked).toMatch(/^•+[0-9a-f]{4}$/);
      expect(unique.some((k) => k.endsWith(key.masked.slice(-4)))).toBe(true);
    }
    const stock = await (
      await dashboard(seller, 'GET', `/api/dashboard/stores/${store.id}/products/${product.id}`)
    ).json();
    expect(stock.stock).toBe(9000);
  });

  it('refuses keys for a product not delivered by keys', async () => {
    const response = await dashboard(
      seller,
      'POST',
      `/api/dashboard/stores/${store.id}/products/${manual.id}/license-keys`,
      { keys: ['X'] },
    );
    expect(response.status).toBe(409);
  });
});

describe('product events', () => {
  async function events(productId: string, type: string): Promise<number> {
    const { rows } = await db.query(
      `select count(*)::int as n from event where type = $1 and payload->'product'->>'id' = $2`,
      [type, productId],
    );
    return rows[0].n;
  }

  it('records product.updated exactly when the change commits, and none for a refused one', async () => {
    const product = await createProduct(seller, store.id, { name: 'Evented', minQuantity: 2 });
    expect(await events(product.id, 'product.created')).toBe(1);
    const refused = await dashboard(seller, 'PATCH', `/api/dashboard/stores/${store.id}/products/${product.id}`, {
      maxQuantity: 1,
    });
    expect(refused.status).toBe(400);
    expect(await events(product.id, 'product.updated')).toBe(0);
    const accepted = await dashboard(seller, 'PATCH', `/api/dashboard/stores/${store.id}/products/${product.id}`, {
      price: 12.5,
    });
    expect(accepted.status).toBe(200);
    expect((await accepted.json()).price).toBe(12.5);
    expect(await events(product.id, 'product.updated')).toBe(1);
    expect((await dashboard(seller, 'DELETE', `/api/dashboard/stores/${store.id}/products/${product.id}`)).status).toBe(
      204,
    );
    expect(await events(product.id, 'product.deleted')).toBe(1);
    expect((await dashboard(seller, 'GET', `/api/dashboard/stores/${store.id}/products/${product.id}`)).status).toBe(
      404,
    );
  });

  it('needs manageProducts', async () => {
    const staff = await registerSeller(server.url);
    await dashboard(seller, 'POST', `/api/dashboard/stores/${store.id}/members`, {
      email: staff.email,
      permissions: ['viewOrders'],
    });
    const response = await dashboard(staff, 'POST', `/api/dashboard/stores/${store.id}/products`, {
      name: 'X',
      price: 1,
      deliveryMethods: ['manualDelivery'],
    });
    expect(response.status).toBe(403);
    expect((await response.json()).code).toBe('permission_missing');
  });
});

describe('POST /api/checkout/start', () => {
  async function pendingOrder(email?: string) {
    const response = await post('/api/v1/checkout', {
      shopId: store.id,
      cart: [{ productId: withFields.id, quantity: 1 }],
      customFields: { Username: 'neo' },
      ...(email ? { email } : {}),
    });
    const { url, orderId } = await response.json();
    return { orderId, token: new URL(url).searchParams.get('token')! };
  }

  it('records the method and answers manual-payment instructions with the amount and reference', async () => {
    const settings = await dashboard(seller, 'PATCH', `/api/dashboard/stores/${store.id}`, {
      settings: { manualPaymentInstructions: 'IBAN DE00 1234' },
    });
    expect(settings.status).toBe(200);
    expect((await settings.json()).settings).toEqual({
      paymentMethods: ['manual'],
      manualPaymentInstructions: 'IBAN DE00 1234',
      emailOrderAccess: true,
      receiptsEnabled: true,
      receiptNote: '',
      subscriptionGraceDays: 7,
      licenseLeaseDays: 7,
      // Never set: off, the seller's details empty.
      tax: {
        behavior: 'off',
        originCountry: null,
        registrations: [],
        sellerName: '',
        sellerAddress: '',
        sellerTaxId: '',
      },
    });
    const { orderId, token } = await pendingOrder();
    const response = await post('/api/checkout/start', {
      orderId,
      token,
      paymentMethod: 'manual',
      email: 'late@example.test',
      customFields: { Username: 'trinity', Region: 'US' },
    });
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body).toEqual({
      orderId,
      paymentMethod: 'manual',
      price: 5,
      currency: 'USD',
      instructions: expect.stringContaining('IBAN DE00 1234'),
    });
    const { rows } = await db.query(
      'select payment_method, customer_email, custom_field_responses, number from "order" where id = $1',
      [orderId],
    );
    expect(body.instructions).toContain(`ORD-${rows[0].number}`);
    // The amount as a buyer reads it ($5.00, not "5 USD").
    expect(body.instructions).toBe(
      `IBAN DE00 1234\n\nAmount: $5.00. Use ORD-${rows[0].number} as the payment reference.`,
    );
    expect(rows[0]).toMatchObject({
      payment_method: 'manual',
      customer_email: 'late@example.test',
      custom_field_responses: [
        { name: 'Username', value: 'trinity' },
        { name: 'Region', value: 'US' },
      ],
    });
  });

  it('tells the buyer the seller will send their payment details when the store wrote no instructions', async () => {
    const bare = await createStoreFor(seller, 'Quiet Shop');
    const product = await createProduct(seller, bare.id, { name: 'Lesson', price: 56.4 });
    const created = await post('/api/v1/checkout', { shopId: bare.id, cart: [{ productId: product.id, quantity: 1 }] });
    const { url, orderId } = await created.json();
    const response = await post('/api/checkout/start', {
      orderId,
      token: new URL(url).searchParams.get('token')!,
      paymentMethod: 'manual',
      email: 'quiet@example.test',
    });
    expect(response.status, await response.clone().text()).toBe(200);
    const { rows } = await db.query('select number from "order" where id = $1', [orderId]);
    expect((await response.json()).instructions).toBe(
      `Pay $56.40 to Quiet Shop, who will send you their payment details. Use ORD-${rows[0].number} as the payment reference. Your order is delivered once Quiet Shop confirms the payment.`,
    );
  });

  it('needs an e-mail when the order has none, the right token, and a method the store offers', async () => {
    const { orderId, token } = await pendingOrder();
    expect((await post('/api/checkout/start', { orderId, token, paymentMethod: 'manual' })).status).toBe(400);
    expect(
      (
        await post('/api/checkout/start', {
          orderId,
          token: 'x'.repeat(43),
          paymentMethod: 'manual',
          email: 'a@example.test',
        })
      ).status,
    ).toBe(403);
    expect(
      (await post('/api/checkout/start', { orderId, token, paymentMethod: 'bitcoin', email: 'a@example.test' })).status,
    ).toBe(400);
    expect(
      (
        await post('/api/checkout/start', {
          orderId: 'zzzzzzzzzzzzzzzzzzzzzzzz',
          token,
          paymentMethod: 'manual',
          email: 'a@example.test',
        })
      ).status,
    ).toBe(404);
  });

  it('refuses an order that is no longer pending', async () => {
    const { orderId, token } = await pendingOrder('p@example.test');
    await db.query(`update "order" set status = 'expired' where id = $1`, [orderId]);
    const response = await post('/api/checkout/start', { orderId, token, paymentMethod: 'manual' });
    expect(response.status).toBe(400);
    expect((await response.json()).code).toBe('order_not_pending');
  });

  it('is limited to 15 per minute per client', async () => {
    const { orderId, token } = await pendingOrder('l@example.test');
    const ip = clientIp();
    const statuses: number[] = [];
    for (let i = 0; i < 16; i++)
      statuses.push(
        (await post('/api/checkout/start', { orderId, token, paymentMethod: 'manual' }, { 'x-forwarded-for': ip }))
          .status,
      );
    expect(statuses.slice(0, 15)).toEqual(Array(15).fill(200));
    expect(statuses[15]).toBe(429);
  });
});
