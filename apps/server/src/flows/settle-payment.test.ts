/**
 * Payment rules against the real database, without HTTP (docs/decisions.md Payments):
 * - inbound notifications are handled once per (gateway, event id), settle only the stored
 *   amount in the stored currency, and refund only what was settled (settle-payment.ts handleNotification);
 * - the `test` and `stripe` gateways verify the raw bytes before anything is parsed
 *   (test-gateway.ts, stripe-gateway.ts; signed here independently of the code under test);
 * - a proof of manual payment is taken only for a pending order paid by `manual`, opened with
 *   its checkout token, and within the size limit; an order keeps its newest 5, rows and files,
 *   even under concurrent uploads (proofs.service.ts);
 * - a seller's refund calls the gateway only for a refundable order's gateway-held payments, and
 *   keeps the gateway's refund id even when the order was refunded meanwhile (gateways.ts, flows/refund-order.ts).
 * Every test makes its own store, products and orders; time comes from a ManualClock.
 */
import { createHmac, createHash, randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import Stripe from 'stripe';
import type { TPaymentMethod } from '@svc/schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../test/support/env.js';
import { createStore } from '../../../../test/support/factories.js';
import { serviceContext, contextOn } from '../../../../test/support/in-process.js';
import { openOrm, type Orm } from '../db/orm.js';
import { ManualClock } from '../lib/clock.js';
import { AppError } from '../lib/errors.js';
import type { AppDeps } from '../deps.js';
import type { ServiceContext } from '../modules/request/context.js';
import { LicenseKeySchema, StoredFileSchema } from '../modules/catalog/catalog.entities.js';
import { createProduct } from '../modules/catalog/catalog.service.js';
import { importKeys } from '../modules/catalog/key-store.js';
import { createOrder, startCheckout } from './place-order.js';
import { EventSchema } from '../modules/events/events.entities.js';
import { OrderSchema } from '../modules/orders/orders.entities.js';
import { StoreSchema } from '../modules/stores/stores.entities.js';
import { handleNotification, type PaymentNotification } from './settle-payment.js';
import { PaymentSchema } from '../modules/payments/payments.entities.js';
import {
  PROOF_MAX_BYTES,
  PROOFS_KEPT,
  paymentProofOf,
  uploadPaymentProof,
} from '../modules/payments/proofs.service.js';
import { refundAtGateways } from '../modules/payments/gateways.js';
import { refundOrder } from './refund-order.js';
import { verifyStripeNotification } from '../modules/payments/stripe-gateway.js';
import { verifyTestNotification } from '../modules/payments/test-gateway.js';

let orm: Orm;
/** What a settlement needs besides the database (the receipt's link and mail settings). */
let receiptDeps: AppDeps;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 2 });
  receiptDeps = serviceContext(orm).deps;
});
afterAll(() => orm?.close());

const T0 = Date.UTC(2026, 4, 4, 9, 30);
const TEST_SECRET = 'test-gateway-secret-payments-service';
const STRIPE_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const buyer = { ip: '203.0.113.21', userAgent: 'vitest', country: 'DE' };

const unique = () => randomBytes(6).toString('hex');
const email = () => `buyer-${unique()}@example.test`;

/** The AppError code a synchronous call throws (anything else fails the test). */
function codeThrown(call: () => unknown): string {
  try {
    call();
  } catch (error) {
    if (error instanceof AppError) return error.appCode;
    throw error;
  }
  throw new Error('expected an AppError');
}

interface Sale {
  clock: ManualClock;
  ctx: ServiceContext;
  storeId: string;
  productId: string;
  orderId: string;
  orderNumber: string;
  token: string;
  priceMinor: number;
}

/**
 * A fresh store selling one product at `price`, and a pending order of one of it. With `keys`
 * the product is delivered by license keys (that many in stock); otherwise by instructions.
 */
async function pendingOrder(
  opts: { price?: number; keys?: number; paymentMethods?: TPaymentMethod[]; env?: Record<string, string> } = {},
): Promise<Sale> {
  const clock = new ManualClock(T0);
  const ctx = serviceContext(orm, clock, opts.env);
  const store = await createStore(orm.em.fork());
  if (opts.paymentMethods)
    await orm.em
      .fork()
      .nativeUpdate(StoreSchema, { id: store.id }, { settings: { paymentMethods: opts.paymentMethods } });
  const keyed = opts.keys !== undefined;
  const product = await createProduct(ctx, {
    storeId: store.id,
    name: 'Game',
    price: opts.price ?? 19.99,
    deliveryMethods: keyed ? ['licenseKeys'] : ['deliveryInstructions'],
    deliveryInstructions: keyed ? '' : 'Download it from the site.',
  });
  if (opts.keys) {
    await importKeys(ctx, {
      storeId: store.id,
      productId: product.id,
      keys: Array.from({ length: opts.keys }, () => `KEY-${unique()}`),
    });
  }
  const { order, checkoutToken } = await createOrder(
    serviceContext(orm, clock, opts.env),
    { store: store.id, cart: [{ productId: product.id, quantity: 1 }], email: email() },
    buyer,
  );
  return {
    clock,
    ctx,
    storeId: store.id,
    productId: product.id,
    orderId: order.id,
    orderNumber: order.orderId,
    token: checkoutToken,
    priceMinor: Math.round(order.price * 100),
  };
}

const orderOf = (id: string) => orm.em.fork().findOneOrFail(OrderSchema, { id });
const paymentsOf = (orderId: string) => orm.em.fork().find(PaymentSchema, { order: orderId });
/** The outbox of a store, as a sorted list of event types (events of one instant have no order). */
const eventTypesOf = async (storeId: string) =>
  (await orm.em.fork().find(EventSchema, { store: storeId })).map((event) => event.type).sort();

function paid(sale: Sale, overrides: Partial<PaymentNotification> = {}): PaymentNotification {
  return {
    eventId: `tevt_${unique()}`,
    kind: 'paid',
    orderId: sale.orderId,
    amountMinor: sale.priceMinor,
    currency: 'USD',
    providerRef: `test:${unique()}`,
    ...overrides,
  };
}

/** Handles a notification as the webhook route does: a fresh EntityManager per request. */
const notify = (gateway: string, notification: PaymentNotification, at: Date) =>
  handleNotification(contextOn(orm.em.fork(), receiptDeps), { gateway, notification, now: at });

describe('handleNotification: settling', () => {
  it('settles a pending order paid in full and fulfils it in the same step', async () => {
    const sale = await pendingOrder({ keys: 1 });
    const notification = paid(sale);

    expect(await notify('test', notification, sale.clock.now())).toBe('settled');

    const order = await orderOf(sale.orderId);
    expect(order.status).toBe('completed');
    expect(order.paidMinor).toBe(sale.priceMinor);
    expect(order.paidAt?.getTime()).toBe(T0);
    expect(order.paymentMethod).toBe('test');
    expect(order.keyCount).toBe(1);
    const [key] = await orm.em.fork().find(LicenseKeySchema, { product: sale.productId });
    expect(key?.status).toBe('assigned');
    expect(key?.order?.id).toBe(sale.orderId);
    const payments = await paymentsOf(sale.orderId);
    expect(payments).toHaveLength(1);
    expect(payments[0]).toMatchObject({
      gateway: 'test',
      providerRef: notification.providerRef,
      amountMinor: sale.priceMinor,
      currency: 'USD',
      status: 'paid',
    });
    expect(await eventTypesOf(sale.storeId)).toEqual([
      'order.completed',
      'order.created',
      'order.paid',
      'product.created',
    ]);
  });

  it("records the settlement's events in order: order.paid before order.completed, as the fan-out reads them", async () => {
    const sale = await pendingOrder({ keys: 1 });
    expect(await notify('test', paid(sale), sale.clock.now())).toBe('settled');

    // One clock reading for both: the fan-out's order is (createdAt, seq).
    const events = await orm.em
      .fork()
      .find(
        EventSchema,
        { store: sale.storeId, type: { $like: 'order.%' } },
        { orderBy: { createdAt: 'asc', seq: 'asc' } },
      );
    expect(events.map((event) => event.type)).toEqual(['order.created', 'order.paid', 'order.completed']);
    expect(events[1]!.createdAt).toEqual(events[2]!.createdAt);
  });

  it('never settles an amount below the price or another currency; the right payment later does', async () => {
    const sale = await pendingOrder({ price: 20 });

    expect(await notify('test', paid(sale, { amountMinor: sale.priceMinor - 1 }), sale.clock.now())).toBe(
      'amount_mismatch',
    );
    let order = await orderOf(sale.orderId);
    expect(order).toMatchObject({ status: 'pending', paidMinor: 0, paidAt: null, paymentFlag: 'amount_mismatch' });

    expect(await notify('test', paid(sale, { currency: 'EUR' }), sale.clock.now())).toBe('currency_mismatch');
    order = await orderOf(sale.orderId);
    expect(order).toMatchObject({ status: 'pending', paymentFlag: 'currency_mismatch' });
    expect(await paymentsOf(sale.orderId)).toHaveLength(0);
    expect(await eventTypesOf(sale.storeId)).not.toContain('order.paid');

    expect(await notify('test', paid(sale), sale.clock.now())).toBe('settled');
    order = await orderOf(sale.orderId);
    expect(order).toMatchObject({ status: 'completed', paidMinor: 2000, paymentFlag: null });
  });

  it('records a failed payment and leaves the order pending', async () => {
    const sale = await pendingOrder();
    expect(await notify('test', paid(sale, { kind: 'failed' }), sale.clock.now())).toBe('recorded');
    expect((await orderOf(sale.orderId)).status).toBe('pending');
    expect(await paymentsOf(sale.orderId)).toHaveLength(0);
  });

  it('answers unknown_order for an order that does not exist, and records the notification', async () => {
    const clock = new ManualClock(T0);
    const notification: PaymentNotification = {
      eventId: `tevt_${unique()}`,
      kind: 'paid',
      orderId: `z${unique()}`,
      amountMinor: 100,
      currency: 'USD',
      providerRef: null,
    };

    expect(await notify('test', notification, clock.now())).toBe('unknown_order');

    const rows = await orm.em
      .fork()
      .execute<Array<{ outcome: string; order_id: string }>>(
        'select outcome, order_id from payment_notification where gateway = ? and event_id = ?',
        ['test', notification.eventId],
      );
    expect(rows).toEqual([{ outcome: 'unknown_order', order_id: notification.orderId }]);
    expect(await notify('test', notification, clock.now())).toBe('duplicate');
  });
});

describe('handleNotification: once per (gateway, event id)', () => {
  it('answers duplicate to the second identical notification and changes nothing', async () => {
    const sale = await pendingOrder({ keys: 2 });
    const notification = paid(sale);
    expect(await notify('test', notification, sale.clock.now())).toBe('settled');
    const before = await orderOf(sale.orderId);
    const events = await eventTypesOf(sale.storeId);

    sale.clock.advance(60_000);
    expect(await notify('test', notification, sale.clock.now())).toBe('duplicate');

    const after = await orderOf(sale.orderId);
    expect(after.updatedAt.getTime()).toBe(before.updatedAt.getTime());
    expect(after.version).toBe(before.version);
    expect(after.keyCount).toBe(1);
    expect(await paymentsOf(sale.orderId)).toHaveLength(1);
    expect(await eventTypesOf(sale.storeId)).toEqual(events);
  });

  it('does not act on a repeated mismatch either (the flag and its time stay as first recorded)', async () => {
    const sale = await pendingOrder();
    const short = paid(sale, { amountMinor: 1 });
    expect(await notify('test', short, sale.clock.now())).toBe('amount_mismatch');
    const flaggedAt = (await orderOf(sale.orderId)).updatedAt.getTime();

    sale.clock.advance(5 * 60_000);
    expect(await notify('test', short, sale.clock.now())).toBe('duplicate');
    expect((await orderOf(sale.orderId)).updatedAt.getTime()).toBe(flaggedAt);
  });

  it('handles the same event id from another gateway on its own', async () => {
    const sale = await pendingOrder();
    const eventId = `evt_${unique()}`;
    expect(await notify('test', paid(sale, { eventId, amountMinor: 1 }), sale.clock.now())).toBe('amount_mismatch');
    expect(await notify('stripe', paid(sale, { eventId }), sale.clock.now())).toBe('settled');
    expect((await orderOf(sale.orderId)).status).toBe('completed');
  });

  it('settles once when the same notification arrives twice at the same moment', async () => {
    const sale = await pendingOrder({ keys: 2 });
    const notification = paid(sale);
    const outcomes = await Promise.all([
      notify('test', notification, sale.clock.now()),
      notify('test', notification, sale.clock.now()),
    ]);
    expect(outcomes.sort()).toEqual(['duplicate', 'settled']);
    expect(await paymentsOf(sale.orderId)).toHaveLength(1);
    expect((await orderOf(sale.orderId)).keyCount).toBe(1);
  });
});

describe('handleNotification: refunds', () => {
  it('refunds a settled order: keys revoked, payment refunded, order.refunded written', async () => {
    const sale = await pendingOrder({ keys: 1 });
    expect(await notify('test', paid(sale), sale.clock.now())).toBe('settled');
    sale.clock.advance(3600_000);

    expect(await notify('test', paid(sale, { kind: 'refunded' }), sale.clock.now())).toBe('refunded');

    const order = await orderOf(sale.orderId);
    expect(order.status).toBe('refunded');
    expect(order.refundedAt?.getTime()).toBe(T0 + 3600_000);
    const [key] = await orm.em.fork().find(LicenseKeySchema, { product: sale.productId });
    expect(key?.status).toBe('revoked');
    expect((await paymentsOf(sale.orderId)).map((p) => p.status)).toEqual(['refunded']);
    expect(await eventTypesOf(sale.storeId)).toContain('order.refunded');
  });

  it('answers not_refundable for an order that was never settled, and leaves it pending', async () => {
    const sale = await pendingOrder();
    expect(await notify('test', paid(sale, { kind: 'refunded' }), sale.clock.now())).toBe('not_refundable');
    const order = await orderOf(sale.orderId);
    expect(order).toMatchObject({ status: 'pending', refundedAt: null });
    expect(await eventTypesOf(sale.storeId)).not.toContain('order.refunded');
  });
});

describe('the seller refund at the gateway (gateways.ts refundAtGateways, refund-order.ts refundOrder)', () => {
  /** The AppError code a call rejects with ('resolved' when it does not reject; anything else fails the test). */
  async function codeOf(promise: Promise<unknown>): Promise<string> {
    try {
      await promise;
      return 'resolved';
    } catch (error) {
      if (error instanceof AppError) return error.appCode;
      throw error;
    }
  }

  it('calls no gateway for a pending, a refunded or a test-paid order; a Stripe payment it cannot refund is gateway_error with nothing changed', async () => {
    // No STRIPE_SECRET_KEY here: a Stripe refund that were attempted would be refused.
    const pending = await pendingOrder();
    expect(await refundAtGateways({ ...pending.ctx, em: orm.em.fork() }, await orderOf(pending.orderId))).toEqual(
      new Map(),
    );

    const viaTest = await pendingOrder({ keys: 1 });
    expect(await notify('test', paid(viaTest), viaTest.clock.now())).toBe('settled');
    expect(await refundAtGateways({ ...viaTest.ctx, em: orm.em.fork() }, await orderOf(viaTest.orderId))).toEqual(
      new Map(),
    );

    const viaStripe = await pendingOrder({ keys: 1 });
    expect(await notify('stripe', paid(viaStripe, { providerRef: `pi_${unique()}` }), viaStripe.clock.now())).toBe(
      'settled',
    );
    const state = async () => {
      const { status, keyCount, refundedAt, updatedAt } = await orderOf(viaStripe.orderId);
      const payments = (await paymentsOf(viaStripe.orderId)).map((p) => [p.status, p.refundRef, p.updatedAt]);
      return { status, keyCount, refundedAt, updatedAt, payments };
    };
    const before = await state();
    expect(before).toMatchObject({ status: 'completed', keyCount: 1, payments: [['paid', null, expect.any(Date)]] });
    const order = await orderOf(viaStripe.orderId);
    expect(await codeOf(refundAtGateways({ ...viaStripe.ctx, em: orm.em.fork() }, order))).toBe('gateway_error');
    expect(await state()).toEqual(before);

    // Refunded by Stripe's own notification: the seller's refund makes no call.
    expect(await notify('stripe', paid(viaStripe, { kind: 'refunded' }), viaStripe.clock.now())).toBe('refunded');
    const refunded = await orderOf(viaStripe.orderId);
    expect(await refundAtGateways({ ...viaStripe.ctx, em: orm.em.fork() }, refunded)).toEqual(new Map());
  });

  it("records the gateway's refund id on the payment, also when the order was refunded meanwhile, with one order.refunded", async () => {
    const sale = await pendingOrder({ keys: 1 });
    expect(await notify('stripe', paid(sale, { providerRef: `pi_${unique()}` }), sale.clock.now())).toBe('settled');
    const [payment] = await paymentsOf(sale.orderId);
    expect(payment).toMatchObject({ status: 'paid', refundRef: null });
    await refundOrder(contextOn(orm.em.fork()), {
      orderId: sale.orderId,
      now: sale.clock.now(),
      refunds: new Map([[payment!.id, 're_first']]),
    });
    expect(await paymentsOf(sale.orderId)).toEqual([
      expect.objectContaining({ status: 'refunded', refundRef: 're_first' }),
    ]);

    const raced = await pendingOrder({ keys: 1 });
    expect(await notify('stripe', paid(raced, { providerRef: `pi_${unique()}` }), raced.clock.now())).toBe('settled');
    const [racedPayment] = await paymentsOf(raced.orderId);
    // charge.refunded lands between our call to Stripe and our commit.
    expect(await notify('stripe', paid(raced, { kind: 'refunded' }), raced.clock.now())).toBe('refunded');
    const order = await refundOrder(contextOn(orm.em.fork()), {
      orderId: raced.orderId,
      now: raced.clock.now(),
      refunds: new Map([[racedPayment!.id, 're_raced']]),
    });
    expect(order.status).toBe('refunded');
    expect(await paymentsOf(raced.orderId)).toEqual([
      expect.objectContaining({ status: 'refunded', refundRef: 're_raced' }),
    ]);
    expect((await eventTypesOf(raced.storeId)).filter((type) => type === 'order.refunded')).toHaveLength(1);
  });
});

/** What a test-gateway client sends: the HMAC-SHA256 of `<t>.<raw body>` under TEST_GATEWAY_SECRET. */
function testSignature(body: string, t: number, secret = TEST_SECRET): string {
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
}

describe('test gateway verification', () => {
  const now = new Date(T0);
  const t = Math.floor(T0 / 1000);
  const body = (fields: Record<string, unknown> = {}) =>
    JSON.stringify({
      id: 'tevt_1',
      type: 'payment.succeeded',
      orderId: 'o1abc',
      amount: 19.99,
      currency: 'USD',
      ...fields,
    });
  const verify = (raw: string, header: string | undefined) =>
    verifyTestNotification(TEST_SECRET, Buffer.from(raw), header, now);

  it('turns a correctly signed body into a notification', () => {
    const raw = body();
    expect(verify(raw, testSignature(raw, t))).toEqual({
      eventId: 'tevt_1',
      kind: 'paid',
      orderId: 'o1abc',
      amountMinor: 1999,
      currency: 'USD',
      providerRef: 'test:tevt_1',
    });
    const refund = body({ type: 'payment.refunded' });
    expect(verify(refund, testSignature(refund, t)).kind).toBe('refunded');
    const failed = body({ type: 'payment.failed' });
    expect(verify(failed, testSignature(failed, t)).kind).toBe('failed');
  });

  it('refuses a wrong secret, a changed body and a missing or malformed header', () => {
    const raw = body();
    expect(codeThrown(() => verify(raw, testSignature(raw, t, 'another-secret')))).toBe('signature_invalid');
    expect(codeThrown(() => verify(body({ amount: 0.01 }), testSignature(raw, t)))).toBe('signature_invalid');
    expect(codeThrown(() => verify(`${raw} `, testSignature(raw, t)))).toBe('signature_invalid');
    expect(codeThrown(() => verify(raw, undefined))).toBe('signature_invalid');
    expect(codeThrown(() => verify(raw, 'garbage'))).toBe('signature_invalid');
    expect(codeThrown(() => verify(raw, `t=${t}`))).toBe('signature_invalid');
    expect(codeThrown(() => verify(raw, testSignature(raw, t).replace(`t=${t}`, 't=soon')))).toBe('signature_invalid');
  });

  it('accepts a timestamp up to 300 s from now either way and refuses one further off', () => {
    const raw = body();
    for (const offset of [-300, 300]) expect(verify(raw, testSignature(raw, t + offset)).eventId).toBe('tevt_1');
    for (const offset of [-301, 301])
      expect(codeThrown(() => verify(raw, testSignature(raw, t + offset)))).toBe('signature_invalid');
  });

  it('refuses a correctly signed body that is not a valid notification', () => {
    for (const raw of [
      'not json',
      body({ extra: true }),
      body({ type: 'payment.disputed' }),
      body({ currency: 'usd' }),
      body({ amount: -1 }),
      body({ amount: 19.999 }),
      JSON.stringify({ id: 'tevt_1', type: 'payment.succeeded', amount: 1, currency: 'USD' }),
    ]) {
      expect(codeThrown(() => verify(raw, testSignature(raw, t)))).toBe('validation_failed');
    }
  });

  it('is not_found when TEST_GATEWAY_SECRET is not configured', () => {
    const raw = body();
    expect(codeThrown(() => verifyTestNotification(undefined, Buffer.from(raw), testSignature(raw, t), now))).toBe(
      'not_found',
    );
  });
});

describe('stripe gateway verification', () => {
  const now = new Date(T0);
  const t = Math.floor(T0 / 1000);
  const config = () => serviceContext(orm, new ManualClock(T0), { STRIPE_WEBHOOK_SECRET: STRIPE_SECRET }).deps.config;
  const sign = (payload: string, timestamp = t, secret = STRIPE_SECRET) =>
    Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp });
  const verify = (payload: string, header: string | undefined) =>
    verifyStripeNotification(config(), Buffer.from(payload), header, now);

  const sessionEvent = (orderId: string, fields: Record<string, unknown> = {}, type = 'checkout.session.completed') =>
    JSON.stringify({
      id: `evt_${unique()}`,
      object: 'event',
      type,
      data: {
        object: {
          id: `cs_test_${unique()}`,
          object: 'checkout.session',
          payment_status: 'paid',
          amount_total: 1999,
          currency: 'usd',
          metadata: { orderId },
          payment_intent: 'pi_test_1',
          ...fields,
        },
      },
    });
  const refundEvent = (orderId: string, refunded: boolean) =>
    JSON.stringify({
      id: `evt_${unique()}`,
      object: 'event',
      type: 'charge.refunded',
      data: {
        object: {
          id: 'ch_test_1',
          object: 'charge',
          amount: 1999,
          amount_refunded: refunded ? 1999 : 500,
          refunded,
          currency: 'usd',
          payment_intent: 'pi_test_1',
          metadata: { orderId },
        },
      },
    });

  it('turns a paid Checkout Session into a paid notification that settles the order', async () => {
    const sale = await pendingOrder();
    const payload = sessionEvent(sale.orderId);
    const notification = verify(payload, sign(payload));
    expect(notification).toEqual({
      eventId: JSON.parse(payload).id,
      kind: 'paid',
      orderId: sale.orderId,
      amountMinor: 1999,
      currency: 'USD',
      providerRef: 'pi_test_1',
    });

    expect(await notify('stripe', notification as PaymentNotification, sale.clock.now())).toBe('settled');
    expect(await orderOf(sale.orderId)).toMatchObject({
      status: 'completed',
      paymentMethod: 'stripe',
      paidMinor: 1999,
    });
  });

  it('maps async outcomes and full refunds, and ignores what is not a payment of ours', () => {
    const orderId = `o${unique()}`;
    const check = (payload: string) => verify(payload, sign(payload));
    expect(check(sessionEvent(orderId, {}, 'checkout.session.async_payment_succeeded'))?.kind).toBe('paid');
    expect(
      check(sessionEvent(orderId, { payment_status: 'unpaid' }, 'checkout.session.async_payment_failed'))?.kind,
    ).toBe('failed');
    expect(check(refundEvent(orderId, true))).toMatchObject({
      kind: 'refunded',
      orderId,
      amountMinor: 1999,
      currency: 'USD',
      providerRef: 'pi_test_1',
    });

    expect(check(refundEvent(orderId, false))).toBeNull(); // a partial refund
    expect(check(sessionEvent(orderId, { payment_status: 'unpaid' }))).toBeNull(); // an async payment still on its way
    expect(check(sessionEvent('Not-One-Of-Ours!'))).toBeNull();
    expect(check(sessionEvent(orderId, { metadata: {} }))).toBeNull();
    expect(check(sessionEvent(orderId, {}, 'customer.created'))).toBeNull();
  });

  it('refuses a wrong secret, a changed body, a missing header, and a stale or future timestamp', () => {
    const payload = sessionEvent(`o${unique()}`);
    expect(codeThrown(() => verify(payload, sign(payload, t, `whsec_${randomBytes(24).toString('base64')}`)))).toBe(
      'signature_invalid',
    );
    expect(codeThrown(() => verify(payload.replace('1999', '1'), sign(payload)))).toBe('signature_invalid');
    expect(codeThrown(() => verify(payload, undefined))).toBe('signature_invalid');
    expect(codeThrown(() => verify(payload, 'garbage'))).toBe('signature_invalid');
    expect(verify(payload, sign(payload, t - 300))).not.toBeNull();
    expect(codeThrown(() => verify(payload, sign(payload, t - 301)))).toBe('signature_invalid');
    expect(verify(payload, sign(payload, t + 300))).not.toBeNull();
    expect(codeThrown(() => verify(payload, sign(payload, t + 301)))).toBe('signature_invalid');
  });

  it('refuses a correctly signed body that is not an event, and is not_found without STRIPE_WEBHOOK_SECRET', () => {
    for (const payload of ['not json', 'null', JSON.stringify({ id: 'evt_1', type: 'checkout.session.completed' })]) {
      expect(codeThrown(() => verify(payload, sign(payload)))).toBe('validation_failed');
    }
    const payload = sessionEvent(`o${unique()}`);
    const unconfigured = serviceContext(orm, new ManualClock(T0)).deps.config;
    expect(codeThrown(() => verifyStripeNotification(unconfigured, Buffer.from(payload), sign(payload), now))).toBe(
      'not_found',
    );
  });
});

/** `size` bytes, produced lazily in 64 KiB chunks, as an upload arrives. */
function bytes(size: number, fill = 0x61): Readable {
  const chunk = Buffer.alloc(64 * 1024, fill);
  let left = size;
  return new Readable({
    read() {
      if (left <= 0) return void this.push(null);
      const n = Math.min(left, chunk.length);
      left -= n;
      this.push(chunk.subarray(0, n));
    },
  });
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A pending order whose buyer chose manual payment. */
async function manualOrder(env?: Record<string, string>): Promise<Sale> {
  const sale = await pendingOrder(env ? { env } : {});
  await startCheckout(sale.ctx, { orderId: sale.orderId, token: sale.token, paymentMethod: 'manual' }, buyer);
  return sale;
}

const proof = (
  sale: Sale,
  overrides: Partial<{ token: string; orderId: string; name: string; stream: Readable }> = {},
) => ({
  orderId: sale.orderId,
  token: sale.token,
  name: 'receipt.pdf',
  contentType: 'application/pdf',
  stream: Readable.from([Buffer.from('%PDF-1.7 proof of transfer')]),
  ...overrides,
});

describe('payment proofs', () => {
  it('stores the proof of a pending manual order and attaches it for the seller', async () => {
    const sale = await manualOrder();
    const content = Buffer.from(`transfer ${unique()}`);

    const result = await uploadPaymentProof(
      sale.ctx,
      proof(sale, { name: 'C:\\fakepath\\receipt.pdf', stream: Readable.from([content]) }),
    );

    expect(result).toEqual({
      orderId: sale.orderId,
      proof: { name: 'receipt.pdf', size: content.length, contentType: 'application/pdf' },
    });
    const order = await orderOf(sale.orderId);
    expect(order.status).toBe('pending');
    const file = await paymentProofOf(sale.ctx, sale.storeId, sale.orderId);
    expect(file.id).toBe(order.paymentProofFileId);
    expect(file).toMatchObject({
      name: 'receipt.pdf',
      size: content.length,
      sha256: createHash('sha256').update(content).digest('hex'),
      product: null,
    });
    expect(await readAll(sale.ctx.deps.storage.read(file.storageKey))).toEqual(content);
    expect((await paymentProofOf(sale.ctx, sale.storeId, sale.orderNumber)).id).toBe(file.id);
  });

  it('shows a proof to its own store only, and answers not_found for an order without one', async () => {
    const sale = await manualOrder();
    await uploadPaymentProof(sale.ctx, proof(sale));
    const other = await createStore(orm.em.fork());
    await expect(paymentProofOf(sale.ctx, other.id, sale.orderId)).rejects.toMatchObject({ appCode: 'not_found' });

    const bare = await manualOrder();
    await expect(paymentProofOf(bare.ctx, bare.storeId, bare.orderId)).rejects.toMatchObject({ appCode: 'not_found' });
  });

  it('refuses a proof unless the buyer chose manual payment (conflict)', async () => {
    const notStarted = await pendingOrder();
    await expect(uploadPaymentProof(notStarted.ctx, proof(notStarted))).rejects.toMatchObject({ appCode: 'conflict' });

    const env = { TEST_GATEWAY_SECRET: TEST_SECRET };
    const byTest = await pendingOrder({ paymentMethods: ['manual', 'test'], env });
    await startCheckout(byTest.ctx, { orderId: byTest.orderId, token: byTest.token, paymentMethod: 'test' }, buyer);
    await expect(uploadPaymentProof(byTest.ctx, proof(byTest))).rejects.toMatchObject({ appCode: 'conflict' });
    expect((await orderOf(byTest.orderId)).paymentProofFileId).toBeNull();
  });

  it('refuses a proof for an order that is no longer pending (order_not_pending)', async () => {
    const sale = await manualOrder();
    expect(await notify('test', paid(sale), sale.clock.now())).toBe('settled');
    await expect(uploadPaymentProof(sale.ctx, proof(sale))).rejects.toMatchObject({ appCode: 'order_not_pending' });
    expect((await orderOf(sale.orderId)).paymentProofFileId).toBeNull();
  });

  it('refuses a proof for an order past its checkout lifetime, though the expiry job has not run yet', async () => {
    const sale = await manualOrder();
    sale.clock.advance(sale.ctx.deps.config.checkoutLifetimeMs);
    expect((await orderOf(sale.orderId)).status).toBe('pending');
    await expect(uploadPaymentProof(sale.ctx, proof(sale))).rejects.toMatchObject({ appCode: 'order_not_pending' });
    expect((await orderOf(sale.orderId)).paymentProofFileId).toBeNull();
  });

  it('needs the checkout token: a wrong one is store_forbidden, an unknown order not_found', async () => {
    const sale = await manualOrder();
    const other = await manualOrder();
    await expect(uploadPaymentProof(sale.ctx, proof(sale, { token: other.token }))).rejects.toMatchObject({
      appCode: 'store_forbidden',
    });
    await expect(uploadPaymentProof(sale.ctx, proof(sale, { orderId: `z${unique()}` }))).rejects.toMatchObject({
      appCode: 'not_found',
    });
    expect((await orderOf(sale.orderId)).paymentProofFileId).toBeNull();
  });

  it('refuses a proof over 10 MiB (payload_too_large) and keeps nothing of it', async () => {
    const sale = await manualOrder();
    await expect(
      uploadPaymentProof(sale.ctx, proof(sale, { stream: bytes(PROOF_MAX_BYTES + 1) })),
    ).rejects.toMatchObject({ appCode: 'payload_too_large' });
    expect((await orderOf(sale.orderId)).paymentProofFileId).toBeNull();
    expect(await readdir(path.join(sale.ctx.deps.config.fileStorageDir, sale.storeId, 'proofs'))).toEqual([]);
  });

  it('holds proofs to FILE_MAX_BYTES when that is lower', async () => {
    const sale = await manualOrder({ FILE_MAX_BYTES: '1024' });
    await expect(uploadPaymentProof(sale.ctx, proof(sale, { stream: bytes(1025) }))).rejects.toMatchObject({
      appCode: 'payload_too_large',
    });
    const stored = await uploadPaymentProof(sale.ctx, proof(sale, { stream: bytes(1024) }));
    expect(stored.proof.size).toBe(1024);
  });
});

describe('payment proofs kept per order', () => {
  /** The order's proof rows, oldest first, with what storage holds of each. */
  async function keptProofs(sale: Sale) {
    const rows = await orm.em
      .fork()
      .find(StoredFileSchema, { order: sale.orderId }, { orderBy: { proofNumber: 'asc' } });
    return Promise.all(
      rows.map(async (row) => ({
        number: row.proofNumber,
        content: (await readAll(sale.ctx.deps.storage.read(row.storageKey))).toString(),
      })),
    );
  }
  /** The files in the store's proof directory (the store has this one order). */
  const storedFiles = (sale: Sale) =>
    readdir(path.join(sale.ctx.deps.config.fileStorageDir, sale.storeId, 'proofs')).then((names) => names.length);
  const send = (sale: Sale, content: string, ctx = sale.ctx) =>
    uploadPaymentProof(ctx, proof(sale, { stream: Readable.from([Buffer.from(content)]) }));

  it('keeps the newest 5: storing a 6th and a 7th drops the oldest rows and their files', async () => {
    expect(PROOFS_KEPT).toBe(5);
    const sale = await manualOrder();
    // The clock stands still: the newest is the last stored, not the latest timestamp.
    for (let i = 1; i <= 7; i++) await send(sale, `proof ${i}`);

    expect(await keptProofs(sale)).toEqual([3, 4, 5, 6, 7].map((number) => ({ number, content: `proof ${number}` })));
    expect(await storedFiles(sale)).toBe(5);
    const shown = await paymentProofOf(sale.ctx, sale.storeId, sale.orderId);
    expect((await readAll(sale.ctx.deps.storage.read(shown.storageKey))).toString()).toBe('proof 7');
  });

  it('keeps the newest 5 of concurrent uploads to one order, each kept row with its file', async () => {
    const sale = await manualOrder();
    // Each upload its own EntityManager (as each request has), all on the one storage.
    await Promise.all(
      Array.from({ length: 9 }, (_, i) => send(sale, `proof ${i + 1}`, { ...sale.ctx, em: orm.em.fork() })),
    );

    const kept = await keptProofs(sale);
    expect(kept.map((p) => p.number)).toEqual([5, 6, 7, 8, 9]);
    expect(new Set(kept.map((p) => p.content)).size).toBe(5);
    expect(await storedFiles(sale)).toBe(5);
    const order = await orderOf(sale.orderId);
    const newest = await orm.em.fork().findOneOrFail(StoredFileSchema, { order: sale.orderId, proofNumber: 9 });
    expect(order.paymentProofFileId).toBe(newest.id);
  });

  it('drops nothing when the new proof is not stored: the order paid while its file was written', async () => {
    const sale = await manualOrder();
    for (let i = 1; i <= 5; i++) await send(sale, `proof ${i}`);
    const storage = sale.ctx.deps.storage;
    const settledMidway: ServiceContext = {
      ...sale.ctx,
      deps: {
        ...sale.ctx.deps,
        storage: {
          read: (key) => storage.read(key),
          remove: (key) => storage.remove(key),
          async write(key, source, maxBytes) {
            const written = await storage.write(key, source, maxBytes);
            expect(await notify('test', paid(sale), sale.clock.now())).toBe('settled');
            return written;
          },
        },
      },
    };

    await expect(send(sale, 'proof 6', settledMidway)).rejects.toMatchObject({ appCode: 'order_not_pending' });
    expect(await keptProofs(sale)).toEqual([1, 2, 3, 4, 5].map((number) => ({ number, content: `proof ${number}` })));
    expect(await storedFiles(sale)).toBe(5);
  });
});
