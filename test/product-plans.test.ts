/**
 * Black-box, on a started server: plans on products through the merchant API (create, update,
 * read, validation), the public catalog's plans, and a recurring product's cart and checkout
 * (recurring_alone, a plan of another product, seats 0 and 101), with `billingReason` and
 * `subscriptionId` on the orders the merchant API answers (docs/decisions.md, "Plans").
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientIp, createKeyFor, createStoreFor, registerSeller } from './support/seller.js';
import { startServer } from './support/server.js';

let server: Awaited<ReturnType<typeof startServer>>;
let store: { id: string; subdomain: string };
let key: string;

beforeAll(async () => {
  server = await startServer();
  const seller = await registerSeller(server.url);
  store = await createStoreFor(seller);
  key = (await createKeyFor(seller, { scopes: ['product:read', 'product:write', 'order:read'], storeIds: [store.id] }))
    .key;
});
afterAll(() => server?.stop());

function merchant(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${server.url}/api/merchant/v1/stores/${store.id}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      'x-forwarded-for': clientIp(),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

function checkout(cart: unknown): Promise<Response> {
  return fetch(`${server.url}/api/v1/checkout`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp() },
    body: JSON.stringify({ shopId: store.subdomain, cart, email: `b-${randomBytes(3).toString('hex')}@example.test` }),
  });
}

const PLANS = [
  { interval: 'month', price: 9, trialDays: 7 },
  { interval: 'year', intervalCount: 1, price: 90 },
];

async function recurring(name = 'Editor Pro', deliveryMethods = ['manualDelivery']) {
  const response = await merchant('POST', '/products', { name, deliveryMethods, plans: PLANS });
  expect(response.status, await response.clone().text()).toBe(201);
  return (await response.json()) as {
    id: string;
    price: number;
    plans: Array<{ id: string } & Record<string, unknown>>;
  };
}

describe('plans through the merchant API', () => {
  it('creates, reads and updates a recurring product; archived plans stay readable', async () => {
    const product = await recurring();
    expect(product.price).toBe(9);
    expect(product.plans).toEqual([
      { id: expect.any(String), interval: 'month', intervalCount: 1, price: 9, trialDays: 7, active: true },
      { id: expect.any(String), interval: 'year', intervalCount: 1, price: 90, trialDays: 0, active: true },
    ]);
    const [monthly, yearly] = product.plans;
    const patched = await merchant('PATCH', `/products/${product.id}`, {
      plans: [{ ...yearly, price: 80 }],
    });
    expect(patched.status, await patched.clone().text()).toBe(200);
    const read = await (await merchant('GET', `/products/${product.id}`)).json();
    expect(read.price).toBe(80);
    expect(read.plans).toEqual([
      { ...yearly, price: 80 },
      { ...monthly, active: false },
    ]);
    // The public catalog offers the active plan only.
    const catalog = await (await fetch(`${server.url}/api/stores/by-subdomain/${store.subdomain}/products`)).json();
    const shown = catalog.products.find((p: { id: string }) => p.id === product.id);
    expect(shown.plans).toEqual([{ ...yearly, price: 80 }]);
    // One-time products are unchanged but for `plans: []`.
    const once = await merchant('POST', '/products', { name: 'Once', price: 5, deliveryMethods: ['manualDelivery'] });
    expect(await once.json()).toMatchObject({ price: 5, plans: [] });
  });

  it.each([
    [
      'a yearly plan every 2 years',
      { plans: [{ interval: 'year', intervalCount: 2, price: 90 }] },
      'plans.0.intervalCount',
    ],
    ['13 months', { plans: [{ interval: 'month', intervalCount: 13, price: 9 }] }, 'plans.0.intervalCount'],
    ['a trial of 366 days', { plans: [{ interval: 'month', price: 9, trialDays: 366 }] }, 'plans.0.trialDays'],
    ['7 plans', { plans: Array.from({ length: 7 }, () => ({ interval: 'week', price: 1 })) }, 'plans'],
    ['no active plan', { plans: [{ interval: 'week', price: 1, active: false }] }, 'plans'],
    [
      'a recurring license-key product with a validity',
      { deliveryMethods: ['licenseKeys'], licenseValidityDays: 30, plans: [{ interval: 'month', price: 9 }] },
      'licenseValidityDays',
    ],
    ['no price and no plans', { plans: [] }, 'price'],
  ])('refuses %s with 400 at the field', async (_, body, path) => {
    const response = await merchant('POST', '/products', { name: 'Bad', deliveryMethods: ['manualDelivery'], ...body });
    expect(response.status).toBe(400);
    const error = await response.json();
    expect(error.code).toBe('validation_failed');
    expect(error.issues.map((issue: { path: string }) => issue.path)).toContain(path);
  });

  it('refuses a plan of another product on update (400) and a switch to one-time once sold (409)', async () => {
    const product = await recurring();
    const other = await recurring('Other');
    const foreign = await merchant('PATCH', `/products/${product.id}`, { plans: [other.plans[0]] });
    expect(foreign.status).toBe(400);
    expect((await foreign.json()).issues).toEqual([
      { path: 'plans.0.id', message: 'No plan of this product has this id.' },
    ]);
    expect((await checkout([{ productId: product.id, quantity: 1 }])).status).toBe(200);
    const switched = await merchant('PATCH', `/products/${product.id}`, { plans: [], price: 9 });
    expect(switched.status).toBe(409);
    expect((await switched.json()).code).toBe('conflict');
  });
});

describe('a recurring checkout', () => {
  it('orders the plan at its price times the seats, billingReason subscription_create', async () => {
    const product = await recurring();
    const response = await checkout([{ productId: product.id, planId: product.plans[1]!.id, quantity: 3 }]);
    expect(response.status, await response.clone().text()).toBe(200);
    const { orderId } = await response.json();
    const order = await (await merchant('GET', `/orders/${orderId}`)).json();
    expect(order).toMatchObject({ price: 270, billingReason: 'subscription_create' });
    // The subscription it starts is named on it from the checkout on.
    expect(order.subscriptionId).toMatch(/^[a-z0-9]{24,32}$/);
    expect(order.lines[0]).toMatchObject({
      quantity: 3,
      unitPrice: 90,
      plan: { id: product.plans[1]!.id, interval: 'year', intervalCount: 1, trialDays: 0 },
    });
    const once = await merchant('POST', '/products', { name: 'Once', price: 5, deliveryMethods: ['manualDelivery'] });
    const bought = await checkout([{ productId: (await once.json()).id, quantity: 1 }]);
    const plain = await (await merchant('GET', `/orders/${(await bought.json()).orderId}`)).json();
    expect(plain).toMatchObject({ subscriptionId: null, billingReason: 'purchase' });
    expect(plain.lines[0].plan).toBeNull();
    const list = await (await merchant('GET', `/orders?limit=100`)).json();
    const reasons = new Map(list.orders.map((o: { id: string; billingReason: string }) => [o.id, o.billingReason]));
    expect(reasons.get(orderId)).toBe('subscription_create');
    expect(reasons.get(plain.id)).toBe('purchase');
  });

  it('refuses recurring_alone, a plan of another product, and 0 or 101 seats', async () => {
    const product = await recurring();
    const other = await recurring('Other');
    const alone = await checkout([
      { productId: product.id, quantity: 1 },
      { productId: other.id, quantity: 1 },
    ]);
    expect(alone.status).toBe(400);
    expect((await alone.json()).code).toBe('recurring_alone');
    const foreign = await checkout([{ productId: product.id, planId: other.plans[0]!.id, quantity: 1 }]);
    expect(foreign.status).toBe(400);
    expect(await foreign.json()).toMatchObject({
      code: 'validation_failed',
      issues: [{ path: 'cart.0.planId', message: "This plan is not one of the product's plans." }],
    });
    for (const quantity of [0, 101]) {
      const seats = await checkout([{ productId: product.id, quantity }]);
      expect(seats.status).toBe(400);
      const body = await seats.json();
      expect(body.code).toBe('validation_failed');
      expect(body.issues[0].path).toBe('cart.0.quantity');
    }
  });
});
