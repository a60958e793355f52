/**
 * In-process, over real HTTP: what a checkout (`POST /api/v1/checkout`) costs the database. The
 * benchmark's floor (bench/floors/checkout-floor.mjs) reads the store, the cart's products and
 * the blacklist, then writes the order, its lines and its order.created event in one transaction;
 * the service does the same in exactly four statements, the last one drawing the order's number
 * itself (orders.repo.ts `insertNewOrder`), and keeps the transaction that a coupon claim or an
 * Idempotency-Key needs around its writes. Counted at the driver, as in
 * storefront-304-queries.test.ts: every statement goes through `pg.Client#query`.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct, importKeys } from './support/catalog.js';
import { startInProcess, type InProcessApp } from './support/in-process.js';
import { createKeyFor, createStoreFor, dashboard, merchantGet, registerSeller } from './support/seller.js';

let app: InProcessApp;
let store: { id: string };
let manual: { id: string };
let keyed: { id: string };
let apiKey: string;

/** The statements sent while `recording` is set (their SQL text, for the failure message). */
let recording = false;
const statements: string[] = [];
// Kept to call with the client as `this` (apply), and to put back after.
// eslint-disable-next-line @typescript-eslint/unbound-method
const originalQuery = pg.Client.prototype.query;

function textOf(config: unknown): string {
  if (typeof config === 'string') return config;
  if (config && typeof config === 'object' && 'text' in config) return String(config.text);
  return String(config);
}

beforeAll(async () => {
  // Every pooled connection is a pg.Client: the ORM's (knex) and db/prepared.ts's alike.
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    if (recording) statements.push(textOf(args[0]).replace(/\s+/g, ' ').trim());
    return (originalQuery as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof pg.Client.prototype.query;
  app = await startInProcess();
  const seller = await registerSeller(app.url);
  store = await createStoreFor(seller, 'Counted Shop');
  manual = await createProduct(seller, store.id, { name: 'Counted e-book', price: 9.99 });
  keyed = await createProduct(seller, store.id, { name: 'Counted key', price: 5, deliveryMethods: ['licenseKeys'] });
  await importKeys(seller, store.id, keyed.id, ['COUNTED-1', 'COUNTED-2']);
  const coupon = await dashboard(seller, 'POST', `/api/dashboard/stores/${store.id}/coupons`, {
    code: 'COUNTED10',
    discountType: 'percent',
    discountValue: 10,
  });
  expect(coupon.status).toBe(201);
  apiKey = (await createKeyFor(seller, { scopes: ['order:read', 'event:read'], storeIds: [store.id] })).key;
});
afterAll(async () => {
  pg.Client.prototype.query = originalQuery;
  await app?.close();
});

/** The statements one checkout sends, and its answer. */
async function checkout(body: Record<string, unknown>, headers: Record<string, string> = {}) {
  statements.length = 0;
  recording = true;
  try {
    const response = await fetch(`${app.url}/api/v1/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ shopId: store.id, email: 'buyer@example.test', ...body }),
    });
    const answer = (await response.json()) as { orderId: string; url: string };
    return { status: response.status, answer, statements: [...statements] };
  } finally {
    recording = false;
  }
}

/** The statements as the failure message lists them, one a line. */
function listed(sent: string[]): string {
  return sent.map((text) => text.slice(0, 160)).join('\n');
}

const STORE = expect.stringMatching(
  /^select id, currency, banned, settings->'tax' as tax from store where id = \$1 or subdomain = \$2/,
);
const PRODUCTS_WITH_STOCK = expect.stringMatching(
  /^select p\.id, .*from license_key k .*from product p where p\.store_id = \$1/,
);
const BLACKLIST = expect.stringMatching(/^select distinct b\.kind from blacklist_entry b/);
/** The one write: the number from its sequence, the order, its lines and its event. */
const INSERT = expect.stringMatching(
  /^with next_number as \( select nextval\('order_number_seq'\).*insert into "order" .*insert into order_line .*insert into event /,
);

describe('a checkout', () => {
  it('runs four statements: the store, the products with their stock, the blacklist, and one insert that draws the number', async () => {
    for (const cart of [[{ productId: manual.id, quantity: 2 }], [{ productId: keyed.id, quantity: 1 }]]) {
      const { status, statements: sent } = await checkout({ cart });
      expect(status).toBe(200);
      expect(sent, listed(sent)).toEqual([STORE, PRODUCTS_WITH_STOCK, BLACKLIST, INSERT]);
    }
  });

  it('gives the order.created event the number the order was given', async () => {
    const { status, answer } = await checkout({ cart: [{ productId: manual.id, quantity: 1 }] });
    expect(status).toBe(200);
    const order = await merchantGet(app.url, apiKey, `/stores/${store.id}/orders/${answer.orderId}`);
    expect(order.status).toBe(200);
    const { orderId } = (await order.json()) as { orderId: string };
    expect(orderId).toMatch(/^ORD-\d+$/);
    const events = await merchantGet(app.url, apiKey, `/stores/${store.id}/events?type=order.created&limit=100`);
    expect(events.status).toBe(200);
    const created = (
      (await events.json()) as { events: Array<{ data: { order: { id: string; orderId: string } } }> }
    ).events.filter((event) => event.data.order.id === answer.orderId);
    expect(created.map((event) => event.data.order.orderId)).toEqual([orderId]);
  });

  it('with a coupon: the coupon read, then its claim and the insert in one transaction', async () => {
    const { status, statements: sent } = await checkout({
      cart: [{ productId: manual.id, quantity: 1 }],
      coupon: 'COUNTED10',
    });
    expect(status).toBe(200);
    expect(sent, listed(sent)).toEqual([
      STORE,
      PRODUCTS_WITH_STOCK,
      BLACKLIST,
      expect.stringMatching(/from "coupon"/),
      'BEGIN;',
      expect.stringMatching(/^update coupon set uses = uses \+ 1 /),
      INSERT,
      'COMMIT;',
    ]);
  });

  it('with an Idempotency-Key: the key claimed first, then the insert and the recorded answer in one transaction', async () => {
    const { status, statements: sent } = await checkout(
      { cart: [{ productId: manual.id, quantity: 1 }] },
      { 'idempotency-key': `counted-${Date.now()}` },
    );
    expect(status).toBe(200);
    expect(sent, listed(sent)).toEqual([
      STORE,
      expect.stringMatching(/^insert into idempotency_key /),
      STORE,
      PRODUCTS_WITH_STOCK,
      BLACKLIST,
      'BEGIN;',
      INSERT,
      expect.stringMatching(/^update "idempotency_key" set /),
      'COMMIT;',
    ]);
  });
});
