/**
 * Black-box: buyers' feedback on completed orders (POST /api/feedback/create, GET /api/feedback)
 * and storefront tracking (POST /api/track), on the built server over real HTTP.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientIp, createStoreFor, dashboard, registerSeller, uniqueEmail, type Seller } from './support/seller.js';
import { startServer } from './support/server.js';

const RATE_LIMITED = { error: 'Too many requests. Please try again later.', code: 'rate_limited' };
const STORE_NOT_FOUND = { error: 'Store not found.', code: 'not_found' };
const NOT_COMPLETED = { error: 'Feedback opens once the order is completed.', code: 'order_not_paid' };
const ALREADY_RATED = { error: 'This order already has feedback.', code: 'conflict' };
const WRONG_TOKEN = { error: 'This link does not open this order.', code: 'store_forbidden' };
const ORDER_NOT_FOUND = { error: 'Order not found.', code: 'not_found' };
const BAD_CURSOR = {
  error: 'The request is not valid.',
  code: 'validation_failed',
  issues: [{ path: 'cursor', message: 'Not a cursor this API issued.' }],
};

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let server: Awaited<ReturnType<typeof startServer>>;
let db: pg.Client;

beforeAll(async () => {
  server = await startServer();
  db = new pg.Client({ connectionString: server.db.url });
  await db.connect();
});

afterAll(async () => {
  await db?.end();
  await server?.stop();
});

// ---------------------------------------------------------------------------------------------
// Helpers

interface CallOptions {
  method?: string;
  body?: unknown;
  ip?: string;
}

/** A public call; each its own client (X-Forwarded-For behind the trusted proxy) unless `ip` says otherwise. */
function call(path: string, opts: CallOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { 'x-forwarded-for': opts.ip ?? clientIp() };
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  return fetch(`${server.url}${path}`, {
    method: opts.method ?? (opts.body === undefined ? 'GET' : 'POST'),
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
}

async function sellerWithStore(): Promise<{ seller: Seller; store: { id: string; subdomain: string } }> {
  const seller = await registerSeller(server.url);
  const store = await createStoreFor(seller);
  return { seller, store };
}

async function createProduct(seller: Seller, storeId: string, name: string, price = 9.99): Promise<string> {
  const response = await dashboard(seller, 'POST', `/api/dashboard/stores/${storeId}/products`, {
    name,
    price,
    deliveryMethods: ['manualDelivery'],
  });
  expect(response.status).toBe(201);
  return (await response.json()).id;
}

interface PlacedOrder {
  id: string;
  token: string;
  email: string;
}

/** A real pending order through the public route (limited per client: each order its own address). */
async function placeOrder(storeId: string, productId: string, quantity = 1): Promise<PlacedOrder> {
  const email = uniqueEmail('buyer');
  const response = await call('/api/orders/create', { body: { storeId, cart: [{ productId, quantity }], email } });
  expect(response.status).toBe(201);
  const body = await response.json();
  return { id: body.order.id, token: body.checkoutToken, email };
}

/**
 * Payments and fulfilment arrive in a later issue; until then a test completes an order the
 * only way there is, straight in the database.
 */
async function complete(orderId: string): Promise<void> {
  const result = await db.query(
    `update "order" set status = 'completed', completed_at = now(), updated_at = now() where id = $1`,
    [orderId],
  );
  expect(result.rowCount).toBe(1);
}

async function completedOrder(storeId: string, productId: string): Promise<PlacedOrder> {
  const order = await placeOrder(storeId, productId);
  await complete(order.id);
  return order;
}

function rate(order: PlacedOrder, rating: number, text: string, ip?: string): Promise<Response> {
  return call('/api/feedback/create', {
    body: { orderId: order.id, token: order.token, rating, text },
    ...(ip ? { ip } : {}),
  });
}

async function rated(order: PlacedOrder, rating: number, text: string): Promise<Record<string, unknown>> {
  const response = await rate(order, rating, text);
  expect(response.status).toBe(201);
  return response.json();
}

function listFeedback(query: Record<string, string | number>, ip?: string): Promise<Response> {
  const search = new URLSearchParams(
    Object.entries(query).map(([key, value]): [string, string] => [key, String(value)]),
  );
  return call(`/api/feedback?${search.toString()}`, ip ? { ip } : {});
}

function track(body: Record<string, unknown>, ip?: string): Promise<Response> {
  return call('/api/track', { body, ...(ip ? { ip } : {}) });
}

async function expectRateLimited(response: Response): Promise<void> {
  expect(response.status).toBe(429);
  const retryAfter = Number(response.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(await response.json()).toEqual(RATE_LIMITED);
}

// ---------------------------------------------------------------------------------------------
// Feedback

describe('POST /api/feedback/create', () => {
  it('takes one rating for a completed order, opened with its checkout token', async () => {
    const { seller, store } = await sellerWithStore();
    const productId = await createProduct(seller, store.id, 'Game Key');
    const order = await completedOrder(store.id, productId);

    const response = await rate(order, 5, '  Fast delivery, works great.  ');
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({
      id: expect.any(String),
      rating: 5,
      text: 'Fast delivery, works great.',
      createdAt: expect.stringMatching(ISO),
      productName: 'Game Key',
    });

    const twice = await rate(order, 1, 'Changed my mind');
    expect(twice.status).toBe(409);
    expect(await twice.json()).toEqual(ALREADY_RATED);

    const { rows } = await db.query('select store_id, order_id, rating, text from feedback where order_id = $1', [
      order.id,
    ]);
    expect(rows).toEqual([{ store_id: store.id, order_id: order.id, rating: 5, text: 'Fast delivery, works great.' }]);
  });

  it('refuses an order that is not completed with 409 order_not_paid', async () => {
    const { seller, store } = await sellerWithStore();
    const productId = await createProduct(seller, store.id, 'Pending Thing');
    const order = await placeOrder(store.id, productId);
    const pending = await rate(order, 4, 'Not yet');
    expect(pending.status).toBe(409);
    expect(await pending.json()).toEqual(NOT_COMPLETED);

    await db.query(`update "order" set status = 'paid', paid_at = now() where id = $1`, [order.id]);
    const paid = await rate(order, 4, 'Paid but not delivered');
    expect(paid.status).toBe(409);
    expect(await paid.json()).toEqual(NOT_COMPLETED);

    const { rows } = await db.query('select count(*)::int as n from feedback where order_id = $1', [order.id]);
    expect(rows[0].n).toBe(0);
  });

  it('refuses a wrong token with 403 and an unknown order with 404', async () => {
    const { seller, store } = await sellerWithStore();
    const productId = await createProduct(seller, store.id, 'Locked');
    const order = await completedOrder(store.id, productId);
    const other = await completedOrder(store.id, productId);

    const wrong = await rate({ ...order, token: randomBytes(32).toString('base64url') }, 5, 'Hi');
    expect(wrong.status).toBe(403);
    expect(await wrong.json()).toEqual(WRONG_TOKEN);
    // Another order's token does not open this one.
    const swapped = await rate({ ...order, token: other.token }, 5, 'Hi');
    expect(swapped.status).toBe(403);
    expect(await swapped.json()).toEqual(WRONG_TOKEN);

    const unknown = await rate({ ...order, id: 'zzzzzzzzzzzzzzzzzzzzzzzz' }, 5, 'Hi');
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual(ORDER_NOT_FOUND);
  });

  it('validates rating and text', async () => {
    const { seller, store } = await sellerWithStore();
    const productId = await createProduct(seller, store.id, 'Checked');
    const order = await completedOrder(store.id, productId);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ rating: 0, text: 'x' }, 'rating'],
      [{ rating: 6, text: 'x' }, 'rating'],
      [{ rating: 4.5, text: 'x' }, 'rating'],
      [{ rating: '5', text: 'x' }, 'rating'],
      [{ rating: 5, text: '   ' }, 'text'],
      [{ rating: 5, text: 'x'.repeat(2001) }, 'text'],
      [{ rating: 5, text: 'bell\u0007' }, 'text'],
      [{ rating: 5, text: 'ok', email: 'a@b.c' }, 'email'],
    ];
    for (const [fields, path] of cases) {
      const response = await call('/api/feedback/create', {
        body: { orderId: order.id, token: order.token, ...fields },
      });
      expect(response.status, JSON.stringify(fields)).toBe(400);
      const body = await response.json();
      expect(body.code).toBe('validation_failed');
      expect(body.issues.map((issue: { path: string }) => issue.path)).toEqual([path]);
    }
    // 2000 characters after trimming is the most.
    expect((await rate(order, 3, ` ${'y'.repeat(2000)} `)).status).toBe(201);
  });

  it('lets one of two racing ratings of the same order through and answers the other 409', async () => {
    const { seller, store } = await sellerWithStore();
    const productId = await createProduct(seller, store.id, 'Raced');
    for (let round = 0; round < 3; round++) {
      const order = await completedOrder(store.id, productId);
      const responses = await Promise.all([rate(order, 5, 'first'), rate(order, 1, 'second'), rate(order, 3, 'third')]);
      const statuses = responses.map((response) => response.status).sort();
      expect(statuses).toEqual([201, 409, 409]);
      for (const response of responses.filter((r) => r.status === 409))
        expect(await response.json()).toEqual(ALREADY_RATED);
      const { rows } = await db.query('select count(*)::int as n from feedback where order_id = $1', [order.id]);
      expect(rows[0].n).toBe(1);
    }
  });

  it('allows 5 attempts a minute per client, then 429 with Retry-After', async () => {
    const ip = clientIp();
    const nobody = { id: 'zzzzzzzzzzzzzzzzzzzzzzzz', token: randomBytes(32).toString('base64url'), email: '' };
    for (let i = 1; i <= 5; i++) {
      const response = await rate(nobody, 5, 'Hello', ip);
      expect(response.status, `request ${i}`).toBe(404);
      expect(response.headers.get('x-ratelimit-remaining')).toBe(String(5 - i));
    }
    await expectRateLimited(await rate(nobody, 5, 'Hello', ip));
    expect((await rate(nobody, 5, 'Hello')).status).toBe(404);
  });
});

describe('GET /api/feedback', () => {
  it('lists a store’s feedback newest first with its average, never the buyer', async () => {
    const { seller, store } = await sellerWithStore();
    const gameKey = await createProduct(seller, store.id, 'Game Key');
    const giftCard = await createProduct(seller, store.id, 'Gift Card');
    const first = await completedOrder(store.id, gameKey);
    const second = await completedOrder(store.id, giftCard);
    const third = await completedOrder(store.id, gameKey);
    const a = await rated(first, 5, 'Excellent');
    const b = await rated(second, 4, 'Good');
    const c = await rated(third, 4, 'Fine');
    // Another store's feedback stays there.
    const { seller: otherSeller, store: otherStore } = await sellerWithStore();
    await rated(
      await completedOrder(otherStore.id, await createProduct(otherSeller, otherStore.id, 'Elsewhere')),
      1,
      'Bad',
    );

    const response = await listFeedback({ storeId: store.id });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({
      feedback: [c, b, a],
      hasMore: false,
      nextCursor: null,
      averageRating: 4.33,
      count: 3,
    });
    expect(JSON.parse(text).feedback.map((f: { productName: string }) => f.productName)).toEqual([
      'Game Key',
      'Gift Card',
      'Game Key',
    ]);
    for (const order of [first, second, third]) {
      expect(text).not.toContain(order.email);
      expect(text).not.toContain(order.id);
    }

    // By subdomain, the same.
    expect(await (await listFeedback({ storeId: store.subdomain })).json()).toEqual(JSON.parse(text));
  });

  it('pages with a signed cursor and refuses a forged one', async () => {
    const { seller, store } = await sellerWithStore();
    const productId = await createProduct(seller, store.id, 'Paged');
    const written: Array<Record<string, unknown>> = [];
    for (let i = 1; i <= 5; i++)
      written.push(await rated(await completedOrder(store.id, productId), (i % 5) + 1, `Review ${i}`));
    const newestFirst = [...written].reverse();

    const page1 = await (await listFeedback({ storeId: store.id, limit: 2 })).json();
    expect(page1).toMatchObject({ feedback: newestFirst.slice(0, 2), hasMore: true, count: 5, averageRating: 3 });
    expect(page1.nextCursor).toEqual(expect.any(String));
    const page2 = await (await listFeedback({ storeId: store.id, limit: 2, cursor: page1.nextCursor })).json();
    expect(page2).toMatchObject({ feedback: newestFirst.slice(2, 4), hasMore: true });
    const page3 = await (await listFeedback({ storeId: store.id, limit: 2, cursor: page2.nextCursor })).json();
    expect(page3).toEqual({
      feedback: newestFirst.slice(4),
      hasMore: false,
      nextCursor: null,
      averageRating: 3,
      count: 5,
    });

    const [body] = String(page1.nextCursor).split('.');
    const forged = await listFeedback({ storeId: store.id, cursor: `${body}.AAAAAAAAAAAAAAAAAAAAAA` });
    expect(forged.status).toBe(400);
    expect(await forged.json()).toEqual(BAD_CURSOR);

    for (const limit of [0, 101, 'ten']) {
      const response = await listFeedback({ storeId: store.id, limit });
      expect(response.status, String(limit)).toBe(400);
      expect((await response.json()).issues.map((issue: { path: string }) => issue.path)).toEqual(['limit']);
    }
  });

  it('answers a store without feedback with null average, and an unknown store with 404', async () => {
    const { store } = await sellerWithStore();
    const empty = await listFeedback({ storeId: store.id });
    expect(empty.status).toBe(200);
    expect(await empty.json()).toEqual({
      feedback: [],
      hasMore: false,
      nextCursor: null,
      averageRating: null,
      count: 0,
    });

    const missing = await listFeedback({ storeId: 'no-such-store-here' });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual(STORE_NOT_FOUND);
  });

  it('allows 60 reads a minute per client, then 429 with Retry-After', async () => {
    const { store } = await sellerWithStore();
    const ip = clientIp();
    for (let i = 1; i <= 60; i++) {
      const response = await listFeedback({ storeId: store.id }, ip);
      expect(response.status, `request ${i}`).toBe(200);
    }
    await expectRateLimited(await listFeedback({ storeId: store.id }, ip));
    expect((await listFeedback({ storeId: store.id })).status).toBe(200);
  });
});

// ---------------------------------------------------------------------------------------------
// Tracking

describe('POST /api/track', () => {
  it('records an event with 204 and keeps no IP address', async () => {
    const { seller, store } = await sellerWithStore();
    const productId = await createProduct(seller, store.id, 'Viewed');
    const ip = clientIp();

    const view = await track({ storeId: store.id, type: 'product_view', productId, path: '/p/viewed?ref=home' }, ip);
    expect(view.status).toBe(204);
    expect(await view.text()).toBe('');
    const page = await track({ storeId: store.subdomain, type: 'page_view' }, ip);
    expect(page.status).toBe(204);

    const { rows } = await db.query('select * from track_event where store_id = $1 order by created_at, id', [
      store.id,
    ]);
    expect(rows).toEqual([
      {
        id: expect.any(String),
        store_id: store.id,
        type: 'product_view',
        product_id: productId,
        path: '/p/viewed?ref=home',
        created_at: expect.anything(),
      },
      {
        id: expect.any(String),
        store_id: store.id,
        type: 'page_view',
        product_id: null,
        path: null,
        created_at: expect.anything(),
      },
    ]);
    expect(JSON.stringify(rows)).not.toContain(ip);

    for (const type of ['add_to_cart', 'checkout_start'])
      expect((await track({ storeId: store.id, type })).status).toBe(204);
    const { rows: counts } = await db.query(
      'select type, count(*)::int as n from track_event where store_id = $1 group by type order by type',
      [store.id],
    );
    expect(counts).toEqual([
      { type: 'add_to_cart', n: 1 },
      { type: 'checkout_start', n: 1 },
      { type: 'page_view', n: 1 },
      { type: 'product_view', n: 1 },
    ]);
  });

  it('refuses an unknown type, an overlong path and unknown fields with 400, an unknown store with 404', async () => {
    const { store } = await sellerWithStore();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ storeId: store.id, type: 'purchase' }, 'type'],
      [{ storeId: store.id }, 'type'],
      [{ storeId: store.id, type: 'page_view', path: `/${'a'.repeat(500)}` }, 'path'],
      [{ storeId: store.id, type: 'page_view', ip: '1.2.3.4' }, 'ip'],
    ];
    for (const [body, path] of cases) {
      const response = await track(body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      const error = await response.json();
      expect(error.code).toBe('validation_failed');
      expect(error.issues.map((issue: { path: string }) => issue.path)).toEqual([path]);
    }
    const missing = await track({ storeId: 'no-such-store-here', type: 'page_view' });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual(STORE_NOT_FOUND);

    const { rows } = await db.query('select count(*)::int as n from track_event where store_id = $1', [store.id]);
    expect(rows[0].n).toBe(0);
  });

  it('allows 120 events a minute per client, then 429 with Retry-After', async () => {
    const { store } = await sellerWithStore();
    const ip = clientIp();
    for (let i = 1; i <= 120; i++) {
      const response = await track({ storeId: store.id, type: 'page_view' }, ip);
      expect(response.status, `request ${i}`).toBe(204);
    }
    await expectRateLimited(await track({ storeId: store.id, type: 'page_view' }, ip));
    expect((await track({ storeId: store.id, type: 'page_view' })).status).toBe(204);
    const { rows } = await db.query('select count(*)::int as n from track_event where store_id = $1', [store.id]);
    expect(rows[0].n).toBe(121);
  });
});
