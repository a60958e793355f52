/**
 * Black-box: tax as a theme, a buyer and a merchant key meet it over HTTP (docs/decisions.md,
 * "#42 Tax"): the store's `settings.tax` through the merchant API, the cart's tax line, a
 * checkout's billing details and their bad input, the hosted checkout's billing route, and the
 * taxed order as the merchant API and its events show it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct } from './support/catalog.js';
import { pay, TEST_GATEWAY_SECRET } from './support/payments.js';
import { clientIp, createKeyFor, createStoreFor, registerSeller, type Seller } from './support/seller.js';
import { startServer } from './support/server.js';

let server: Awaited<ReturnType<typeof startServer>>;
let seller: Seller;
let store: { id: string };
let key: string;
let product: { id: string };

const TAX = {
  behavior: 'exclusive',
  originCountry: 'DE',
  registrations: ['EU'],
  sellerName: 'Beispiel GmbH',
  sellerAddress: 'Hauptstraße 1, 10115 Berlin',
  sellerTaxId: 'DE136695976',
};

function merchant(method: string, path: string, body?: unknown) {
  return fetch(`${server.url}/api/merchant/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp(), ...headers },
    body: JSON.stringify(body),
  });
}

beforeAll(async () => {
  server = await startServer({ TEST_GATEWAY_SECRET });
  seller = await registerSeller(server.url);
  store = await createStoreFor(seller, 'Taxed');
  key = (
    await createKeyFor(seller, {
      scopes: ['store:write', 'store:read', 'order:read', 'event:read'],
      storeIds: [store.id],
    })
  ).key;
  product = await createProduct(seller, store.id, { name: 'Editor', price: 50, deliveryMethods: ['manualDelivery'] });
});

afterAll(async () => {
  await server?.stop();
});

describe('tax over HTTP', () => {
  it("turns tax on through the merchant API, refusing a bad registration and missing seller's details", async () => {
    const missing = await merchant('PATCH', `/stores/${store.id}`, {
      settings: { tax: { behavior: 'exclusive', originCountry: 'DE', registrations: ['DE'] } },
    });
    expect(missing.status).toBe(400);
    const paths = ((await missing.json()) as { issues: Array<{ path: string }> }).issues.map((i) => i.path).sort();
    expect(paths).toEqual(['settings.tax.sellerAddress', 'settings.tax.sellerName', 'settings.tax.sellerTaxId']);
    const unknown = await merchant('PATCH', `/stores/${store.id}`, {
      settings: { tax: { ...TAX, registrations: ['EU', 'QQ'] } },
    });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({
      code: 'validation_failed',
      issues: [{ path: 'settings.tax.registrations.1' }],
    });
    // Other settings stay the dashboard's.
    const other = await merchant('PATCH', `/stores/${store.id}`, { settings: { receiptNote: 'x' } });
    expect(other.status).toBe(400);

    const on = await merchant('PATCH', `/stores/${store.id}`, { settings: { tax: TAX } });
    expect(on.status, await on.clone().text()).toBe(200);
    expect(((await on.json()) as { settings: { tax: unknown } }).settings.tax).toEqual(TAX);
  });

  it("shows the cart's tax for the country asked, and refuses an unknown country code", async () => {
    const cart = encodeURIComponent(JSON.stringify([{ productId: product.id, quantity: 2 }]));
    const fr = await fetch(`${server.url}/api/v1/cart?storeId=${store.id}&cart=${cart}&country=FR`);
    expect(fr.status).toBe(200);
    expect(await fr.json()).toMatchObject({ subtotal: 100, taxAmount: 20, total: 120, taxRate: 0.2, taxCountry: 'FR' });
    const zz = await fetch(`${server.url}/api/v1/cart?storeId=${store.id}&cart=${cart}&country=ZZ`);
    expect(zz.status).toBe(400);
    expect(await zz.json()).toMatchObject({ code: 'validation_failed', issues: [{ path: 'country' }] });
  });

  it('takes billing details at checkout: 400 naming an unknown country or a malformed VAT id, nothing written', async () => {
    const cart = [{ productId: product.id, quantity: 1 }];
    const badCountry = await post('/api/orders/create', {
      storeId: store.id,
      cart,
      email: 'b@example.test',
      country: 'XY',
    });
    expect(badCountry.status).toBe(400);
    expect(await badCountry.json()).toMatchObject({ issues: [{ path: 'country' }] });
    const badId = await post('/api/orders/create', {
      storeId: store.id,
      cart,
      email: 'b@example.test',
      country: 'FR',
      taxId: 'FR123',
    });
    expect(badId.status).toBe(400);
    expect(await badId.json()).toMatchObject({ code: 'validation_failed', issues: [{ path: 'taxId' }] });
    const listed = await merchant('GET', `/stores/${store.id}/orders`);
    expect(((await listed.json()) as { orders: unknown[] }).orders).toEqual([]);
  });

  it('re-taxes a pending order on the billing route, then pays it with an invoice number the API and events show', async () => {
    const created = await post(
      '/api/orders/create',
      { storeId: store.id, cart: [{ productId: product.id, quantity: 1 }], email: 'c@example.test' },
      { 'cf-ipcountry': 'DE' },
    );
    expect(created.status).toBe(201);
    const { order, checkoutToken } = (await created.json()) as { order: { id: string }; checkoutToken: string };
    const billing = await post('/api/checkout/billing', {
      orderId: order.id,
      token: checkoutToken,
      country: 'IT',
      taxId: 'IT00743110157',
      billingName: 'Esempio S.r.l.',
      billingAddress: 'Via Roma 1, Milano',
    });
    expect(billing.status, await billing.clone().text()).toBe(200);
    expect(((await billing.json()) as { order: unknown }).order).toMatchObject({
      taxAmount: 0,
      reverseCharge: true,
      taxCountry: 'IT',
      price: 50,
    });
    const b2c = await post('/api/checkout/billing', {
      orderId: order.id,
      token: checkoutToken,
      country: 'IT',
      taxId: null,
    });
    expect(((await b2c.json()) as { order: unknown }).order).toMatchObject({ taxAmount: 11, taxRate: 0.22, price: 61 });
    const wrongToken = await post('/api/checkout/billing', {
      orderId: order.id,
      token: `x${checkoutToken.slice(1)}`,
      country: 'DE',
    });
    expect([403, 404]).toContain(wrongToken.status);

    const paid = await pay(server.url, { orderId: order.id, amount: 61 });
    expect(paid.status).toBe(200);
    const read = await merchant('GET', `/stores/${store.id}/orders/${order.id}`);
    const year = new Date().getUTCFullYear();
    expect(await read.json()).toMatchObject({
      subtotal: 50,
      taxAmount: 11,
      taxRate: 0.22,
      taxCountry: 'IT',
      reverseCharge: false,
      invoiceNumber: `INV-${year}-1`,
      creditNoteNumber: null,
      price: 61,
    });
    const events = await merchant('GET', `/stores/${store.id}/events?type=order.paid`);
    const body = (await events.json()) as { events: Array<{ data: { order: { id: string; invoiceNumber: string } } }> };
    expect(body.events.find((e) => e.data.order.id === order.id)?.data.order.invoiceNumber).toBe(`INV-${year}-1`);
  });
});
