/**
 * Black-box: the dashboard's orders list takes `q` (issue 28, item 4), one order (`ORD-<n>` or its
 * id) or one buyer (e-mail, any case), with the other filters and paging; the merchant list does
 * not (the interface fixes it), and a bad `q` is a 400 with our error body.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct, importKeys } from './support/catalog.js';
import { buy, TEST_GATEWAY_SECRET } from './support/payments.js';
import {
  addStaff,
  clientIp,
  createKeyFor,
  createStoreFor,
  dashboard,
  merchantGet,
  registerSeller,
  uniqueEmail,
  type Seller,
} from './support/seller.js';
import { startServer } from './support/server.js';

let server: Awaited<ReturnType<typeof startServer>>;
let owner: Seller;
let storeId: string;
let productId: string;

beforeAll(async () => {
  server = await startServer({ TEST_GATEWAY_SECRET });
  owner = await registerSeller(server.url);
  storeId = (await createStoreFor(owner)).id;
  productId = (await createProduct(owner, storeId, { name: 'Filter Game', price: 5, deliveryMethods: ['licenseKeys'] }))
    .id;
  await importKeys(
    owner,
    storeId,
    productId,
    Array.from({ length: 6 }, (_, i) => `FILTER-${storeId}-${i}`),
  );
});
afterAll(() => server?.stop());

/** An order by `email`: bought and paid, or left pending. */
async function order(email: string, paid: boolean): Promise<{ id: string; orderId: string }> {
  if (paid) return buy(server.url, { storeId, productId, email });
  const created = await fetch(`${server.url}/api/orders/create`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp() },
    body: JSON.stringify({ storeId, cart: [{ productId, quantity: 1 }], email }),
  });
  expect(created.status).toBe(201);
  return (await created.json()).order;
}

async function list(seller: Seller, query: Record<string, string>) {
  const response = await dashboard(
    seller,
    'GET',
    `/api/dashboard/stores/${storeId}/orders?${new URLSearchParams(query).toString()}`,
  );
  return { status: response.status, body: await response.json() };
}

const ids = (body: { orders: Array<{ id: string }> }) => body.orders.map((o) => o.id);

describe('GET /api/dashboard/stores/{storeId}/orders?q=', () => {
  it("finds one order by ORD-<n> or id, and one buyer's orders by e-mail, with status and paging", async () => {
    const buyer = uniqueEmail('buyer');
    const first = await order(buyer, true);
    const other = await order(uniqueEmail('other'), true);
    const second = await order(buyer, false);

    expect(ids((await list(owner, { q: first.orderId })).body)).toEqual([first.id]);
    expect(ids((await list(owner, { q: first.orderId.toLowerCase() })).body)).toEqual([first.id]);
    expect(ids((await list(owner, { q: other.id })).body)).toEqual([other.id]);
    expect(ids((await list(owner, { q: buyer.toUpperCase() })).body)).toEqual([second.id, first.id]);
    expect(ids((await list(owner, { q: buyer, status: 'completed' })).body)).toEqual([first.id]);
    expect(ids((await list(owner, { q: 'Filter Game' })).body)).toEqual([]);

    const page = await list(owner, { q: buyer, limit: '1' });
    expect(page.body).toMatchObject({ hasMore: true, nextCursor: expect.any(String) });
    const next = await list(owner, { q: buyer, limit: '1', cursor: page.body.nextCursor });
    expect(ids(next.body)).toEqual([first.id]);
    expect(next.body).toMatchObject({ hasMore: false, nextCursor: null });
    // The cursor belongs to that buyer's list.
    const foreign = await list(owner, { limit: '1', cursor: page.body.nextCursor });
    expect(foreign.status).toBe(400);
    expect(foreign.body.code).toBe('validation_failed');

    // A member with viewOrders reads the same.
    const viewer = await registerSeller(server.url);
    await addStaff(owner, storeId, viewer, ['viewOrders']);
    expect(ids((await list(viewer, { q: first.orderId })).body)).toEqual([first.id]);
  });

  it('answers a bad q with 400 validation_failed; the merchant list takes no q', async () => {
    for (const q of ['   ', 'x'.repeat(321)]) {
      const bad = await list(owner, { q });
      expect(bad.status, JSON.stringify(q)).toBe(400);
      expect(bad.body.code).toBe('validation_failed');
    }
    const { key } = await createKeyFor(owner, { scopes: ['order:read'], storeIds: [storeId] });
    const merchant = await merchantGet(server.url, key, `/stores/${storeId}/orders?q=ORD-1`);
    expect(merchant.status).toBe(400);
    expect((await merchant.json()).code).toBe('validation_failed');
  });
});
