/**
 * The `stripe` gateway saving a buyer's payment method and charging it later, against the local
 * fake Stripe (test/support/fake-stripe.ts), with stripe-node (svc's own client) sending and reading
 * every call (docs/decisions.md, Saved payment methods):
 * - a start with `saveMethod` asks for `payment_intent_data.setup_future_usage: 'off_session'` and
 *   `customer_creation: 'always'` (a zero total: a `setup` session); its checkout.session.completed,
 *   on a started server, settles the order and records Stripe's customer and PaymentMethod, read
 *   from the PaymentIntent (a Stripe failure there answers 503 and settles nothing, so Stripe's
 *   retry settles); a start without it asks for neither and saves nothing;
 * - chargeSaved makes an off-session, confirmed PaymentIntent on the saved customer and method
 *   under the caller's Idempotency-Key, and answers succeeded, failed (the decline code) or
 *   requires_action; the same key charges once; Stripe failing or unreachable is `gateway_error`;
 * - over HTTP, a Stripe subscription's Update payment method in the customer area answers Stripe's
 *   page of a `setup` session on the saved customer; its signed completion saves the SetupIntent's
 *   PaymentMethod (a replay changes nothing), and the next renewal charges that one; another
 *   buyer's subscription is 404.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../apps/server/src/lib/errors.js';
import { newId } from '../apps/server/src/lib/ids.js';
import { createLogger } from '../apps/server/src/lib/logger.js';
import type { Order } from '../apps/server/src/modules/orders/orders.entities.js';
import type { SavedMethod } from '../apps/server/src/modules/payments/gateway.js';
import {
  chargeErrorResult,
  stripeGateway,
  verifyStripeNotification,
  withSavedMethod,
} from '../apps/server/src/modules/payments/stripe-gateway.js';
import type { ServiceContext } from '../apps/server/src/modules/request/context.js';
import type { Store } from '../apps/server/src/modules/stores/stores.entities.js';
import { createProduct, importKeys } from './support/catalog.js';
import {
  completedSessionEvent,
  formObject,
  startFakeStripe,
  type FakeCard,
  type FakeSession,
  type FakeStripe,
} from './support/fake-stripe.js';
import { testConfig } from './support/in-process.js';
import { TEST_GATEWAY_SECRET } from './support/payments.js';
import { previewToken, bearer } from './support/preview.js';
import { clientIp, createKeyFor, createStoreFor, dashboard, registerSeller, type Seller } from './support/seller.js';
import { startServer } from './support/server.js';

const PUBLIC_URL = 'https://shop-api.example.test';
const SECRET_KEY = 'sk_test_fake_saved';
const WEBHOOK_SECRET = 'whsec_test_saved';

let fake: FakeStripe;
let server: Awaited<ReturnType<typeof startServer>>;
let db: pg.Client;
let seller: Seller;
let store: { id: string };
let product: { id: string };
let config: ReturnType<typeof testConfig>;
const log = createLogger('silent');

beforeAll(async () => {
  fake = await startFakeStripe();
  const env = {
    PUBLIC_URL,
    STRIPE_SECRET_KEY: SECRET_KEY,
    STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    STRIPE_API_BASE: fake.url,
  };
  config = testConfig(env);
  server = await startServer({ ...env, TEST_GATEWAY_SECRET });
  db = new pg.Client({ connectionString: server.db.url });
  await db.connect();
  seller = await registerSeller(server.url);
  store = await createStoreFor(seller, 'Plugin Shop');
  product = await createProduct(seller, store.id, { name: 'Plugin', price: 9.99, deliveryMethods: ['licenseKeys'] });
  await importKeys(
    seller,
    store.id,
    product.id,
    Array.from({ length: 10 }, (_, i) => `PLUG-${i}-${randomBytes(4).toString('hex')}`),
  );
  const settings = await dashboard(seller, 'PATCH', `/api/dashboard/stores/${store.id}`, {
    settings: { paymentMethods: ['manual', 'stripe'] },
  });
  expect(settings.status, await settings.clone().text()).toBe(200);
});

afterAll(async () => {
  await db?.end();
  await server?.stop();
  await fake?.close();
});

const post = (path: string, body: unknown) =>
  fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp() },
    body: JSON.stringify(body),
  });

/** A pending order of the store, started with Stripe over HTTP (as the checkout does). */
async function startedOrder(): Promise<{ orderId: string; redirectUrl: string }> {
  const checkout = await post('/api/v1/checkout', {
    shopId: store.id,
    cart: [{ productId: product.id, quantity: 1 }],
    email: `buyer-${randomBytes(4).toString('hex')}@example.test`,
  });
  expect(checkout.status, await checkout.clone().text()).toBe(200);
  const { url, orderId } = await checkout.json();
  const start = await post('/api/checkout/start', {
    orderId,
    token: new URL(url).searchParams.get('token'),
    paymentMethod: 'stripe',
  });
  expect(start.status, await start.clone().text()).toBe(200);
  return { orderId, redirectUrl: (await start.json()).redirectUrl };
}

/** The order as the gateway reads it (its row). */
async function orderOf(orderId: string): Promise<Order> {
  const { rows } = await db.query(
    'select id, number, price_minor, currency, customer_email, created_at from "order" where id = $1',
    [orderId],
  );
  const row = rows[0];
  return {
    id: row.id,
    number: Number(row.number),
    priceMinor: Number(row.price_minor),
    currency: row.currency,
    customerEmail: row.customer_email,
    createdAt: row.created_at,
  } as unknown as Order;
}

/** An order that is nowhere but in the gateway's hands (the calls below need no row). */
const looseOrder = (priceMinor: number) =>
  ({
    id: newId(),
    number: 4242,
    priceMinor,
    currency: 'USD',
    customerEmail: 'buyer@example.test',
    createdAt: new Date(),
  }) as unknown as Order;

const storeObject = { name: 'Plugin Shop' } as Store;
const gatewayContext = () => ({ config, log, now: new Date() });
const saveStart = (order: Order) => stripeGateway.start(order, storeObject, gatewayContext(), { saveMethod: true });

const sign = (payload: string) => Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET });

/** The paid completion of a saving checkout's Checkout Session, as Stripe's webhook sends it. */
function completed(session: FakeSession, orderId: string, amountTotal = 999) {
  return completedSessionEvent(session, {
    amount_total: amountTotal,
    currency: 'usd',
    metadata: { orderId, saveMethod: '1' },
    client_reference_id: orderId,
  });
}

function sendEvent(event: unknown) {
  const body = JSON.stringify(event);
  return fetch(`${server.url}/api/payments/stripe/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'stripe-signature': sign(body) },
    body,
  });
}

async function savedRows(orderId: string) {
  const { rows } = await db.query(
    'select gateway, customer_ref, method_ref, livemode, store_id from saved_payment_method where order_id = $1',
    [orderId],
  );
  return rows;
}

const sessionOf = (redirectUrl: string) => [...fake.sessions.values()].find((s) => s.url === redirectUrl)!;

describe('a Stripe checkout that saves the payment method', () => {
  it('sets the method up for off-session use; its completion settles and records the customer and PaymentMethod', async () => {
    const { orderId } = await startedOrder();
    const before = fake.requests.length;
    const { redirectUrl } = await saveStart(await orderOf(orderId));
    const sent = fake.requests.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ method: 'POST', path: '/v1/checkout/sessions' });
    expect(sent[0]!.form).toMatchObject({
      mode: 'payment',
      customer_creation: 'always',
      'payment_intent_data[setup_future_usage]': 'off_session',
      'line_items[0][price_data][unit_amount]': '999',
      client_reference_id: orderId,
    });
    expect(formObject(sent[0]!.form, 'metadata')).toEqual({ orderId, saveMethod: '1' });
    const session = sessionOf(redirectUrl!);
    expect(session.customer).toMatch(/^cus_test_/);
    const intent = fake.paymentIntents.get(session.payment_intent)!;
    expect(intent).toMatchObject({ customer: session.customer, setup_future_usage: 'off_session' });

    const event = completed(session, orderId);
    const response = await sendEvent(event);
    expect(response.status, await response.clone().text()).toBe(200);
    expect(await response.json()).toEqual({ outcome: 'settled' });
    expect(fake.requests.some((r) => r.method === 'GET' && r.path === `/v1/payment_intents/${intent.id}`)).toBe(true);
    expect(await savedRows(orderId)).toEqual([
      {
        gateway: 'stripe',
        customer_ref: session.customer,
        method_ref: intent.payment_method,
        livemode: true,
        store_id: store.id,
      },
    ]);
    const { rows } = await db.query('select status from "order" where id = $1', [orderId]);
    expect(rows[0].status).toBe('completed');

    // The same event again: a duplicate; still one saved method.
    expect(await (await sendEvent(event)).json()).toEqual({ outcome: 'duplicate' });
    expect(await savedRows(orderId)).toHaveLength(1);
  });

  it('answers 503 and settles nothing while Stripe cannot give the PaymentIntent; the retry settles and saves', async () => {
    const { orderId } = await startedOrder();
    const session = sessionOf((await saveStart(await orderOf(orderId))).redirectUrl!);
    const event = completed(session, orderId);
    fake.failWith = 500;
    try {
      const refused = await sendEvent(event);
      expect(refused.status).toBe(503);
      expect((await refused.json()).code).toBe('service_unavailable');
    } finally {
      fake.failWith = undefined;
    }
    const pending = await db.query(
      'select o.status, (select count(*)::int from payment_notification n where n.order_id = o.id) as notes from "order" o where id = $1',
      [orderId],
    );
    expect(pending.rows[0]).toEqual({ status: 'pending', notes: 0 });
    expect(await savedRows(orderId)).toEqual([]);

    expect(await (await sendEvent(event)).json()).toEqual({ outcome: 'settled' });
    expect(await savedRows(orderId)).toHaveLength(1);
  });

  it('without saveMethod asks for neither and its completion saves nothing', async () => {
    const before = fake.requests.length;
    const { orderId, redirectUrl } = await startedOrder();
    const form = fake.requests.slice(before).find((r) => r.path === '/v1/checkout/sessions')!.form;
    expect(form.mode).toBe('payment');
    expect(form.customer_creation).toBeUndefined();
    expect(form['payment_intent_data[setup_future_usage]']).toBeUndefined();
    expect(formObject(form, 'metadata')).toEqual({ orderId });
    const session = sessionOf(redirectUrl);
    const event = completed(session, orderId);
    event.data.object.metadata = { orderId };
    expect(await (await sendEvent(event)).json()).toEqual({ outcome: 'settled' });
    expect(await savedRows(orderId)).toEqual([]);
  });

  it('makes a zero total (a trial) a setup session; its completion settles 0 with the SetupIntent’s method', async () => {
    const order = looseOrder(0);
    const before = fake.requests.length;
    const { redirectUrl } = await saveStart(order);
    const form = fake.requests.slice(before)[0]!.form;
    expect(form).toMatchObject({
      mode: 'setup',
      currency: 'usd',
      customer_creation: 'always',
      'setup_intent_data[metadata][saveMethod]': '1',
      'setup_intent_data[metadata][orderId]': order.id,
    });
    expect(
      Object.keys(form).filter((key) => key.startsWith('line_items') || key.startsWith('payment_intent_data')),
    ).toEqual([]);
    const session = sessionOf(redirectUrl!);
    expect(session.setup_intent).toMatch(/^seti_test_/);

    const body = JSON.stringify(
      completedSessionEvent(session, { currency: 'usd', metadata: { orderId: order.id, saveMethod: '1' } }),
    );
    const verified = verifyStripeNotification(config, Buffer.from(body), sign(body), new Date());
    expect(verified).toMatchObject({ kind: 'paid', orderId: order.id, amountMinor: 0, currency: 'USD' });
    if (verified?.kind !== 'paid') throw new Error('expected a paid notification');
    expect(verified.providerRef).toBe(session.setup_intent);
    const notification = await withSavedMethod(config, verified, log);
    expect(notification.savedMethod).toEqual({
      gateway: 'stripe',
      customerRef: session.customer,
      methodRef: fake.setupIntents.get(session.setup_intent!)!.payment_method,
    });
    expect(notification).not.toHaveProperty('saveFrom');
  });
});

/** A saved Stripe method of a session the fake completed, charged off-session as `card`. */
async function savedMethod(card: FakeCard = 'succeeds'): Promise<SavedMethod> {
  const order = looseOrder(999);
  const session = sessionOf((await saveStart(order)).redirectUrl!);
  const methodRef = fake.paymentIntents.get(session.payment_intent)!.payment_method!;
  fake.cards.set(methodRef, card);
  return {
    id: newId(),
    gateway: 'stripe',
    customerRef: session.customer,
    methodRef,
    // Not read by a charge: the method is nowhere but in the gateway's hands.
    storeId: newId(),
    livemode: false,
    orderId: order.id,
    subscriptionId: null,
    createdAt: new Date(),
  } satisfies SavedMethod;
}

const chargeContext = (cfg = config) => ({ deps: { config: cfg }, log }) as unknown as ServiceContext;
const charge = (method: SavedMethod, key: string, amount = 1500, cfg = config) =>
  stripeGateway.chargeSaved!(method, amount, 'USD', key, chargeContext(cfg));
const key = () => `sub_${randomBytes(6).toString('hex')}:2026-12-28T00:00:00Z:1`;

async function gatewayError(call: Promise<unknown>): Promise<string> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  return (error as AppError).appCode;
}

describe('chargeSaved: an off-session PaymentIntent on the saved customer and method', () => {
  it('sends customer, payment_method, amount, currency, off_session and confirm under the key; succeeded', async () => {
    const method = await savedMethod('succeeds');
    const idempotencyKey = key();
    const before = fake.requests.length;
    const result = await charge(method, idempotencyKey);
    expect(result).toEqual({ status: 'succeeded', providerRef: expect.stringMatching(/^pi_test_/) });
    const sent = fake.requests.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({
      method: 'POST',
      path: '/v1/payment_intents',
      idempotencyKey,
      authorization: `Bearer ${SECRET_KEY}`,
    });
    expect(sent[0]!.form).toMatchObject({
      amount: '1500',
      currency: 'usd',
      customer: method.customerRef,
      payment_method: method.methodRef,
      off_session: 'true',
      confirm: 'true',
      'metadata[savedMethodId]': method.id,
    });
    expect(fake.paymentIntents.get(result.providerRef!)).toMatchObject({ status: 'succeeded', amount: 1500 });
  });

  it('charges once per key: the same key again, or three at once, answers the first PaymentIntent', async () => {
    const method = await savedMethod('succeeds');
    const idempotencyKey = key();
    const before = fake.charges.length;
    const first = await charge(method, idempotencyKey);
    expect(await charge(method, idempotencyKey)).toEqual(first);
    const racing = await Promise.all([1, 2, 3].map(() => charge(method, idempotencyKey)));
    for (const result of racing) expect(result).toEqual(first);
    expect(fake.charges.length - before).toBe(1);
    await charge(method, key());
    expect(fake.charges.length - before).toBe(2);
  });

  it('answers a decline failed with its decline code, and the same key replays it without a second charge', async () => {
    const method = await savedMethod('declines');
    const idempotencyKey = key();
    const before = fake.charges.length;
    const result = await charge(method, idempotencyKey);
    expect(result).toEqual({
      status: 'failed',
      declineCode: 'insufficient_funds',
      providerRef: expect.stringMatching(/^pi_test_/),
    });
    expect(await charge(method, idempotencyKey)).toEqual(result);
    expect(fake.charges.length - before).toBe(1);
  });

  it('answers authentication_required with requires_action and the PaymentIntent to confirm', async () => {
    const method = await savedMethod('requires_authentication');
    const result = await charge(method, key());
    expect(result.status).toBe('requires_action');
    expect(fake.paymentIntents.get(result.providerRef!)).toMatchObject({ status: 'requires_action' });
  });

  it('answers a method Stripe does not know failed (resource_missing)', async () => {
    const method = await savedMethod();
    const unknown = { ...method, methodRef: 'pm_test_unknown' };
    expect(await charge(unknown, key())).toMatchObject({ status: 'failed', declineCode: 'resource_missing' });
  });

  it('throws gateway_error when Stripe fails or cannot be reached; the same key then charges once', async () => {
    const method = await savedMethod();
    const idempotencyKey = key();
    const before = fake.charges.length;
    fake.failWith = 500;
    try {
      expect(await gatewayError(charge(method, idempotencyKey))).toBe('gateway_error');
    } finally {
      fake.failWith = undefined;
    }
    const unreachable = testConfig({ STRIPE_SECRET_KEY: SECRET_KEY, STRIPE_API_BASE: 'http://127.0.0.1:9' });
    expect(await gatewayError(charge(method, idempotencyKey, 1500, unreachable))).toBe('gateway_error');
    expect(fake.charges.length - before).toBe(0);
    expect((await charge(method, idempotencyKey)).status).toBe('succeeded');
    expect(fake.charges.length - before).toBe(1);
  });

  it('maps stripe-node’s own errors: a card error without a decline code by its code, the rest thrown', () => {
    const card = new Stripe.errors.StripeCardError({ type: 'card_error', code: 'expired_card' });
    expect(chargeErrorResult(card)).toEqual({ status: 'failed', declineCode: 'expired_card', providerRef: null });
    const idempotency = new Stripe.errors.StripeIdempotencyError({ type: 'idempotency_error', statusCode: 400 });
    expect(() => chargeErrorResult(idempotency)).toThrow(AppError);
    const connection = new Stripe.errors.StripeConnectionError({ message: 'ECONNREFUSED' });
    expect(() => chargeErrorResult(connection)).toThrow(AppError);
  });
});

describe("a Stripe subscription's new payment method from the customer area (HTTP)", () => {
  const DAY = 86_400_000;

  /** A test-mode subscription to a monthly plan at 9.99, paid at Stripe: its id, the buyer, the saved method. */
  async function subscribedAtStripe(preview: string, email: string) {
    const plan = await createProduct(
      seller,
      store.id,
      {
        name: 'Editor Pro',
        price: 9.99,
        deliveryMethods: ['deliveryInstructions'],
        deliveryInstructions: 'Sign in with your e-mail.',
        plans: [{ interval: 'month', intervalCount: 1, price: 9.99, trialDays: 0 }],
      },
      'test',
    );
    const planId = (plan.plans as Array<{ id: string }>)[0]!.id;
    const checkout = await fetch(`${server.url}/api/v1/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp(), ...bearer(preview) },
      body: JSON.stringify({ shopId: store.id, cart: [{ productId: plan.id, planId, quantity: 1 }], email }),
    });
    expect(checkout.status, await checkout.clone().text()).toBe(200);
    const { orderId, url } = await checkout.json();
    const start = await post('/api/checkout/start', {
      orderId,
      token: new URL(url).searchParams.get('token'),
      paymentMethod: 'stripe',
    });
    expect(start.status, await start.clone().text()).toBe(200);
    const session = sessionOf((await start.json()).redirectUrl);
    expect(await (await sendEvent(completed(session, orderId))).json()).toEqual({ outcome: 'settled' });
    const { rows } = await db.query('select subscription_id from "order" where id = $1', [orderId]);
    const method = fake.paymentIntents.get(session.payment_intent)!.payment_method!;
    return { subscriptionId: rows[0].subscription_id as string, customer: session.customer!, method };
  }

  /** The test-mode customer area's session cookie of `email`, signed in with the e-mailed code. */
  async function signedIn(email: string): Promise<string> {
    const started = await post('/api/customer/auth/start', { storeId: store.id, email, mode: 'test' });
    expect(started.status, await started.clone().text()).toBe(204);
    let code: string | undefined;
    for (let tries = 0; !code && tries < 100; tries++) {
      const { emails } = await (await fetch(`${server.url}/dev/mailbox.json`)).json();
      const mail = (emails as Array<{ to: string; text: string }>).find((m) => m.to === email);
      code = mail && /\b(\d{6})\b/.exec(mail.text)?.[1];
      if (!code) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const verified = await post('/api/customer/auth/verify', { storeId: store.id, email, code, mode: 'test' });
    expect(verified.status, await verified.clone().text()).toBe(200);
    return verified.headers
      .getSetCookie()
      .find((c) => c.startsWith('svc_customer='))!
      .split(';')[0]!;
  }

  const updatePaymentMethod = (cookie: string, subscriptionId: string) =>
    fetch(`${server.url}/api/customer/subscriptions/${subscriptionId}/payment-method`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp(), cookie },
      body: '{}',
    });

  it('answers a setup session on the saved customer; its completion saves the method the next renewal charges', async () => {
    const preview = await previewToken(seller, store.id);
    const email = `subscriber-${randomBytes(4).toString('hex')}@example.test`;
    const sale = await subscribedAtStripe(preview, email);
    // The card of the first checkout would decline the renewal: only the new one can pay it.
    fake.cards.set(sale.method, 'declines');
    const cookie = await signedIn(email);

    // Another buyer of the store (their own session) gets 404, and Stripe is not asked.
    const stranger = await signedIn(`stranger-${randomBytes(4).toString('hex')}@example.test`);
    let before = fake.requests.length;
    const refused = await updatePaymentMethod(stranger, sale.subscriptionId);
    expect(refused.status).toBe(404);
    expect((await refused.json()).code).toBe('not_found');
    expect(fake.requests.length).toBe(before);

    before = fake.requests.length;
    const answered = await updatePaymentMethod(cookie, sale.subscriptionId);
    expect(answered.status, await answered.clone().text()).toBe(200);
    const { url } = await answered.json();
    expect(url).toMatch(/^https:\/\/checkout\.stripe\.test\//);
    const sent = fake.requests.slice(before).filter((r) => r.path === '/v1/checkout/sessions');
    expect(sent).toHaveLength(1);
    const { rows } = await db.query('select subdomain from store where id = $1', [store.id]);
    const account = `${PUBLIC_URL}/account/${rows[0].subdomain}?mode=test`;
    expect(sent[0]!.form).toMatchObject({
      mode: 'setup',
      customer: sale.customer,
      currency: 'usd',
      success_url: `${account}&done=payment-method`,
      cancel_url: account,
    });
    expect(formObject(sent[0]!.form, 'metadata')).toEqual({ subscriptionId: sale.subscriptionId, methodUpdate: '1' });
    expect(sent[0]!.form.customer_creation).toBeUndefined();
    const session = sessionOf(url);
    const newMethod = fake.setupIntents.get(session.setup_intent!)!.payment_method;

    const event = completedSessionEvent(session, { client_reference_id: sale.subscriptionId });
    const saved = await sendEvent(event);
    expect(saved.status, await saved.clone().text()).toBe(200);
    expect(await saved.json()).toEqual({ outcome: 'method_saved' });
    expect(
      fake.requests.some((r) => r.method === 'GET' && r.path === `/v1/setup_intents/${session.setup_intent}`),
    ).toBe(true);
    const methods = () =>
      db.query('select gateway, customer_ref, method_ref from saved_payment_method where subscription_id = $1', [
        sale.subscriptionId,
      ]);
    expect((await methods()).rows).toEqual([{ gateway: 'stripe', customer_ref: sale.customer, method_ref: newMethod }]);
    // A replay of the event is harmless.
    expect(await (await sendEvent(event)).json()).toEqual({ outcome: 'duplicate' });
    expect((await methods()).rows).toHaveLength(1);

    // The seller moves the test clock past the renewal: Stripe is asked to charge the new method.
    const testKey = await createKeyFor(seller, {
      scopes: ['subscription:read', 'subscription:write'],
      storeIds: [store.id],
      mode: 'test',
    });
    const charged = fake.charges.length;
    const advanced = await fetch(
      `${server.url}/api/merchant/v1/stores/${store.id}/subscriptions/${sale.subscriptionId}/advance`,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${testKey.key}`,
          'x-forwarded-for': clientIp(),
        },
        body: JSON.stringify({ to: new Date(Date.now() + 32 * DAY).toISOString() }),
      },
    );
    expect(advanced.status, await advanced.clone().text()).toBe(200);
    expect((await advanced.json()).subscription.status).toBe('active');
    const renewals = fake.charges.slice(charged);
    expect(renewals).toHaveLength(1);
    expect(renewals[0]).toMatchObject({
      status: 'succeeded',
      amount: 999,
      customer: sale.customer,
      payment_method: newMethod,
    });
  });
});
