/**
 * Black-box: Idempotency-Key on the three order-creating routes (/api/v1/checkout,
 * /api/embed/checkout, /api/orders/create): replays, reuse with another body, keys in
 * use, released keys after a failure, scoping by route and store, and the 24 h pruning.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openOrm } from '../apps/server/src/db/orm.js';
import { pruneIdempotencyKeys } from '../apps/server/src/modules/idempotency/idempotency.service.js';
import { canonicalJson } from '../apps/server/src/trpc/idempotency.middleware.js';
import { createProduct } from './support/catalog.js';
import { serviceContext } from './support/in-process.js';
import { clientIp, createStoreFor, registerSeller, type Seller } from './support/seller.js';
import { REPO_ROOT, startServer } from './support/server.js';

let server: Awaited<ReturnType<typeof startServer>>;
let db: pg.Client;
let seller: Seller;
let store: { id: string; subdomain: string };
let product: { id: string };
let archived: { id: string };

beforeAll(async () => {
  server = await startServer();
  db = new pg.Client({ connectionString: server.db.url });
  await db.connect();
  seller = await registerSeller(server.url);
  store = await createStoreFor(seller);
  product = await createProduct(seller, store.id, { name: 'Coaching', price: 25, deliveryMethods: ['manualDelivery'] });
  archived = await createProduct(seller, store.id, {
    name: 'Old',
    status: 'archived',
    deliveryMethods: ['manualDelivery'],
  });
});

afterAll(async () => {
  await db?.end();
  await server?.stop();
});

interface Route {
  path: string;
  procedure: string;
  status: number;
  /** The body for a cart and a buyer e-mail. */
  body(cart: Array<{ productId: string; quantity: number }>, email: string, storeId?: string): Record<string, unknown>;
}

const ROUTES: Route[] = [
  {
    path: '/api/v1/checkout',
    procedure: 'checkout.checkout',
    status: 200,
    body: (cart, email, storeId = store.id) => ({ shopId: storeId, cart, email }),
  },
  {
    path: '/api/embed/checkout',
    procedure: 'checkout.embed',
    status: 200,
    body: (cart, email, storeId = store.id) => ({ shopId: storeId, cart, email }),
  },
  {
    path: '/api/orders/create',
    procedure: 'checkout.create',
    status: 201,
    body: (cart, email, storeId = store.id) => ({ storeId, cart, email }),
  },
];

const newKey = () => `key-${randomBytes(8).toString('hex')}`;
const newEmail = () => `buyer-${randomBytes(5).toString('hex')}@example.test`;

/** A POST with a raw body, from a fresh client address (orders/create allows 10 a minute per client). */
function postText(routePath: string, text: string, key?: string, headers: Record<string, string> = {}) {
  return fetch(`${server.url}${routePath}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-forwarded-for': clientIp(),
      ...(key === undefined ? {} : { 'idempotency-key': key }),
      ...headers,
    },
    body: text,
  });
}

function post(routePath: string, body: unknown, key?: string, headers: Record<string, string> = {}) {
  return postText(routePath, JSON.stringify(body), key, headers);
}

/** The order an answer names: `orderId` from the checkout routes, `order.id` from orders/create. */
function orderIdOf(body: { orderId?: string; order?: { id: string } }): string {
  const id = body.orderId ?? body.order?.id;
  expect(id).toEqual(expect.any(String));
  return id!;
}

async function ordersFor(email: string): Promise<number> {
  const { rows } = await db.query('select count(*)::int as n from "order" where customer_email = $1', [email]);
  return rows[0].n;
}

describe.each(ROUTES)('$path', (route) => {
  const cart = () => [{ productId: product.id, quantity: 1 }];

  it('replays the first answer for the same key and body, with Idempotent-Replayed, and creates one order', async () => {
    const key = newKey();
    const email = newEmail();
    const first = await post(route.path, route.body(cart(), email), key);
    expect(first.status, await first.clone().text()).toBe(route.status);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const firstBody = await first.text();

    const second = await post(route.path, route.body(cart(), email), key);
    expect(second.status).toBe(route.status);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await second.text()).toBe(firstBody);
    expect(await ordersFor(email)).toBe(1);
  });

  it('refuses the same key with another body with 422 idempotency_key_reused', async () => {
    const key = newKey();
    const email = newEmail();
    expect((await post(route.path, route.body(cart(), email), key)).status).toBe(route.status);
    const other = await post(route.path, route.body([{ productId: product.id, quantity: 2 }], email), key);
    expect(other.status).toBe(422);
    expect(await other.json()).toMatchObject({ code: 'idempotency_key_reused' });
    expect(await ordersFor(email)).toBe(1);
  });

  it('treats other whitespace and key order as the same body', async () => {
    const key = newKey();
    const email = newEmail();
    const body = route.body(cart(), email);
    const first = await post(route.path, body, key);
    expect(first.status).toBe(route.status);
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    const again = await postText(route.path, `\n  ${JSON.stringify(reordered, null, 4)}  \n`, key);
    expect(again.status).toBe(route.status);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.json()).toEqual(await first.json());
    expect(await ordersFor(email)).toBe(1);
  });

  it('changes nothing without the header: two requests, two orders', async () => {
    const email = newEmail();
    const first = await post(route.path, route.body(cart(), email));
    const second = await post(route.path, route.body(cart(), email));
    expect([first.status, second.status]).toEqual([route.status, route.status]);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(orderIdOf(await first.json())).not.toBe(orderIdOf(await second.json()));
    expect(await ordersFor(email)).toBe(2);
  });

  it('releases the key when the first attempt failed: a later request with it runs', async () => {
    const key = newKey();
    const email = newEmail();
    const failed = await post(route.path, route.body([{ productId: archived.id, quantity: 1 }], email), key);
    expect(failed.status).toBe(400);
    expect((await failed.json()).code).toBe('product_unavailable');

    const good = await post(route.path, route.body(cart(), email), key);
    expect(good.status).toBe(route.status);
    expect(good.headers.get('idempotent-replayed')).toBeNull();
    const again = await post(route.path, route.body(cart(), email), key);
    expect(again.status).toBe(route.status);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await ordersFor(email)).toBe(1);
  });

  it('creates exactly one order for 20 concurrent requests with one key; the rest are replays or 409', async () => {
    const key = newKey();
    const email = newEmail();
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => post(route.path, route.body(cart(), email), key)),
    );
    const answers = await Promise.all(
      responses.map(async (r) => ({
        status: r.status,
        replayed: r.headers.get('idempotent-replayed'),
        body: await r.json(),
      })),
    );
    const ok = answers.filter((a) => a.status === route.status);
    const inUse = answers.filter((a) => a.status === 409);
    expect(ok.length + inUse.length, JSON.stringify(answers.map((a) => a.status))).toBe(20);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(ok.filter((a) => a.replayed === null)).toHaveLength(1);
    for (const answer of ok) expect(answer.body).toEqual(ok[0]!.body);
    for (const answer of inUse) expect(answer.body).toMatchObject({ code: 'idempotency_key_in_use' });
    expect(await ordersFor(email)).toBe(1);
  });

  it('refuses a key that is not 1..255 printable characters with 400', async () => {
    const email = newEmail();
    const response = await post(route.path, route.body(cart(), email), 'k'.repeat(256));
    expect(response.status).toBe(400);
    expect((await response.json()).code).toBe('validation_failed');
    expect(await ordersFor(email)).toBe(0);
  });
});

describe('scope', () => {
  it('keeps the same key on different routes independent: one order each', async () => {
    const key = newKey();
    const email = newEmail();
    for (const route of ROUTES) {
      const response = await post(route.path, route.body([{ productId: product.id, quantity: 1 }], email), key);
      expect(response.status).toBe(route.status);
      expect(response.headers.get('idempotent-replayed')).toBeNull();
    }
    expect(await ordersFor(email)).toBe(3);
  });

  it("keeps two stores' keys apart: the same key in another store is another order", async () => {
    const other = await createStoreFor(seller, 'Other');
    const otherProduct = await createProduct(seller, other.id, { deliveryMethods: ['manualDelivery'] });
    const key = newKey();
    const email = newEmail();
    const route = ROUTES[0]!;
    expect((await post(route.path, route.body([{ productId: product.id, quantity: 1 }], email), key)).status).toBe(200);
    const second = await post(
      route.path,
      route.body([{ productId: otherProduct.id, quantity: 1 }], email, other.id),
      key,
    );
    expect(second.status).toBe(200);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(await ordersFor(email)).toBe(2);
  });

  it.each(ROUTES)(
    'scopes the key by the store the body resolves to: its id, then its subdomain, is one order ($path)',
    async (route) => {
      const key = newKey();
      const email = newEmail();
      const cart = [{ productId: product.id, quantity: 1 }];
      const first = await post(route.path, route.body(cart, email, store.id), key);
      expect(first.status, await first.clone().text()).toBe(route.status);
      const firstBody = await first.text();
      for (const ref of [store.subdomain, store.subdomain.toUpperCase()]) {
        const again = await post(route.path, route.body(cart, email, ref), key);
        expect(again.status, ref).toBe(route.status);
        expect(again.headers.get('idempotent-replayed'), ref).toBe('true');
        expect(await again.text()).toBe(firstBody);
      }
      expect(await ordersFor(email)).toBe(1);
    },
  );

  it('scopes a key first used with the subdomain by the store too: then its id replays', async () => {
    const route = ROUTES[0]!;
    const key = newKey();
    const email = newEmail();
    const cart = [{ productId: product.id, quantity: 1 }];
    const first = await post(route.path, route.body(cart, email, store.subdomain), key);
    expect(first.status).toBe(200);
    const again = await post(route.path, route.body(cart, email, store.id), key);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.text()).toBe(await first.text());
    expect(await ordersFor(email)).toBe(1);
    // Another body under the same key is still another body, whichever way the store is named.
    const other = await post(route.path, route.body([{ productId: product.id, quantity: 2 }], email, store.id), key);
    expect(other.status).toBe(422);
  });

  it('replays orders/create with 201 and the same checkout token', async () => {
    const key = newKey();
    const body = ROUTES[2]!.body([{ productId: product.id, quantity: 1 }], newEmail());
    const first = await post('/api/orders/create', body, key);
    const second = await post('/api/orders/create', body, key);
    expect([first.status, second.status]).toEqual([201, 201]);
    const [a, b] = [await first.json(), await second.json()];
    expect(b.checkoutToken).toBe(a.checkoutToken);
    expect(b.order.id).toBe(a.order.id);
  });
});

describe('claims', () => {
  const keyHash = (key: string) => createHash('sha256').update(key).digest('hex');

  /** A claim as another request that is still running (or has died) leaves it. */
  async function claim(key: string, body: unknown, claimedSecondsAgo: number): Promise<void> {
    const bodyHash = createHash('sha256').update(canonicalJson(body)).digest('hex');
    await db.query(
      `insert into idempotency_key (path, scope, key_hash, body_hash, claim, created_at, claimed_at)
       values ('checkout.checkout', $1, $2, $3, 'elsewhere', now(), now() - make_interval(secs => $4))`,
      [store.id, keyHash(key), bodyHash, claimedSecondsAgo],
    );
  }

  it('answers 409 idempotency_key_in_use with Retry-After while another request holds the key', async () => {
    const key = newKey();
    const email = newEmail();
    const body = { shopId: store.id, cart: [{ productId: product.id, quantity: 1 }], email };
    await claim(key, body, 1);
    const response = await post('/api/v1/checkout', body, key);
    expect(response.status).toBe(409);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(await response.json()).toMatchObject({ code: 'idempotency_key_in_use' });
    // Another body under a key in use is a client error, not a wait.
    expect(
      (await post('/api/v1/checkout', { ...body, cart: [{ productId: product.id, quantity: 2 }] }, key)).status,
    ).toBe(422);
    expect(await ordersFor(email)).toBe(0);
  });

  it('takes over a claim abandoned for over a minute without an answer (a crashed process)', async () => {
    const key = newKey();
    const email = newEmail();
    await claim(key, { other: 'body' }, 120);
    const response = await post(
      '/api/v1/checkout',
      { shopId: store.id, cart: [{ productId: product.id, quantity: 1 }], email },
      key,
    );
    expect(response.status).toBe(200);
    expect(await ordersFor(email)).toBe(1);
    const replay = await post(
      '/api/v1/checkout',
      { shopId: store.id, cart: [{ productId: product.id, quantity: 1 }], email },
      key,
    );
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await ordersFor(email)).toBe(1);
  });

  it('stores the key hashed, with the status of the answer', async () => {
    const key = newKey();
    await post('/api/orders/create', ROUTES[2]!.body([{ productId: product.id, quantity: 1 }], newEmail()), key);
    const { rows } = await db.query('select path, scope, status from idempotency_key where key_hash = $1', [
      keyHash(key),
    ]);
    expect(rows).toEqual([{ path: 'checkout.create', scope: store.id, status: 201 }]);
    expect(
      (await db.query('select count(*)::int as n from idempotency_key where key_hash = $1', [key])).rows[0].n,
    ).toBe(0);
  });

  it('forgets keys after 24 h (the pruning job)', async () => {
    const oldKey = newKey();
    const freshKey = newKey();
    const email = newEmail();
    const body = { shopId: store.id, cart: [{ productId: product.id, quantity: 1 }], email };
    expect((await post('/api/v1/checkout', body, oldKey)).status).toBe(200);
    expect((await post('/api/v1/checkout', body, freshKey)).status).toBe(200);
    await db.query(`update idempotency_key set created_at = now() - interval '25 hours' where key_hash = $1`, [
      keyHash(oldKey),
    ]);

    const orm = await openOrm(server.db.url, { poolMax: 1 });
    try {
      expect(await pruneIdempotencyKeys(serviceContext(orm))).toBeGreaterThanOrEqual(1);
    } finally {
      await orm.close();
    }
    const remaining = await db.query('select key_hash from idempotency_key where key_hash = any($1)', [
      [keyHash(oldKey), keyHash(freshKey)],
    ]);
    expect(remaining.rows.map((row) => row.key_hash)).toEqual([keyHash(freshKey)]);
    // The forgotten key runs again, even with another body.
    const again = await post('/api/v1/checkout', { ...body, cart: [{ productId: product.id, quantity: 3 }] }, oldKey);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(await ordersFor(email)).toBe(3);
  });
});

describe('embed CORS and the document', () => {
  it('allows the header in the preflight and exposes Idempotent-Replayed', async () => {
    const preflight = await fetch(`${server.url}/api/embed/checkout`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://someones-blog.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, idempotency-key',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('idempotency-key');
    const response = await post(
      '/api/embed/checkout',
      { shopId: store.id, cart: [{ productId: product.id, quantity: 1 }], email: newEmail() },
      newKey(),
      {
        origin: 'https://someones-blog.example',
      },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-expose-headers')).toContain('Idempotent-Replayed');
  });

  it('documents Idempotency-Key, 409 and 422 on exactly the three routes', () => {
    const document = JSON.parse(readFileSync(path.join(REPO_ROOT, 'openapi/openapi.json'), 'utf8'));
    const documented: string[] = [];
    for (const [routePath, item] of Object.entries<
      Record<string, { parameters?: Array<{ name: string; in: string }>; responses: Record<string, unknown> }>
    >(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        if (!operation.parameters?.some((p) => p.name === 'Idempotency-Key' && p.in === 'header')) continue;
        documented.push(`${method} ${routePath}`);
        expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['409', '422']));
      }
    }
    expect(documented.sort()).toEqual(ROUTES.map((route) => `post ${route.path}`).sort());
    expect(Object.keys(document.paths['/api/orders/create'].post.responses['201'].headers)).toContain(
      'Idempotent-Replayed',
    );
  });
});
