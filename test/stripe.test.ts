/**
 * Black-box: the `stripe` gateway against a local fake Stripe. Starting a payment creates a
 * Checkout Session (once per order and amount); Stripe's signed webhook events settle,
 * refund or are ignored, verified on the raw bytes as received; the seller's refund of a
 * Stripe-paid order is made at Stripe first (once, under the order's idempotency key), and a
 * refusal changes nothing. A unit block checks the verifier directly.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../apps/server/src/config.js';
import { newId } from '../apps/server/src/lib/ids.js';
import { stripeApiAddress, verifyStripeNotification } from '../apps/server/src/modules/payments/stripe-gateway.js';
import { createProduct, importKeys } from './support/catalog.js';
import { formObject, startFakeStripe, type FakeStripe, type FakeStripeRefusal } from './support/fake-stripe.js';
import { pay, TEST_GATEWAY_SECRET } from './support/payments.js';
import {
  clientIp,
  createKeyFor,
  createStoreFor,
  dashboard,
  merchantGet,
  registerSeller,
  type Seller,
} from './support/seller.js';
import { startServer } from './support/server.js';

const PUBLIC_URL = 'https://shop-api.example.test';
const SECRET_KEY = 'sk_test_fake';
const WEBHOOK_SECRET = 'whsec_test';

let fake: FakeStripe;
let server: Awaited<ReturnType<typeof startServer>>;
let db: pg.Client;
let seller: Seller;
let store: { id: string; subdomain: string };
let product: { id: string };
let readKey: string;
let refundKey: string;

beforeAll(async () => {
  fake = await startFakeStripe();
  server = await startServer({
    PUBLIC_URL,
    STRIPE_SECRET_KEY: SECRET_KEY,
    STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    STRIPE_API_BASE: fake.url,
    TEST_GATEWAY_SECRET,
  });
  db = new pg.Client({ connectionString: server.db.url });
  await db.connect();
  seller = await registerSeller(server.url);
  store = await createStoreFor(seller, 'Pixel Shop');
  product = await createProduct(seller, store.id, { name: 'Game Key', price: 9.99, deliveryMethods: ['licenseKeys'] });
  await importKeys(
    seller,
    store.id,
    product.id,
    Array.from({ length: 20 }, (_, i) => `KEY-${i}-${randomBytes(4).toString('hex')}`),
  );
  const settings = await dashboard(seller, 'PATCH', `/api/dashboard/stores/${store.id}`, {
    settings: { paymentMethods: ['manual', 'stripe'] },
  });
  expect(settings.status, await settings.clone().text()).toBe(200);
  readKey = (await createKeyFor(seller, { scopes: ['order:read'], storeIds: [store.id] })).key;
  refundKey = (await createKeyFor(seller, { scopes: ['order:refund'], storeIds: [store.id] })).key;
});

afterAll(async () => {
  await db?.end();
  await server?.stop();
  await fake?.close();
});

function post(baseUrl: string, path: string, body: unknown) {
  return fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp() },
    body: JSON.stringify(body),
  });
}

async function newOrder(
  baseUrl = server.url,
  storeId = store.id,
  productId = product.id,
): Promise<{ orderId: string; token: string }> {
  const response = await post(baseUrl, '/api/v1/checkout', {
    shopId: storeId,
    cart: [{ productId, quantity: 1 }],
    email: `buyer-${randomBytes(4).toString('hex')}@example.test`,
  });
  expect(response.status, await response.clone().text()).toBe(200);
  const { url, orderId } = await response.json();
  return { orderId, token: new URL(url).searchParams.get('token')! };
}

function start(orderId: string, token: string, baseUrl = server.url) {
  return post(baseUrl, '/api/checkout/start', { orderId, token, paymentMethod: 'stripe' });
}

/** An order started with Stripe, and the session the fake made for it. */
async function startedOrder() {
  const { orderId, token } = await newOrder();
  const response = await start(orderId, token);
  expect(response.status, await response.clone().text()).toBe(200);
  const { redirectUrl } = await response.json();
  const session = [...fake.sessions.values()].find((s) => s.url === redirectUrl)!;
  expect(session).toBeDefined();
  return { orderId, token, session };
}

const eventId = () => `evt_test_${randomBytes(10).toString('hex')}`;

function sessionEvent(
  session: { id: string; payment_intent: string },
  orderId: string,
  opts: { type?: string; amount?: number; currency?: string; paymentStatus?: string; id?: string } = {},
) {
  return {
    id: opts.id ?? eventId(),
    object: 'event',
    api_version: Stripe.API_VERSION,
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    type: opts.type ?? 'checkout.session.completed',
    data: {
      object: {
        id: session.id,
        object: 'checkout.session',
        mode: 'payment',
        status: 'complete',
        payment_status: opts.paymentStatus ?? 'paid',
        amount_total: opts.amount ?? 999,
        currency: opts.currency ?? 'usd',
        metadata: { orderId },
        client_reference_id: orderId,
        payment_intent: session.payment_intent,
      },
    },
  };
}

function refundEvent(paymentIntent: string, orderId: string, refunded = true) {
  return {
    id: eventId(),
    object: 'event',
    api_version: Stripe.API_VERSION,
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    type: 'charge.refunded',
    data: {
      object: {
        id: `ch_test_${randomBytes(8).toString('hex')}`,
        object: 'charge',
        amount: 999,
        amount_refunded: refunded ? 999 : 500,
        currency: 'usd',
        refunded,
        payment_intent: paymentIntent,
        metadata: { orderId },
      },
    },
  };
}

const sign = (payload: string, opts: { secret?: string; timestamp?: number } = {}) =>
  Stripe.webhooks.generateTestHeaderString({
    payload,
    secret: opts.secret ?? WEBHOOK_SECRET,
    ...(opts.timestamp ? { timestamp: opts.timestamp } : {}),
  });

/** POSTs `payload` (a string is sent byte for byte) signed with `signature` (default: a valid one). */
function sendEvent(payload: unknown, signature?: string | null, baseUrl = server.url) {
  const body = typeof payload === 'string' ? payload : JSON.stringify(payload);
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
  const header = signature === undefined ? sign(body) : signature;
  if (header !== null) headers['stripe-signature'] = header;
  return fetch(`${baseUrl}/api/payments/stripe/webhook`, { method: 'POST', headers, body });
}

async function merchantOrder(orderId: string) {
  const response = await merchantGet(server.url, readKey, `/stores/${store.id}/orders/${orderId}`);
  expect(response.status).toBe(200);
  return response.json();
}

describe('starting a Stripe payment', () => {
  it('creates a Checkout Session for the stored amount and answers its url; a second start reuses it', async () => {
    const before = fake.requests.length;
    const { orderId, token } = await newOrder();
    const response = await start(orderId, token);
    expect(response.status, await response.clone().text()).toBe(200);
    const body = await response.json();
    expect(body).toMatchObject({ orderId, paymentMethod: 'stripe', price: 9.99, currency: 'USD' });
    expect(body.redirectUrl).toMatch(/^https:\/\/checkout\.stripe\.test\/c\/pay\/cs_test_/);
    expect(body.instructions).toBeUndefined();

    const sent = fake.requests.slice(before);
    expect(sent).toHaveLength(1);
    const request = sent[0]!;
    expect(request).toMatchObject({
      method: 'POST',
      path: '/v1/checkout/sessions',
      authorization: `Bearer ${SECRET_KEY}`,
    });
    const { rows } = await db.query('select number, customer_email from "order" where id = $1', [orderId]);
    expect(request.form).toMatchObject({
      mode: 'payment',
      'line_items[0][quantity]': '1',
      'line_items[0][price_data][currency]': 'usd',
      'line_items[0][price_data][unit_amount]': '999',
      customer_email: rows[0].customer_email,
      client_reference_id: orderId,
    });
    expect(request.form['line_items[0][price_data][product_data][name]']).toBe(`ORD-${rows[0].number} · Pixel Shop`);
    expect(formObject(request.form, 'metadata')).toEqual({ orderId });
    expect(request.form['payment_intent_data[metadata][orderId]']).toBe(orderId);
    expect(request.form.success_url!.startsWith(`${PUBLIC_URL}/checkout/${orderId}?`)).toBe(true);
    expect(request.form.cancel_url!.startsWith(`${PUBLIC_URL}/checkout/${orderId}?`)).toBe(true);
    expect(request.idempotencyKey).toContain(orderId);
    expect(request.idempotencyKey).toContain('999');
    const session = fake.sessions.get(body.redirectUrl.split('/').pop())!;
    expect(session).toMatchObject({
      amount_total: 999,
      currency: 'usd',
      metadata: { orderId },
      client_reference_id: orderId,
    });

    const again = await start(orderId, token);
    expect(again.status).toBe(200);
    expect((await again.json()).redirectUrl).toBe(body.redirectUrl);
    const second = fake.requests.slice(before)[1]!;
    expect(second.idempotencyKey).toBe(request.idempotencyKey);
    expect(second.form).toEqual(request.form);
    expect([...fake.sessions.values()].filter((s) => s.client_reference_id === orderId)).toHaveLength(1);

    // The order is waiting for Stripe, nothing more.
    expect(await merchantOrder(orderId)).toMatchObject({
      status: 'pending',
      paymentMethod: 'stripe',
      paid: 0,
      keyCount: 0,
    });
  });

  it('starts a new session when the buyer changes the e-mail (not an idempotency error)', async () => {
    const { orderId, token } = await newOrder();
    const first = await (await start(orderId, token)).json();
    const response = await post(server.url, '/api/checkout/start', {
      orderId,
      token,
      paymentMethod: 'stripe',
      email: 'changed@example.test',
    });
    expect(response.status, await response.clone().text()).toBe(200);
    const second = await response.json();
    expect(second.redirectUrl).not.toBe(first.redirectUrl);
    expect(fake.sessions.get(second.redirectUrl.split('/').pop())).toMatchObject({
      customer_email: 'changed@example.test',
      amount_total: 999,
    });
  });

  it("answers 503 without Stripe's words when Stripe fails, and the order stays pending", async () => {
    const { orderId, token } = await newOrder();
    fake.failWith = 500;
    try {
      const response = await start(orderId, token);
      expect(response.status).toBe(503);
      const body = await response.json();
      expect(body.code).toBe('service_unavailable');
      expect(JSON.stringify(body)).not.toMatch(/fake Stripe|secret detail|sk_test/);
    } finally {
      fake.failWith = undefined;
    }
    // The log line travels through the server's stdout pipe; it may land just after the answer.
    let logged = server.logs.find((line) => line.msg === 'stripe checkout session failed');
    for (let i = 0; !logged && i < 40; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      logged = server.logs.find((line) => line.msg === 'stripe checkout session failed');
    }
    expect(logged, 'the failure reaches the server log').toMatchObject({ orderId, err: { statusCode: 500 } });
    await server.logsSettled();
    expect(server.output()).not.toContain(SECRET_KEY);
    expect((await merchantOrder(orderId)).status).toBe('pending');
    expect((await start(orderId, token)).status).toBe(200);
  });
});

describe('POST /api/payments/stripe/webhook', () => {
  it('settles on checkout.session.completed and fulfils; the same event again changes nothing', async () => {
    const { orderId, session } = await startedOrder();
    const event = sessionEvent(session, orderId);
    const response = await sendEvent(event);
    expect(response.status, await response.clone().text()).toBe(200);
    expect(await response.json()).toEqual({ outcome: 'settled' });

    const settled = await merchantOrder(orderId);
    expect(settled).toMatchObject({
      status: 'completed',
      keyCount: 1,
      paid: 9.99,
      price: 9.99,
      paymentMethod: 'stripe',
    });
    const payments = await db.query(
      'select gateway, provider_ref, amount_minor, currency, status from payment where order_id = $1',
      [orderId],
    );
    expect(payments.rows).toEqual([
      { gateway: 'stripe', provider_ref: session.payment_intent, amount_minor: '999', currency: 'USD', status: 'paid' },
    ]);

    const repeat = await sendEvent(event);
    expect(repeat.status).toBe(200);
    expect(await repeat.json()).toEqual({ outcome: 'duplicate' });
    expect(await merchantOrder(orderId)).toEqual(settled);
    const keys = await db.query(`select count(*)::int as n from license_key where order_id = $1`, [orderId]);
    expect(keys.rows[0].n).toBe(1);
  });

  it('settles on checkout.session.async_payment_succeeded, ignores an unpaid completion and records an async failure', async () => {
    const { orderId, session } = await startedOrder();
    const unpaid = await sendEvent(sessionEvent(session, orderId, { paymentStatus: 'unpaid' }));
    expect(await unpaid.json()).toEqual({ outcome: 'ignored' });
    expect((await merchantOrder(orderId)).status).toBe('pending');

    const failed = await sendEvent(
      sessionEvent(session, orderId, { type: 'checkout.session.async_payment_failed', paymentStatus: 'unpaid' }),
    );
    expect(failed.status).toBe(200);
    expect(await failed.json()).toEqual({ outcome: 'recorded' });
    expect((await merchantOrder(orderId)).status).toBe('pending');

    const succeeded = await sendEvent(
      sessionEvent(session, orderId, { type: 'checkout.session.async_payment_succeeded' }),
    );
    expect(await succeeded.json()).toEqual({ outcome: 'settled' });
    expect(await merchantOrder(orderId)).toMatchObject({ status: 'completed', keyCount: 1, paid: 9.99 });
  });

  it('refuses a bad signature, a stale timestamp, a body changed after signing and a missing header', async () => {
    const { orderId, session } = await startedOrder();
    const body = JSON.stringify(sessionEvent(session, orderId));
    const tenMinutesAgo = Math.floor(Date.now() / 1000) - 600;
    const cases: Array<[string, string, string | null]> = [
      ['another secret', body, sign(body, { secret: 'whsec_other' })],
      ['a stale timestamp', body, sign(body, { timestamp: tenMinutesAgo })],
      ['a timestamp from the future', body, sign(body, { timestamp: Math.floor(Date.now() / 1000) + 600 })],
      ['a body changed after signing', body.replace('"amount_total":999', '"amount_total":998'), sign(body)],
      ['a garbled header', body, 'v1=abc'],
      ['no header', body, null],
    ];
    for (const [what, payload, signature] of cases) {
      const response = await sendEvent(payload, signature);
      expect(response.status, what).toBe(400);
      expect((await response.json()).code, what).toBe('signature_invalid');
    }
    expect(await merchantOrder(orderId)).toMatchObject({ status: 'pending', paid: 0, keyCount: 0 });
    const { rows } = await db.query(`select count(*)::int as n from payment_notification where order_id = $1`, [
      orderId,
    ]);
    expect(rows[0].n).toBe(0);
  });

  it('verifies the raw bytes: JSON with extra whitespace verifies, the same object re-serialised does not', async () => {
    const { orderId, session } = await startedOrder();
    const spaced = JSON.stringify(sessionEvent(session, orderId), null, 3).replace(/":/g, '" :  ') + '\n\n';
    const signature = sign(spaced);
    const compact = JSON.stringify(JSON.parse(spaced));
    const reserialised = await sendEvent(compact, signature);
    expect(reserialised.status).toBe(400);
    expect((await reserialised.json()).code).toBe('signature_invalid');
    expect((await merchantOrder(orderId)).status).toBe('pending');

    const response = await sendEvent(spaced, signature);
    expect(response.status, await response.clone().text()).toBe(200);
    expect(await response.json()).toEqual({ outcome: 'settled' });
    expect((await merchantOrder(orderId)).status).toBe('completed');
  });

  it('does not settle a lower amount or another currency', async () => {
    const lower = await startedOrder();
    const response = await sendEvent(sessionEvent(lower.session, lower.orderId, { amount: 998 }));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ outcome: 'amount_mismatch' });
    expect(await merchantOrder(lower.orderId)).toMatchObject({ status: 'pending', paid: 0, keyCount: 0 });

    const other = await startedOrder();
    const euro = await sendEvent(sessionEvent(other.session, other.orderId, { currency: 'eur' }));
    expect(euro.status).toBe(200);
    expect(await euro.json()).toEqual({ outcome: 'currency_mismatch' });
    expect(await merchantOrder(other.orderId)).toMatchObject({ status: 'pending', paid: 0, keyCount: 0 });
  });

  it('refunds the order on charge.refunded (in full only), revoking its key', async () => {
    const { orderId, session } = await startedOrder();
    expect(await (await sendEvent(sessionEvent(session, orderId))).json()).toEqual({ outcome: 'settled' });

    const partial = await sendEvent(refundEvent(session.payment_intent, orderId, false));
    expect(await partial.json()).toEqual({ outcome: 'ignored' });
    expect((await merchantOrder(orderId)).status).toBe('completed');

    const response = await sendEvent(refundEvent(session.payment_intent, orderId));
    expect(response.status, await response.clone().text()).toBe(200);
    expect(await response.json()).toEqual({ outcome: 'refunded' });
    expect((await merchantOrder(orderId)).status).toBe('refunded');
    const keys = await db.query(`select status from license_key where order_id = $1`, [orderId]);
    expect(keys.rows).toEqual([{ status: 'revoked' }]);
  });

  it('answers 200 ignored for an event type it does not handle, touching no order', async () => {
    const { orderId, session } = await startedOrder();
    const event = {
      id: eventId(),
      object: 'event',
      type: 'customer.created',
      created: Math.floor(Date.now() / 1000),
      livemode: false,
      data: { object: { id: 'cus_test_1', object: 'customer', metadata: { orderId } } },
    };
    const response = await sendEvent(event);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ outcome: 'ignored' });
    const expired = await sendEvent(
      sessionEvent(session, orderId, { type: 'checkout.session.expired', paymentStatus: 'unpaid' }),
    );
    expect(await expired.json()).toEqual({ outcome: 'ignored' });
    expect(await merchantOrder(orderId)).toMatchObject({ status: 'pending', paid: 0 });
    const { rows } = await db.query(`select count(*)::int as n from payment_notification where order_id = $1`, [
      orderId,
    ]);
    expect(rows[0].n).toBe(0);
  });
});

describe('refunding a Stripe-paid order (POST /merchant/v1/stores/{storeId}/orders/{orderId}/refund)', () => {
  /** An order paid through Stripe Checkout (settled by its signed event) and completed with one key. */
  async function paidOrder() {
    const { orderId, session } = await startedOrder();
    expect(await (await sendEvent(sessionEvent(session, orderId))).json()).toEqual({ outcome: 'settled' });
    return { orderId, session };
  }

  const refund = (orderId: string) =>
    fetch(`${server.url}/api/merchant/v1/stores/${store.id}/orders/${orderId}/refund`, {
      method: 'POST',
      headers: { authorization: `Bearer ${refundKey}` },
    });

  const refundCalls = (orderId: string) =>
    fake.requests.filter((r) => r.path === '/v1/refunds' && r.form['metadata[orderId]'] === orderId);

  /** What a refund changes: the order as the seller reads it, its keys, its payments and its order.refunded events. */
  async function observed(orderId: string) {
    const keys = await db.query('select id, status from license_key where order_id = $1 order by id', [orderId]);
    const payments = await db.query(
      'select gateway, provider_ref, status, refund_ref, updated_at from payment where order_id = $1 order by id',
      [orderId],
    );
    const events = await db.query(
      `select count(*)::int as n from event where type = 'order.refunded' and payload->'order'->>'id' = $1`,
      [orderId],
    );
    return {
      order: await merchantOrder(orderId),
      keys: keys.rows,
      payments: payments.rows,
      refundedEvents: events.rows[0].n,
    };
  }

  async function logged(msg: string, orderId: string) {
    const find = () => server.logs.find((line) => line.msg === msg && line.orderId === orderId);
    for (let i = 0; !find() && i < 40; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    return find();
  }

  it("refunds at Stripe once, under the order's idempotency key, and records the refund id; a repeat makes no call", async () => {
    const { orderId, session } = await paidOrder();
    expect((await observed(orderId)).keys).toEqual([{ id: expect.any(String), status: 'assigned' }]);

    const response = await refund(orderId);
    expect(response.status, await response.clone().text()).toBe(200);
    const refunded = await response.json();
    expect(refunded).toMatchObject({ id: orderId, status: 'refunded', keyCount: 0 });
    expect(refunded.lines[0].delivered.licenseKeys).toEqual([expect.objectContaining({ status: 'revoked' })]);

    const calls = refundCalls(orderId);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({
      method: 'POST',
      path: '/v1/refunds',
      authorization: `Bearer ${SECRET_KEY}`,
      idempotencyKey: `svc-refund-${orderId}`,
    });
    // The whole PaymentIntent: no amount, so Stripe refunds what is left of it.
    expect(calls[0]!.form.payment_intent).toBe(session.payment_intent);
    expect(calls[0]!.form.amount).toBeUndefined();
    expect(formObject(calls[0]!.form, 'metadata')).toEqual({ orderId });
    const made = [...fake.refunds.values()].filter((r) => r.payment_intent === session.payment_intent);
    expect(made).toHaveLength(1);

    const after = await observed(orderId);
    expect(after.order.status).toBe('refunded');
    expect(after.keys).toEqual([{ id: expect.any(String), status: 'revoked' }]);
    expect(after.payments).toEqual([
      expect.objectContaining({
        gateway: 'stripe',
        provider_ref: session.payment_intent,
        status: 'refunded',
        refund_ref: made[0]!.id,
      }),
    ]);
    expect(after.refundedEvents).toBe(1);

    // Again: the refunded order, and no second call to Stripe.
    const again = await refund(orderId);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(refunded);
    expect(refundCalls(orderId)).toHaveLength(1);

    // Stripe's own charge.refunded for the refund we made changes nothing more.
    const notified = await sendEvent(refundEvent(session.payment_intent, orderId));
    expect(await notified.json()).toEqual({ outcome: 'refunded' });
    expect(await observed(orderId)).toEqual(after);
    expect(refundCalls(orderId)).toHaveLength(1);
  });

  it('answers 502 gateway_error when Stripe refuses, with the order, keys and payments unchanged; then refunds once Stripe accepts', async () => {
    const { orderId, session } = await paidOrder();
    const before = await observed(orderId);
    expect(before).toMatchObject({ order: { status: 'completed', keyCount: 1 }, refundedEvents: 0 });
    expect(before.payments).toEqual([expect.objectContaining({ status: 'paid', refund_ref: null })]);

    const refusals: FakeStripeRefusal[] = [
      { status: 400, type: 'invalid_request_error', code: 'charge_already_refunded' },
      { status: 500, type: 'api_error' },
    ];
    for (const refusal of refusals) {
      fake.refuseRefunds = refusal;
      try {
        const response = await refund(orderId);
        expect(response.status, JSON.stringify(refusal)).toBe(502);
        const body = await response.json();
        expect(body).toEqual({ error: expect.any(String), code: 'gateway_error' });
        expect(JSON.stringify(body)).not.toMatch(/fake Stripe|secret detail|sk_test|charge_already|pi_|api_error/);
      } finally {
        fake.refuseRefunds = undefined;
      }
      expect(await observed(orderId), JSON.stringify(refusal)).toEqual(before);
    }
    expect(await logged('stripe refund failed', orderId), 'the refusal reaches the log').toMatchObject({
      err: { statusCode: 400, code: 'charge_already_refunded' },
    });
    await server.logsSettled();
    expect(server.output()).not.toContain(SECRET_KEY);
    expect([...fake.refunds.values()].filter((r) => r.payment_intent === session.payment_intent)).toHaveLength(0);

    const response = await refund(orderId);
    expect(response.status, await response.clone().text()).toBe(200);
    expect((await response.json()).status).toBe('refunded');
    const calls = refundCalls(orderId);
    expect(calls.map((c) => c.idempotencyKey)).toEqual(Array(3).fill(`svc-refund-${orderId}`));
    const made = [...fake.refunds.values()].filter((r) => r.payment_intent === session.payment_intent);
    expect(made).toHaveLength(1);
    const after = await observed(orderId);
    expect(after).toMatchObject({ order: { status: 'refunded', keyCount: 0 }, refundedEvents: 1 });
    expect(after.keys).toEqual([{ id: before.keys[0].id, status: 'revoked' }]);
    expect(after.payments).toEqual([expect.objectContaining({ status: 'refunded', refund_ref: made[0]!.id })]);
  });

  it("records the refund Stripe made before a crash: the retry's same key gets the same refund back", async () => {
    const { orderId, session } = await paidOrder();
    // An earlier attempt reached Stripe and died before its commit: Stripe holds a refund under the order's key.
    const stripe = new Stripe(SECRET_KEY, { ...stripeApiAddress(fake.url), telemetry: false });
    const earlier = await stripe.refunds.create(
      { payment_intent: session.payment_intent, metadata: { orderId } },
      { idempotencyKey: `svc-refund-${orderId}` },
    );
    expect((await observed(orderId)).order.status).toBe('completed');

    const response = await refund(orderId);
    expect(response.status, await response.clone().text()).toBe(200);
    expect((await response.json()).status).toBe('refunded');
    expect([...fake.refunds.values()].filter((r) => r.payment_intent === session.payment_intent)).toEqual([
      expect.objectContaining({ id: earlier.id }),
    ]);
    expect((await observed(orderId)).payments).toEqual([
      expect.objectContaining({ status: 'refunded', refund_ref: earlier.id }),
    ]);
  });

  it('refunds a test-gateway order and a manual one as before, without calling Stripe', async () => {
    const viaTest = await newOrder();
    expect((await pay(server.url, { orderId: viaTest.orderId, amount: 9.99 })).status).toBe(200);
    const viaManual = await newOrder();
    const marked = await dashboard(
      seller,
      'POST',
      `/api/dashboard/stores/${store.id}/orders/${viaManual.orderId}/mark-paid`,
    );
    expect(marked.status, await marked.clone().text()).toBe(200);

    const before = fake.requests.length;
    for (const [gateway, { orderId }] of [
      ['test', viaTest],
      ['manual', viaManual],
    ] as const) {
      expect((await observed(orderId)).order.status, gateway).toBe('completed');
      const response = await refund(orderId);
      expect(response.status, await response.clone().text()).toBe(200);
      expect((await response.json()).status, gateway).toBe('refunded');
      const after = await observed(orderId);
      expect(after.keys, gateway).toEqual([{ id: expect.any(String), status: 'revoked' }]);
      expect(after.payments, gateway).toEqual([
        expect.objectContaining({ gateway, status: 'refunded', refund_ref: null }),
      ]);
      expect(after.refundedEvents, gateway).toBe(1);
    }
    expect(fake.requests.length).toBe(before);
  });
});

describe('without STRIPE_SECRET_KEY / STRIPE_WEBHOOK_SECRET', () => {
  it('refuses to start a Stripe payment (400) and the webhook is not there (404)', async () => {
    const bare = await startServer({ PUBLIC_URL, STRIPE_API_BASE: fake.url });
    try {
      const other = await registerSeller(bare.url);
      const otherStore = await createStoreFor(other);
      const otherProduct = await createProduct(other, otherStore.id, { price: 5, deliveryMethods: ['licenseKeys'] });
      await importKeys(other, otherStore.id, otherProduct.id, ['ONLY-KEY']);
      expect(
        (
          await dashboard(other, 'PATCH', `/api/dashboard/stores/${otherStore.id}`, {
            settings: { paymentMethods: ['stripe'] },
          })
        ).status,
      ).toBe(200);
      const before = fake.requests.length;
      const { orderId, token } = await newOrder(bare.url, otherStore.id, otherProduct.id);
      const response = await start(orderId, token, bare.url);
      expect(response.status).toBe(400);
      const body = await response.json();
      expect(body.code).toBe('validation_failed');
      expect(body.issues).toEqual([{ path: 'paymentMethod', message: 'Stripe is not configured.' }]);
      expect(fake.requests.length).toBe(before);

      const hook = await sendEvent(
        { id: eventId(), object: 'event', type: 'customer.created', data: { object: {} } },
        undefined,
        bare.url,
      );
      expect(hook.status).toBe(404);
    } finally {
      await bare.stop();
    }
  });
});

describe('verifyStripeNotification (unit)', () => {
  const config = loadConfig({
    NODE_ENV: 'test',
    STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    APP_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  });
  const session = { id: 'cs_test_unit', payment_intent: 'pi_test_unit' };
  const t = 1_800_000_000;
  const at = (seconds: number) => new Date(seconds * 1000);
  const unitOrder = Array.from({ length: 6 }, () => newId());

  it('verifies the bytes as received, whitespace and all, and maps a paid session', () => {
    const spaced = `  ${JSON.stringify(sessionEvent(session, unitOrder[1]!, { id: 'evt_unit_1', amount: 1234, currency: 'eur' }), null, 4)}\n`;
    const header = sign(spaced, { timestamp: t });
    expect(verifyStripeNotification(config, Buffer.from(spaced), header, at(t + 10))).toEqual({
      eventId: 'evt_unit_1',
      kind: 'paid',
      orderId: unitOrder[1]!,
      amountMinor: 1234,
      currency: 'EUR',
      providerRef: 'pi_test_unit',
    });
    const reserialised = Buffer.from(JSON.stringify(JSON.parse(spaced)));
    expect(() => verifyStripeNotification(config, reserialised, header, at(t + 10))).toThrow(
      expect.objectContaining({ appCode: 'signature_invalid' }),
    );
  });

  it('holds the 300 second tolerance against the clock it is given', () => {
    const body = JSON.stringify(sessionEvent(session, unitOrder[2]!));
    const header = sign(body, { timestamp: t });
    expect(verifyStripeNotification(config, Buffer.from(body), header, at(t + 300))?.kind).toBe('paid');
    expect(() => verifyStripeNotification(config, Buffer.from(body), header, at(t + 301))).toThrow(
      expect.objectContaining({ appCode: 'signature_invalid' }),
    );
    expect(() => verifyStripeNotification(config, Buffer.from(body), header, at(t - 301))).toThrow(
      expect.objectContaining({ appCode: 'signature_invalid' }),
    );
  });

  it('maps refunds, failures and everything else', () => {
    const verify = (event: unknown) => {
      const body = JSON.stringify(event);
      return verifyStripeNotification(config, Buffer.from(body), sign(body, { timestamp: t }), at(t));
    };
    expect(verify(refundEvent('pi_test_unit', unitOrder[3]!))).toMatchObject({
      kind: 'refunded',
      orderId: unitOrder[3]!,
      amountMinor: 999,
      currency: 'USD',
      providerRef: 'pi_test_unit',
    });
    expect(verify(refundEvent('pi_test_unit', unitOrder[3]!, false))).toBeNull();
    expect(
      verify(
        sessionEvent(session, unitOrder[4]!, {
          type: 'checkout.session.async_payment_failed',
          paymentStatus: 'unpaid',
        }),
      ),
    ).toMatchObject({ kind: 'failed', orderId: unitOrder[4]! });
    expect(verify(sessionEvent(session, unitOrder[5]!, { paymentStatus: 'unpaid' }))).toBeNull();
    // Another integration's session on the same Stripe account names no order of ours.
    expect(verify(sessionEvent(session, 'WC-ORDER-1234'))).toBeNull();
    expect(verify(sessionEvent(session, 'x'.repeat(40)))).toBeNull();
    expect(
      verify({
        id: 'evt_x',
        object: 'event',
        type: 'payment_intent.succeeded',
        data: { object: { id: 'pi_1', object: 'payment_intent', metadata: { orderId: 'o' } } },
      }),
    ).toBeNull();
  });

  it('is not there without STRIPE_WEBHOOK_SECRET', () => {
    const bare = { ...config, stripeWebhookSecret: undefined };
    expect(() => verifyStripeNotification(bare, Buffer.from('{}'), sign('{}'), new Date())).toThrow(
      expect.objectContaining({ appCode: 'not_found' }),
    );
  });
});
