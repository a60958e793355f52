/**
 * Black-box: the merchant API's coupons and refunds (DESIGN §7, "Merchant API, more resources"),
 * one table over every route: each scope missing, a store not in the key, the ceiling removed, an
 * object of another store, and a key that may: the same answers as the dashboard's, through the
 * same services.
 */
import { API_KEY_SCOPES, type TApiKeyScope } from '@svc/schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct, importKeys } from './support/catalog.js';
import { pay, TEST_GATEWAY_SECRET } from './support/payments.js';
import { addStaff, clientIp, createKeyFor, createStoreFor, dashboard, registerSeller, uniqueEmail, type Seller } from './support/seller.js';
import { startServer } from './support/server.js';

let server: Awaited<ReturnType<typeof startServer>>;
let owner: Seller;
const stores: Record<'mine' | 'other', { id: string; couponId: string; orderIds: string[]; productId: string }> = {} as never;
const keys: Record<string, string> = {};

async function paidOrder(storeId: string, productId: string): Promise<string> {
  const created = await fetch(`${server.url}/api/orders/create`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp() },
    body: JSON.stringify({ storeId, cart: [{ productId, quantity: 1 }], email: uniqueEmail('buyer') }),
  });
  expect(created.status).toBe(201);
  const { order } = await created.json();
  expect((await pay(server.url, { orderId: order.id, amount: 4 })).status).toBe(200);
  return order.id;
}

async function seedStore(): Promise<{ id: string; couponId: string; orderIds: string[]; productId: string }> {
  const store = await createStoreFor(owner);
  const product = await createProduct(owner, store.id, { name: 'Refundable', price: 4, deliveryMethods: ['licenseKeys'] });
  await importKeys(owner, store.id, product.id, Array.from({ length: 8 }, (_, i) => `REFUND-${store.id}-${i}`));
  const coupon = await dashboard(owner, 'POST', `/api/dashboard/stores/${store.id}/coupons`, { code: 'TEN', discountType: 'percent', discountValue: 10 });
  expect(coupon.status).toBe(201);
  const orderIds = [];
  for (let i = 0; i < 3; i++) orderIds.push(await paidOrder(store.id, product.id));
  return { id: store.id, couponId: (await coupon.json()).id, orderIds, productId: product.id };
}

function call(key: string | undefined, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${server.url}/api/merchant/v1${path}`, {
    method,
    headers: { accept: 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

beforeAll(async () => {
  server = await startServer({ TEST_GATEWAY_SECRET });
  owner = await registerSeller(server.url);
  stores.mine = await seedStore();
  stores.other = await seedStore();
  keys.all = (await createKeyFor(owner, { scopes: [...API_KEY_SCOPES], storeIds: [stores.mine.id, stores.other.id] })).key;
  keys.otherStoreOnly = (await createKeyFor(owner, { scopes: [...API_KEY_SCOPES], storeIds: [stores.other.id] })).key;
  for (const scope of ['coupon:read', 'coupon:write', 'order:refund'] as const) {
    keys[`without ${scope}`] = (await createKeyFor(owner, { scopes: API_KEY_SCOPES.filter((s) => s !== scope), storeIds: [stores.mine.id] })).key;
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
const ROUTES: Route[] = [
  { name: 'list coupons', scope: 'coupon:read', method: 'GET', path: (s) => `/stores/${s}/coupons`, ok: 200, object: false },
  { name: 'get a coupon', scope: 'coupon:read', method: 'GET', path: (s, o) => `/stores/${s}/coupons/${o.couponId}`, ok: 200, object: true },
  { name: 'create a coupon', scope: 'coupon:write', method: 'POST', path: (s) => `/stores/${s}/coupons`, body: () => ({ code: `API${Date.now()}${Math.floor(Math.random() * 1e6)}`, discountType: 'fixed', discountValue: 1.5 }), ok: 201, object: false },
  { name: 'update a coupon', scope: 'coupon:write', method: 'PATCH', path: (s, o) => `/stores/${s}/coupons/${o.couponId}`, body: () => ({ active: true }), ok: 200, object: true },
  { name: 'refund an order', scope: 'order:refund', method: 'POST', path: (s, o) => `/stores/${s}/orders/${o.orderIds[refunds]}/refund`, ok: 200, object: true },
];

describe.each(ROUTES)('$method $name', (route) => {
  const expectRefused = async (response: Response, status: number, code: string) => {
    expect(response.status).toBe(status);
    expect(await response.json()).toMatchObject({ code, error: expect.any(String) });
  };

  it('refuses a key without its scope, for another store, past its ceiling, and another store’s object', async () => {
    const mine = stores.mine;
    await expectRefused(await call(undefined, route.method, route.path(mine.id, mine), route.body?.()), 401, 'unauthorized');
    await expectRefused(await call(keys[`without ${route.scope}`], route.method, route.path(mine.id, mine), route.body?.()), 403, 'scope_missing');
    await expectRefused(await call(keys.otherStoreOnly, route.method, route.path(mine.id, mine), route.body?.()), 403, 'store_forbidden');
    await expectRefused(await call(keys.ceiling, route.method, route.path(mine.id, mine), route.body?.()), 403, 'permission_missing');
    if (route.object) await expectRefused(await call(keys.all, route.method, route.path(mine.id, stores.other), route.body?.()), 404, 'not_found');
  });

  it(`answers ${route.ok} to a key that may`, async () => {
    const response = await call(keys.all, route.method, route.path(stores.mine.id, stores.mine), route.body?.());
    const text = await response.text();
    expect(response.status, text).toBe(route.ok);
    if (route.scope === 'order:refund') refunds++;
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
    const created = await call(keys.all, 'POST', `/stores/${stores.mine.id}/coupons`, { code: 'GONE', discountType: 'percent', discountValue: 5 });
    expect(created.status).toBe(201);
    const { id } = await created.json();
    await expect(call(keys.all, 'DELETE', `/stores/${stores.other.id}/coupons/${id}`)).resolves.toMatchObject({ status: 404 });
    expect((await call(keys.all, 'DELETE', `/stores/${stores.mine.id}/coupons/${id}`)).status).toBe(204);
    expect((await dashboard(owner, 'GET', `/api/dashboard/stores/${stores.mine.id}/coupons/${id}`)).status).toBe(404);
  });
});
