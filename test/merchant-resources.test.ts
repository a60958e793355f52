/**
 * Black-box: the merchant API's products and key stock, coupons and refunds (docs/architecture.md, The faces, "Merchant
 * API, more resources"),
 * one table over every route: each scope missing, a store not in the key, the ceiling removed, an
 * object of another store, and a key that may: the same answers as the dashboard's, through the
 * same services.
 */
import { API_KEY_SCOPES, type TApiKeyScope } from '@svc/schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct, importKeys } from './support/catalog.js';
import { buy, pay, TEST_GATEWAY_SECRET } from './support/payments.js';
import {
  addStaff,
  clientIp,
  createKeyFor,
  createStoreFor,
  dashboard,
  registerSeller,
  uniqueEmail,
  type Seller,
} from './support/seller.js';
import { startServer } from './support/server.js';

let server: Awaited<ReturnType<typeof startServer>>;
let owner: Seller;
interface Seeded {
  id: string;
  couponId: string;
  orderIds: string[];
  productId: string;
  /** Products the archive route may take, one per call. */
  spareProductIds: string[];
  /** A coupon the delete route may take. */
  spareCouponId: string;
}
const stores: Record<'mine' | 'other', Seeded> = {} as never;
const keys: Record<string, string> = {};

async function seedStore(): Promise<Seeded> {
  const store = await createStoreFor(owner);
  const product = await createProduct(owner, store.id, {
    name: 'Refundable',
    price: 4,
    deliveryMethods: ['licenseKeys'],
  });
  await importKeys(
    owner,
    store.id,
    product.id,
    Array.from({ length: 8 }, (_, i) => `REFUND-${store.id}-${i}`),
  );
  const coupon = await dashboard(owner, 'POST', `/api/dashboard/stores/${store.id}/coupons`, {
    code: 'TEN',
    discountType: 'percent',
    discountValue: 10,
  });
  expect(coupon.status).toBe(201);
  const orderIds = [];
  for (let i = 0; i < 3; i++)
    orderIds.push(
      (await buy(server.url, { storeId: store.id, productId: product.id, email: uniqueEmail('buyer') })).id,
    );
  const spareProductIds = [];
  for (let i = 0; i < 2; i++)
    spareProductIds.push(
      (await createProduct(owner, store.id, { name: `Spare ${i}`, price: 1, deliveryMethods: ['manualDelivery'] })).id,
    );
  const spare = await dashboard(owner, 'POST', `/api/dashboard/stores/${store.id}/coupons`, {
    code: 'SPARE',
    discountType: 'percent',
    discountValue: 5,
  });
  expect(spare.status).toBe(201);
  return {
    id: store.id,
    couponId: (await coupon.json()).id,
    orderIds,
    productId: product.id,
    spareProductIds,
    spareCouponId: (await spare.json()).id,
  };
}

function call(key: string | undefined, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${server.url}/api/merchant/v1${path}`, {
    method,
    headers: {
      accept: 'application/json',
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

beforeAll(async () => {
  server = await startServer({ TEST_GATEWAY_SECRET });
  owner = await registerSeller(server.url);
  stores.mine = await seedStore();
  stores.other = await seedStore();
  keys.all = (
    await createKeyFor(owner, { scopes: [...API_KEY_SCOPES], storeIds: [stores.mine.id, stores.other.id] })
  ).key;
  keys.otherStoreOnly = (await createKeyFor(owner, { scopes: [...API_KEY_SCOPES], storeIds: [stores.other.id] })).key;
  for (const scope of ['coupon:read', 'coupon:write', 'order:refund', 'product:read', 'product:write'] as const) {
    keys[`without ${scope}`] = (
      await createKeyFor(owner, { scopes: API_KEY_SCOPES.filter((s) => s !== scope), storeIds: [stores.mine.id] })
    ).key;
  }
  // A member holding every permission but the ceilings of these routes (manageProducts, editOrders).
  const staff = await registerSeller(server.url);
  await addStaff(owner, stores.mine.id, staff, ['viewOrders', 'manageSettings']);
  keys.ceiling = (await createKeyFor(staff, { scopes: [...API_KEY_SCOPES], storeIds: [stores.mine.id] })).key;
}, 120_000);
afterAll(() => server?.stop());

interface Route {
  name: string;
  scope: TApiKeyScope;
  method: string;
  /** The path under /merchant/v1 for a store, with an object of `objects` (the store's own, or another's). */
  path: (storeId: string, objects: typeof stores.mine) => string;
  body?: () => unknown;
  /** Status of a key that may, and whether the route names an object (another store's is 404). */
  ok: number;
  object: boolean;
}

let refunds = 0;
let archived = 0;
const ROUTES: Route[] = [
  {
    name: 'list products',
    scope: 'product:read',
    method: 'GET',
    path: (s) => `/stores/${s}/products`,
    ok: 200,
    object: false,
  },
  {
    name: 'get a product',
    scope: 'product:read',
    method: 'GET',
    path: (s, o) => `/stores/${s}/products/${o.productId}`,
    ok: 200,
    object: true,
  },
  {
    name: 'create a product',
    scope: 'product:write',
    method: 'POST',
    path: (s) => `/stores/${s}/products`,
    body: () => ({ name: 'By API', price: 2.5, deliveryMethods: ['manualDelivery'] }),
    ok: 201,
    object: false,
  },
  {
    name: 'update a product',
    scope: 'product:write',
    method: 'PATCH',
    path: (s, o) => `/stores/${s}/products/${o.productId}`,
    body: () => ({ description: 'Changed by API' }),
    ok: 200,
    object: true,
  },
  {
    name: 'archive a product',
    scope: 'product:write',
    method: 'DELETE',
    path: (s, o) => `/stores/${s}/products/${o.spareProductIds[archived]}`,
    ok: 204,
    object: true,
  },
  {
    name: 'import license keys',
    scope: 'product:write',
    method: 'POST',
    path: (s, o) => `/stores/${s}/products/${o.productId}/license-keys`,
    body: () => ({ keys: [`API-${Date.now()}-${Math.random()}`] }),
    ok: 200,
    object: true,
  },
  {
    name: 'list license keys',
    scope: 'product:read',
    method: 'GET',
    path: (s, o) => `/stores/${s}/products/${o.productId}/license-keys`,
    ok: 200,
    object: true,
  },
  {
    name: 'list coupons',
    scope: 'coupon:read',
    method: 'GET',
    path: (s) => `/stores/${s}/coupons`,
    ok: 200,
    object: false,
  },
  {
    name: 'get a coupon',
    scope: 'coupon:read',
    method: 'GET',
    path: (s, o) => `/stores/${s}/coupons/${o.couponId}`,
    ok: 200,
    object: true,
  },
  {
    name: 'create a coupon',
    scope: 'coupon:write',
    method: 'POST',
    path: (s) => `/stores/${s}/coupons`,
    body: () => ({
      code: `API${Date.now()}${Math.floor(Math.random() * 1e6)}`,
      discountType: 'fixed',
      discountValue: 1.5,
    }),
    ok: 201,
    object: false,
  },
  {
    name: 'update a coupon',
    scope: 'coupon:write',
    method: 'PATCH',
    path: (s, o) => `/stores/${s}/coupons/${o.couponId}`,
    body: () => ({ active: true }),
    ok: 200,
    object: true,
  },
  {
    name: 'delete a coupon',
    scope: 'coupon:write',
    method: 'DELETE',
    path: (s, o) => `/stores/${s}/coupons/${o.spareCouponId}`,
    ok: 204,
    object: true,
  },
  {
    name: 'refund an order',
    scope: 'order:refund',
    method: 'POST',
    path: (s, o) => `/stores/${s}/orders/${o.orderIds[refunds]}/refund`,
    ok: 200,
    object: true,
  },
];

describe.each(ROUTES)('$method $name', (route) => {
  const expectRefused = async (response: Response, status: number, code: string) => {
    expect(response.status).toBe(status);
    expect(await response.json()).toMatchObject({ code, error: expect.any(String) });
  };

  it('refuses a key without its scope, for another store, past its ceiling, and another store’s object', async () => {
    const mine = stores.mine;
    await expectRefused(
      await call(undefined, route.method, route.path(mine.id, mine), route.body?.()),
      401,
      'unauthorized',
    );
    await expectRefused(
      await call(keys[`without ${route.scope}`], route.method, route.path(mine.id, mine), route.body?.()),
      403,
      'scope_missing',
    );
    await expectRefused(
      await call(keys.otherStoreOnly, route.method, route.path(mine.id, mine), route.body?.()),
      403,
      'store_forbidden',
    );
    await expectRefused(
      await call(keys.ceiling, route.method, route.path(mine.id, mine), route.body?.()),
      403,
      'permission_missing',
    );
    if (route.object)
      await expectRefused(
        await call(keys.all, route.method, route.path(mine.id, stores.other), route.body?.()),
        404,
        'not_found',
      );
  });

  it(`answers ${route.ok} to a key that may`, async () => {
    const response = await call(keys.all, route.method, route.path(stores.mine.id, stores.mine), route.body?.());
    const text = await response.text();
    expect(response.status, text).toBe(route.ok);
    if (route.scope === 'order:refund') refunds++;
    if (route.name === 'archive a product') archived++;
  });
});

describe('the merchant refund', () => {
  it('refunds as the dashboard does: the order is refunded, and a repeat answers the refunded order again', async () => {
    const orderId = stores.mine.orderIds[2]!;
    const refunded = await call(keys.all, 'POST', `/stores/${stores.mine.id}/orders/${orderId}/refund`);
    expect(refunded.status).toBe(200);
    expect(await refunded.json()).toMatchObject({ id: orderId, status: 'refunded' });
    const seen = await dashboard(owner, 'GET', `/api/dashboard/stores/${stores.mine.id}/orders/${orderId}`);
    expect((await seen.json()).status).toBe('refunded');
    // Refunding is idempotent (a retry after a lost answer must not fail).
    const again = await call(keys.all, 'POST', `/stores/${stores.mine.id}/orders/${orderId}/refund`);
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ id: orderId, status: 'refunded' });
    // The other store's orders were never touched by the 404s above.
    for (const id of stores.other.orderIds) {
      const other = await dashboard(owner, 'GET', `/api/dashboard/stores/${stores.other.id}/orders/${id}`);
      expect((await other.json()).status).toBe('completed');
    }
  });

  it('deletes a coupon with 204 and the dashboard no longer has it', async () => {
    const created = await call(keys.all, 'POST', `/stores/${stores.mine.id}/coupons`, {
      code: 'GONE',
      discountType: 'percent',
      discountValue: 5,
    });
    expect(created.status).toBe(201);
    const { id } = await created.json();
    await expect(call(keys.all, 'DELETE', `/stores/${stores.other.id}/coupons/${id}`)).resolves.toMatchObject({
      status: 404,
    });
    expect((await call(keys.all, 'DELETE', `/stores/${stores.mine.id}/coupons/${id}`)).status).toBe(204);
    expect((await dashboard(owner, 'GET', `/api/dashboard/stores/${stores.mine.id}/coupons/${id}`)).status).toBe(404);
  });
});

describe('products and key stock', () => {
  it('imports 10,000 keys with 1,000 duplicates, fills the order that waited for a key, and lists keys masked with counts', async () => {
    const store = stores.mine.id;
    const created = await call(keys.all, 'POST', `/stores/${store}/products`, {
      name: 'Restocked',
      price: 4,
      deliveryMethods: ['licenseKeys'],
    });
    const product = await created.json();
    expect(created.status, JSON.stringify(product)).toBe(201);
    expect(product.stock).toBe(0);
    // Two orders for the one key in stock: the second one paid waits for a key.
    const seed = await call(keys.all, 'POST', `/stores/${store}/products/${product.id}/license-keys`, {
      keys: [`FIRST-${product.id}`],
    });
    expect(await seed.json()).toEqual({ added: 1, duplicates: 0 });
    const placed = [];
    for (let i = 0; i < 2; i++) {
      const order = await fetch(`${server.url}/api/orders/create`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp() },
        body: JSON.stringify({
          storeId: store,
          cart: [{ productId: product.id, quantity: 1 }],
          email: uniqueEmail('waiting'),
        }),
      });
      expect(order.status).toBe(201);
      placed.push((await order.json()).order.id as string);
    }
    for (const id of placed) expect((await pay(server.url, { orderId: id, amount: 4 })).status).toBe(200);
    const waiting = placed[1]!;
    const before = await dashboard(owner, 'GET', `/api/dashboard/stores/${store}/orders/${waiting}`);
    expect((await before.json()).status).not.toBe('completed');

    const unique = Array.from({ length: 9_000 }, (_, i) => `BULK-${product.id}-${String(i).padStart(5, '0')}`);
    const batch = [...unique, ...unique.slice(0, 1_000)];
    const imported = await call(keys.all, 'POST', `/stores/${store}/products/${product.id}/license-keys`, {
      keys: batch,
    });
    expect(imported.status).toBe(200);
    expect(await imported.json()).toEqual({ added: 9_000, duplicates: 1_000 });

    const after = await (await dashboard(owner, 'GET', `/api/dashboard/stores/${store}/orders/${waiting}`)).json();
    expect(after.status).toBe('completed');
    const events = await (await call(keys.all, 'GET', `/stores/${store}/events?type=order.completed`)).json();
    expect(events.events.some((e: { data: { order: { id: string } } }) => e.data.order.id === waiting)).toBe(true);

    const listed = await call(keys.all, 'GET', `/stores/${store}/products/${product.id}/license-keys?limit=100`);
    const text = await listed.text();
    expect(listed.status).toBe(200);
    const body = JSON.parse(text);
    expect(body.counts).toEqual({ available: 8_999, assigned: 2, disabled: 0 });
    expect(body.licenseKeys).toHaveLength(100);
    expect(body.hasMore).toBe(true);
    expect(text).not.toContain('BULK-');
    // The key list's cursor pages this product's keys with this filter, and no other list.
    const cursor = encodeURIComponent(body.nextCursor);
    const sibling = await (
      await call(keys.all, 'POST', `/stores/${store}/products`, {
        name: 'Sibling',
        price: 1,
        deliveryMethods: ['licenseKeys'],
      })
    ).json();
    const keysOf = (productId: string, query: string) =>
      call(keys.all, 'GET', `/stores/${store}/products/${productId}/license-keys?limit=100${query}&cursor=${cursor}`);
    expect((await keysOf(product.id, '')).status).toBe(200);
    for (const [productId, query] of [
      [product.id, '&status=available'],
      [sibling.id, ''],
    ] as const) {
      const refused = await keysOf(productId, query);
      expect(refused.status, `${productId}${query}`).toBe(400);
      expect((await refused.json()).issues.map((issue: { path: string }) => issue.path)).toEqual(['cursor']);
    }
    const sold = await call(keys.all, 'GET', `/stores/${store}/products/${product.id}/license-keys?status=assigned`);
    const soldBody = await sold.json();
    expect(soldBody.licenseKeys).toHaveLength(2);
    expect(soldBody.licenseKeys[0]).toMatchObject({
      status: 'assigned',
      orderId: expect.stringMatching(/^ORD-\d+$/),
      assignedAt: expect.any(String),
    });
    expect((await (await call(keys.all, 'GET', `/stores/${store}/products/${product.id}`)).json()).stock).toBe(8_999);
    // 10,001 keys in one call is refused, naming the field.
    const tooMany = await call(keys.all, 'POST', `/stores/${store}/products/${product.id}/license-keys`, {
      keys: Array.from({ length: 10_001 }, (_, i) => `X${i}`),
    });
    expect(tooMany.status).toBe(400);
    expect((await tooMany.json()).issues[0].path).toBe('keys');
  }, 60_000);

  it('lists products newest first in keyset pages, filtered by status, and an archived product leaves the list', async () => {
    const store = stores.mine.id;
    const names = ['Page A', 'Page B', 'Page C'];
    const ids: string[] = [];
    for (const name of names)
      ids.push(
        (
          await (
            await call(keys.all, 'POST', `/stores/${store}/products`, {
              name,
              price: 1,
              deliveryMethods: ['manualDelivery'],
              status: 'draft',
            })
          ).json()
        ).id,
      );
    const first = await (await call(keys.all, 'GET', `/stores/${store}/products?status=draft&limit=2`)).json();
    expect(first.products.map((p: { id: string }) => p.id)).toEqual([ids[2], ids[1]]);
    expect(first.hasMore).toBe(true);
    const second = await (
      await call(
        keys.all,
        'GET',
        `/stores/${store}/products?status=draft&limit=2&cursor=${encodeURIComponent(first.nextCursor)}`,
      )
    ).json();
    expect(second.products.map((p: { id: string }) => p.id)).toEqual([ids[0]]);
    expect(second.hasMore).toBe(false);
    // The cursor pages the drafts only: without the filter it is refused, like a forged one.
    const unfiltered = await call(
      keys.all,
      'GET',
      `/stores/${store}/products?limit=2&cursor=${encodeURIComponent(first.nextCursor)}`,
    );
    expect(unfiltered.status).toBe(400);
    expect((await unfiltered.json()).issues.map((issue: { path: string }) => issue.path)).toEqual(['cursor']);
    expect((await call(keys.all, 'DELETE', `/stores/${store}/products/${ids[1]}`)).status).toBe(204);
    const drafts = await (await call(keys.all, 'GET', `/stores/${store}/products?status=draft`)).json();
    expect(drafts.products.map((p: { id: string }) => p.id)).toEqual([ids[2], ids[0]]);
  });
});
