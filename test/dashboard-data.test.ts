/**
 * Black-box: the dashboard's data routes for issue 28 (Home figures, customers, an order's
 * timeline), over HTTP to a started server: who may read them (a session, with viewOrders) and
 * what a seller sees.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertOrders } from './support/orders.js';
import { addStaff, createStoreFor, dashboard, registerSeller, type Seller } from './support/seller.js';
import { startServer } from './support/server.js';

let server: Awaited<ReturnType<typeof startServer>>;
let owner: Seller;
let store: { id: string };
let orderRef: string;

beforeAll(async () => {
  server = await startServer();
  owner = await registerSeller(server.url);
  store = await createStoreFor(owner);
  const [order] = await insertOrders(server.db.url, store.id, [{ status: 'paid', priceMinor: 1250 }]);
  orderRef = `ORD-${order!.number}`;
});
afterAll(() => server?.stop());

const routes = () => [
  `/api/dashboard/stores/${store.id}/stats`,
  `/api/dashboard/stores/${store.id}/customers`,
  `/api/dashboard/stores/${store.id}/orders/${orderRef}/timeline`,
];

describe('dashboard data routes', () => {
  it('are 401 without a session and 403 for a member without viewOrders', async () => {
    const staff = await registerSeller(server.url);
    await addStaff(owner, store.id, staff, ['manageProducts']);
    for (const path of routes()) {
      const anonymous = await fetch(`${server.url}${path}`);
      expect(anonymous.status, path).toBe(401);
      const refused = await dashboard(staff, 'GET', path);
      expect(refused.status, path).toBe(403);
      expect((await refused.json()).code).toBe('permission_missing');
    }
  });

  it("answer a member with viewOrders: today's figures, the customers and the order's timeline", async () => {
    const staff = await registerSeller(server.url);
    await addStaff(owner, store.id, staff, ['viewOrders']);
    const [statsPath, customersPath, timelinePath] = routes() as [string, string, string];
    const [stats, customers, timeline] = await Promise.all([
      dashboard(staff, 'GET', statsPath),
      dashboard(staff, 'GET', customersPath),
      dashboard(staff, 'GET', timelinePath),
    ]);

    expect(stats.status).toBe(200);
    const figures = await stats.json();
    const today = new Date().toISOString().slice(0, 10);
    expect(figures).toMatchObject({ currency: 'USD', today: { revenue: 12.5, orders: 1 } });
    expect(figures.daily).toHaveLength(30);
    expect(figures.daily.at(-1)).toEqual({ date: today, revenue: 12.5, orders: 1 });

    expect(customers.status).toBe(200);
    // The paid order's buyer never signed in to the customer area: a customer all the same.
    expect(await customers.json()).toEqual({
      customers: [
        {
          id: null,
          livemode: true,
          email: expect.stringMatching(/@example\.test$/),
          createdAt: expect.any(String),
          orders: 1,
          spent: 12.5,
          lastOrderAt: expect.any(String),
        },
      ],
      limit: 50,
      hasMore: false,
      nextCursor: null,
    });

    expect(timeline.status).toBe(200);
    const { orderId, events } = await timeline.json();
    expect(orderId).toBe(orderRef);
    expect(events.map((event: { type: string }) => event.type)).toEqual(['created']);
  });

  it('is 404 for an order of another store, 400 for a bad query', async () => {
    const elsewhere = await createStoreFor(owner, 'Elsewhere');
    const other = await dashboard(owner, 'GET', `/api/dashboard/stores/${elsewhere.id}/orders/${orderRef}/timeline`);
    expect(other.status).toBe(404);
    const bad = await dashboard(owner, 'GET', `/api/dashboard/stores/${store.id}/customers?limit=0`);
    expect(bad.status).toBe(400);
    expect((await bad.json()).code).toBe('validation_failed');
  });
});
