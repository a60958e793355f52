/** Black-box: the merchant orders list and detail, as a merchant's integration reads them. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct } from './support/catalog.js';
import { insertOrders, type SeededOrder } from './support/orders.js';
import { buy, TEST_GATEWAY_SECRET } from './support/payments.js';
import { createKeyFor, createStoreFor, dashboard, merchantGet, registerSeller, type Seller } from './support/seller.js';
import { startServer } from './support/server.js';

let server: Awaited<ReturnType<typeof startServer>>;
let key: string;
let store: { id: string };
let otherStore: { id: string };
let owner: Seller;
let seeded: SeededOrder[];

const STATUSES = ['pending', 'paid', 'processing', 'completed', 'refunded'];
const BASE = Date.UTC(2026, 5, 1, 12, 0, 0);

beforeAll(async () => {
  server = await startServer({ TEST_GATEWAY_SECRET });
  owner = await registerSeller(server.url);
  store = await createStoreFor(owner);
  otherStore = await createStoreFor(owner);
  key = (await createKeyFor(owner, { scopes: ['order:read'], storeIds: [store.id, otherStore.id] })).key;
  // 250 orders, one minute apart, except that every tenth shares its neighbour's time:
  // the id must break those ties or a page edge would skip or repeat an order.
  seeded = await insertOrders(
    server.db.url,
    store.id,
    Array.from({ length: 250 }, (_, i) => ({
      status: STATUSES[i % STATUSES.length],
      createdAt: new Date(BASE + (i - (i % 10 === 1 ? 1 : 0)) * 60_000),
      priceMinor: 1000 + i,
      paidMinor: i % 2 === 0 ? 1000 + i : 0,
    })),
  );
  await insertOrders(
    server.db.url,
    otherStore.id,
    Array.from({ length: 100 }, (_, i) => ({ createdAt: new Date(BASE + i * 60_000 + 30_000) })),
  );
});

afterAll(() => server?.stop());

const list = (query = '', storeId = store.id) => merchantGet(server.url, key, `/stores/${storeId}/orders${query}`);

function newestFirst(orders: SeededOrder[]): string[] {
  return [...orders]
    .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
    .map((order) => order.id);
}

describe('GET /orders paging', () => {
  it('walks 250 orders with limit=100: each exactly once, newest first, and only this store', async () => {
    const seen: string[] = [];
    const pages: Array<{ count: number; hasMore: boolean; nextCursor: string | null; limit: number }> = [];
    let cursor: string | null = null;
    do {
      const response = await list(`?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(response.status).toBe(200);
      const body = await response.json();
      pages.push({ count: body.orders.length, hasMore: body.hasMore, nextCursor: body.nextCursor, limit: body.limit });
      for (const order of body.orders) {
        expect(order.storeId).toBe(store.id);
        seen.push(order.id);
      }
      cursor = body.nextCursor;
    } while (cursor);
    expect(pages.map((page) => [page.count, page.hasMore, page.limit])).toEqual([
      [100, true, 100],
      [100, true, 100],
      [50, false, 100],
    ]);
    expect(pages[2]!.nextCursor).toBeNull();
    expect(seen).toEqual(newestFirst(seeded));
    expect(new Set(seen).size).toBe(250);
  });

  it('uses 50 when no limit is given', async () => {
    const body = await (await list()).json();
    expect(body.limit).toBe(50);
    expect(body.orders).toHaveLength(50);
    expect(body.hasMore).toBe(true);
  });

  it('filters by exact status, and by createdAt from/to inclusive', async () => {
    const paid = await (await list('?status=paid&limit=100')).json();
    expect(paid.orders).toHaveLength(50);
    expect(paid.orders.every((order: { status: string }) => order.status === 'paid')).toBe(true);

    const from = new Date(BASE + 100 * 60_000).toISOString();
    const to = new Date(BASE + 109 * 60_000).toISOString();
    const window = await (await list(`?from=${from}&to=${to}&limit=100`)).json();
    const expected = seeded.filter(
      (o) => o.createdAt.getTime() >= Date.parse(from) && o.createdAt.getTime() <= Date.parse(to),
    );
    expect(window.orders.map((o: { id: string }) => o.id)).toEqual(newestFirst(expected));
    expect(expected.length).toBeGreaterThanOrEqual(10);
  });

  it('pages a filtered list with its own cursor', async () => {
    const first = await (await list('?status=completed&limit=30')).json();
    const second = await (
      await list(`?status=completed&limit=30&cursor=${encodeURIComponent(first.nextCursor)}`)
    ).json();
    expect(first.orders).toHaveLength(30);
    expect(second.orders).toHaveLength(20);
    expect(second.hasMore).toBe(false);
    const ids = [...first.orders, ...second.orders].map((o: { id: string }) => o.id);
    expect(new Set(ids).size).toBe(50);
  });

  it.each([
    ['limit=0', '?limit=0', 'limit'],
    ['limit=101', '?limit=101', 'limit'],
    ['limit=abc', '?limit=abc', 'limit'],
    ['limit=1.5', '?limit=1.5', 'limit'],
    ['status=bogus', '?status=bogus', 'status'],
    ['a bad from', '?from=yesterday', 'from'],
    ['from after to', `?from=${new Date(BASE + 60_000).toISOString()}&to=${new Date(BASE).toISOString()}`, 'from'],
    ['a tampered cursor', '?cursor=TAMPERED', 'cursor'],
    ['an unknown parameter', '?sort=asc', 'sort'],
  ])('refuses %s with 400', async (_name, query, field) => {
    const response = await list(query);
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.code).toBe('validation_failed');
    expect(body.issues.map((issue: { path: string }) => issue.path)).toContain(field);
  });

  it("refuses a cursor made with another filter or for another store's orders", async () => {
    const paid = await (await list('?status=paid&limit=10')).json();
    const fromOther = await (await list('?limit=10', otherStore.id)).json();
    for (const [query, storeId] of [
      [`?status=pending&cursor=${encodeURIComponent(paid.nextCursor)}`, store.id],
      [`?cursor=${encodeURIComponent(paid.nextCursor)}`, store.id],
      [`?status=paid&cursor=${encodeURIComponent(paid.nextCursor)}`, otherStore.id],
      [`?cursor=${encodeURIComponent(fromOther.nextCursor)}`, store.id],
    ] as const) {
      const response = await list(query, storeId);
      expect(response.status, query).toBe(400);
      const body = await response.json();
      expect(body.code).toBe('validation_failed');
      expect(body.issues.map((issue: { path: string }) => issue.path)).toEqual(['cursor']);
    }
    // With its own filter and store, it pages on.
    expect((await list(`?status=paid&limit=10&cursor=${encodeURIComponent(paid.nextCursor)}`)).status).toBe(200);
  });

  it('refuses a cursor whose position was edited, keeping its signature', async () => {
    const { nextCursor } = await (await list('?limit=10')).json();
    const [body, signature] = (nextCursor as string).split('.');
    const [us, id] = JSON.parse(Buffer.from(body!, 'base64url').toString()) as [string, string];
    const forged = `${Buffer.from(JSON.stringify([String(BigInt(us) + 1n), id])).toString('base64url')}.${signature}`;
    const response = await list(`?cursor=${encodeURIComponent(forged)}`);
    expect(response.status).toBe(400);
  });
});

describe('GET /orders/{orderId}', () => {
  it('reads an order by cuid and by ORD-<n>, with every documented field', async () => {
    const order = seeded[4]!;
    const byId = await (await merchantGet(server.url, key, `/stores/${store.id}/orders/${order.id}`)).json();
    const byNumber = await (
      await merchantGet(server.url, key, `/stores/${store.id}/orders/ORD-${order.number}`)
    ).json();
    expect(byNumber).toEqual(byId);
    expect(byId).toEqual({
      id: order.id,
      orderId: `ORD-${order.number}`,
      storeId: store.id,
      livemode: true,
      status: 'refunded',
      productName: 'Test Product',
      price: 10.04,
      paid: 10.04,
      discount: 0,
      couponCode: null,
      paymentMethod: '',
      customerEmail: expect.stringMatching(/@example\.test$/),
      country: 'XX',
      keyCount: 0,
      subscriptionId: null,
      billingReason: 'purchase',
      // Seeded raw with tax off: no subtotal written, no tax, no invoice.
      subtotal: 0,
      taxAmount: 0,
      taxRate: null,
      taxCountry: null,
      reverseCharge: false,
      invoiceNumber: null,
      creditNoteNumber: null,
      createdAt: order.createdAt.toISOString(),
      completedAt: null,
      updatedAt: order.createdAt.toISOString(),
      note: '',
      customFieldResponses: [],
      // A line of a product since deleted (the seed names none): its name and price stay, nothing delivers.
      lines: [
        {
          id: expect.any(String),
          productId: null,
          productName: 'Test Product',
          quantity: 1,
          unitPrice: 10.04,
          plan: null,
          deliveryMethods: [],
          delivered: { licenseKeys: [], downloadFiles: [], deliveryInstructions: null, manualDelivery: null },
        },
      ],
      orderUrl: expect.stringMatching(new RegExp(`/orders/${order.id}\\?token=[0-9a-f]{64}$`)),
    });
  });

  it('shows the seller note, custom field answers, several lines and zero-decimal currencies', async () => {
    const [order] = await insertOrders(server.db.url, store.id, [
      {
        currency: 'JPY',
        priceMinor: 1500,
        note: 'Gift wrap\nplease',
        customFieldResponses: [{ name: 'Discord', value: 'buyer#1234' }],
        lines: [
          { productName: 'Game Key', quantity: 1, unitPriceMinor: 1000 },
          { productName: 'Soundtrack', quantity: 1, unitPriceMinor: 300 },
          { productName: 'Artbook', quantity: 1, unitPriceMinor: 200 },
        ],
      },
    ]);
    const body = await (await merchantGet(server.url, key, `/stores/${store.id}/orders/${order!.id}`)).json();
    expect(body).toMatchObject({
      productName: 'Game Key +2 more',
      price: 1500,
      note: 'Gift wrap\nplease',
      customFieldResponses: [{ name: 'Discord', value: 'buyer#1234' }],
    });
  });

  it('shows the discount and the code of the coupon that made it, and the lines sum to price plus discount', async () => {
    // A store of its own, so the lists above keep their counts.
    const shop = await createStoreFor(owner);
    const shopKey = (await createKeyFor(owner, { scopes: ['order:read'], storeIds: [shop.id] })).key;
    const product = await createProduct(owner, shop.id, {
      name: 'Course',
      price: 23.5,
      deliveryMethods: ['deliveryInstructions'],
      deliveryInstructions: 'Watch it.',
    });
    const coupon = await dashboard(owner, 'POST', `/api/dashboard/stores/${shop.id}/coupons`, {
      code: 'Launch20',
      discountType: 'percent',
      discountValue: 20,
    });
    expect(coupon.status, await coupon.clone().text()).toBe(201);
    const bought = await buy(server.url, { storeId: shop.id, productId: product.id, quantity: 3, coupon: 'launch20' });

    const body = await (await merchantGet(server.url, shopKey, `/stores/${shop.id}/orders/${bought.orderId}`)).json();
    expect(body).toMatchObject({
      status: 'completed',
      price: 56.4,
      paid: 56.4,
      discount: 14.1,
      couponCode: 'Launch20',
    });
    expect(body.lines).toMatchObject([{ quantity: 3, unitPrice: 23.5 }]);
  });

  it('answers 404 for an unknown id or number', async () => {
    for (const ref of ['zzzzzzzzzzzzzzzzzzzzzzzz', 'ORD-999999999']) {
      const response = await merchantGet(server.url, key, `/stores/${store.id}/orders/${ref}`);
      expect(response.status).toBe(404);
      expect((await response.json()).code).toBe('not_found');
    }
  });
});

describe('what never leaves', () => {
  it('no buyer IP, user-agent, checkout token or key string in list or detail', async () => {
    const [order] = await insertOrders(server.db.url, store.id, [
      { buyerIp: '203.0.113.250', userAgent: 'SecretAgent/9.9' },
    ]);
    const texts = [
      await (await list('?limit=100')).text(),
      await (await merchantGet(server.url, key, `/stores/${store.id}/orders/${order!.id}`)).text(),
    ];
    for (const text of texts) {
      expect(text).not.toContain('203.0.113.250');
      expect(text).not.toContain('SecretAgent');
      expect(text).not.toMatch(/buyerIp|userAgent|checkoutToken|buyer_ip|user_agent/);
    }
  });
});
