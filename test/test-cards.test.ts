/**
 * Black-box, against a server started in production: the test gateway's pay page offers the four
 * test cards (DESIGN §11.1) for a test order, as radio buttons posting `card`. `Succeeds`,
 * `Declines renewals` and `Requires authentication` pay the order and save the card as its payment
 * method; `Declines` fails the payment (the order stays pending, the failure is recorded, nothing
 * is saved) and brings the buyer back to the page saying so; an unknown card is a 400 page with
 * nothing recorded; no card at all is `Succeeds`, as the page's form always posted before.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct, importKeys } from './support/catalog.js';
import { TEST_GATEWAY_SECRET } from './support/payments.js';
import { bearer, previewToken } from './support/preview.js';
import { createStoreFor, dashboard, registerSeller } from './support/seller.js';
import { startServer } from './support/server.js';

let server: Awaited<ReturnType<typeof startServer>>;
let db: pg.Client;
let store: { id: string };
let testProduct: { id: string };
let preview: string;

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

const payOnPage = (orderId: string, token: string, card?: string) =>
  fetch(`${server.url}/pay/test/${orderId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token, ...(card === undefined ? {} : { card }) }).toString(),
    redirect: 'manual',
  });

/** A test order of the test product, started with the test gateway. */
async function startedTestOrder() {
  const checkout = await post(
    '/api/v1/checkout',
    {
      shopId: store.id,
      cart: [{ productId: testProduct.id, quantity: 1 }],
      email: `buyer-${randomBytes(4).toString('hex')}@example.test`,
    },
    bearer(preview),
  );
  expect(checkout.status, await checkout.clone().text()).toBe(200);
  const { url, orderId } = await checkout.json();
  const token = new URL(url).searchParams.get('token')!;
  const start = await post('/api/checkout/start', { orderId, token, paymentMethod: 'test' });
  expect(start.status, await start.clone().text()).toBe(200);
  return { orderId: orderId as string, token };
}

async function orderState(orderId: string) {
  const { rows } = await db.query(
    `select o.status, o.livemode,
       (select count(*)::int from payment_notification n where n.order_id = o.id) as notifications,
       (select count(*)::int from license_key k where k.order_id = o.id) as keys,
       (select json_agg(json_build_object('gateway', m.gateway, 'methodRef', m.method_ref, 'customerRef', m.customer_ref,
          'livemode', m.livemode)) from saved_payment_method m where m.order_id = o.id) as saved
     from "order" o where o.id = $1`,
    [orderId],
  );
  return rows[0] as { status: string; livemode: boolean; notifications: number; keys: number; saved: unknown[] | null };
}

beforeAll(async () => {
  server = await startServer({
    NODE_ENV: 'production',
    PUBLIC_URL: 'https://shop.example.test',
    SMTP_URL: 'smtp://127.0.0.1:9',
    TEST_GATEWAY_SECRET,
  });
  db = new pg.Client({ connectionString: server.db.url });
  await db.connect();
  const seller = await registerSeller(server.url);
  store = await createStoreFor(seller, 'Card Shop');
  const settings = await dashboard(seller, 'PATCH', `/api/dashboard/stores/${store.id}`, {
    settings: { paymentMethods: ['test', 'manual'] },
  });
  expect(settings.status, await settings.clone().text()).toBe(200);
  testProduct = await createProduct(seller, store.id, { name: 'Test key', deliveryMethods: ['licenseKeys'] }, 'test');
  await importKeys(
    seller,
    store.id,
    testProduct.id,
    Array.from({ length: 10 }, () => `T-${randomBytes(4).toString('hex')}`),
    'test',
  );
  preview = await previewToken(seller, store.id);
});
afterAll(async () => {
  await db?.end();
  await server?.stop();
});

describe('the test cards on the test pay page', () => {
  it('offers the four cards as radio buttons, Succeeds checked, each with its label', async () => {
    const { orderId, token } = await startedTestOrder();
    const page = await fetch(`${server.url}/pay/test/${orderId}?token=${token}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const radios = [...html.matchAll(/<input type="radio" name="card" id="([^"]+)" value="([^"]+)"[^>]*>/g)];
    expect(radios.map((match) => match[2])).toEqual([
      'succeeds',
      'declines',
      'declines_renewals',
      'requires_authentication',
    ]);
    expect(radios.map((match) => match[0].includes(' checked'))).toEqual([true, false, false, false]);
    const labels = radios.map((match) => new RegExp(`<label for="${match[1]}">([^<]+)</label>`).exec(html)?.[1]);
    expect(labels).toEqual(['Succeeds', 'Declines', 'Declines renewals', 'Requires authentication']);
    expect(html).toContain('<legend>Test card</legend>');
  });

  it.each([['succeeds'], ['declines_renewals'], ['requires_authentication']] as const)(
    'pays the order with %s and saves that card as its payment method',
    async (card) => {
      const { orderId, token } = await startedTestOrder();
      const paid = await payOnPage(orderId, token, card);
      expect(paid.status).toBe(303);
      expect(paid.headers.get('location')).toMatch(new RegExp(`^/orders/${orderId}\\?token=`));
      expect(await orderState(orderId)).toEqual({
        status: 'completed',
        livemode: false,
        notifications: 1,
        keys: 1,
        saved: [{ gateway: 'test', methodRef: card, customerRef: null, livemode: false }],
      });
    },
  );

  it('declines with Declines: the order stays pending, the failure is recorded, nothing saved, and the page says so', async () => {
    const { orderId, token } = await startedTestOrder();
    const declined = await payOnPage(orderId, token, 'declines');
    expect(declined.status).toBe(303);
    const location = declined.headers.get('location')!;
    expect(location).toMatch(new RegExp(`^/pay/test/${orderId}\\?`));
    expect(new URL(location, server.url).searchParams.get('declined')).toBe('1');
    expect(await orderState(orderId)).toEqual({
      status: 'pending',
      livemode: false,
      notifications: 1,
      keys: 0,
      saved: null,
    });
    const { rows } = await db.query('select kind, outcome from payment_notification where order_id = $1', [orderId]);
    expect(rows).toEqual([{ kind: 'failed', outcome: 'recorded' }]);
    const page = await (await fetch(new URL(location, server.url))).text();
    expect(page).toContain('<p role="alert">The test card Declines was declined; the order is not paid.');
    // Another card pays it.
    expect((await payOnPage(orderId, token, 'succeeds')).status).toBe(303);
    expect(await orderState(orderId)).toMatchObject({ status: 'completed', keys: 1 });
  });

  it('refuses an unknown card with a 400 page and records nothing', async () => {
    const { orderId, token } = await startedTestOrder();
    for (const card of ['platinum', '', 'SUCCEEDS']) {
      const refused = await payOnPage(orderId, token, card);
      expect(refused.status, card).toBe(400);
      expect(await refused.text()).toContain('Choose one of the test cards.');
    }
    expect(await orderState(orderId)).toEqual({
      status: 'pending',
      livemode: false,
      notifications: 0,
      keys: 0,
      saved: null,
    });
  });

  it('takes no card as Succeeds (the form of an older page)', async () => {
    const { orderId, token } = await startedTestOrder();
    expect((await payOnPage(orderId, token)).status).toBe(303);
    expect(await orderState(orderId)).toMatchObject({
      status: 'completed',
      saved: [{ gateway: 'test', methodRef: 'succeeds', customerRef: null, livemode: false }],
    });
  });
});
