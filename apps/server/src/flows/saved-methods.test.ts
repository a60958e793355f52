/**
 * Saved payment methods and off-session charges against the real database, without HTTP
 * (docs/decisions.md, Saved payment methods):
 * - a paid checkout's notification that carries a saved method records it with the settlement,
 *   once (a repeat of the notification adds nothing); a failed one saves nothing and leaves the
 *   order pending; savedMethodOfOrder reads it back;
 * - the test gateway's chargeSaved answers each test card's behaviour, and is idempotent by key:
 *   the same key twice, or eight times at once, records one charge and answers the same; the same
 *   key with another amount is refused (`gateway_error`);
 * - `manual` has no chargeSaved.
 * Every test makes its own store, product and order; time comes from a ManualClock.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../test/support/env.js';
import { createStore } from '../../../../test/support/factories.js';
import { serviceContext } from '../../../../test/support/in-process.js';
import { openOrm, type Orm } from '../db/orm.js';
import { ManualClock } from '../lib/clock.js';
import { AppError } from '../lib/errors.js';
import { createProduct } from '../modules/catalog/catalog.service.js';
import { OrderSchema } from '../modules/orders/orders.entities.js';
import type { SavedMethodRefs, TestCard } from '../modules/payments/gateway.js';
import { GATEWAYS, testGateway } from '../modules/payments/gateways.js';
import { SavedPaymentMethodSchema, TestGatewayChargeSchema } from '../modules/payments/payments.entities.js';
import { savedMethodOfOrder, saveMethodOfOrder } from '../modules/payments/payments.service.js';
import { createOrder } from './place-order.js';
import { handleNotification } from './settle-payment.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 10 });
});
afterAll(() => orm?.close());

const T0 = Date.UTC(2026, 10, 28, 9, 30);
const buyer = { ip: '203.0.113.41', userAgent: 'vitest', country: 'DE' };
const unique = () => randomBytes(6).toString('hex');

/** A fresh store and a pending order of one product at 12.50 USD. */
async function pendingOrder() {
  const clock = new ManualClock(T0);
  const ctx = serviceContext(orm, clock);
  const store = await createStore(orm.em.fork());
  const product = await createProduct(ctx, {
    storeId: store.id,
    name: 'Plugin',
    price: 12.5,
    deliveryMethods: ['deliveryInstructions'],
    deliveryInstructions: 'Download it from the site.',
  });
  const { order } = await createOrder(
    serviceContext(orm, clock),
    { store: store.id, cart: [{ productId: product.id, quantity: 1 }], email: `buyer-${unique()}@example.test` },
    buyer,
  );
  return { clock, ctx, storeId: store.id, orderId: order.id };
}

/** The order paid on the test gateway's page with `card` (a notification carrying the saved card). */
async function paidWith(card: TestCard) {
  const sale = await pendingOrder();
  const savedMethod: SavedMethodRefs = { gateway: 'test', customerRef: null, methodRef: card };
  const notification = {
    eventId: `page_${unique()}`,
    kind: 'paid' as const,
    orderId: sale.orderId,
    amountMinor: 1250,
    currency: 'USD',
    providerRef: `test:${unique()}`,
    savedMethod,
  };
  expect(
    await handleNotification(serviceContext(orm, sale.clock), { gateway: 'test', notification, now: sale.clock.now() }),
  ).toBe('settled');
  const method = await savedMethodOfOrder(serviceContext(orm, sale.clock), sale.orderId);
  expect(method).not.toBeNull();
  return { ...sale, notification, method: method! };
}

const chargesOf = (methodId: string) => orm.em.fork().find(TestGatewayChargeSchema, { method: methodId });

describe('saving a payment method at checkout', () => {
  it('records the saved card with the settlement, once, and savedMethodOfOrder reads it back', async () => {
    const sale = await paidWith('declines_renewals');
    expect(sale.method).toMatchObject({
      gateway: 'test',
      customerRef: null,
      methodRef: 'declines_renewals',
      livemode: true,
      createdAt: new Date(T0),
    });
    expect(sale.method.storeId).toBe(sale.storeId);
    expect(sale.method.orderId).toBe(sale.orderId);
    expect((await orm.em.fork().findOneOrFail(OrderSchema, { id: sale.orderId })).status).toBe('completed');

    // The same notification again: a duplicate, and still one saved method.
    expect(
      await handleNotification(serviceContext(orm, sale.clock), {
        gateway: 'test',
        notification: sale.notification,
        now: sale.clock.now(),
      }),
    ).toBe('duplicate');
    // Saving again for the order keeps the first.
    const order = await orm.em.fork().findOneOrFail(OrderSchema, { id: sale.orderId });
    const ctx = serviceContext(orm, sale.clock);
    await saveMethodOfOrder(ctx, {
      order,
      method: { gateway: 'test', customerRef: null, methodRef: 'succeeds' },
      now: sale.clock.now(),
    });
    await ctx.em.flush();
    const rows = await orm.em.fork().find(SavedPaymentMethodSchema, { order: sale.orderId });
    expect(rows.map((row) => row.methodRef)).toEqual(['declines_renewals']);
  });

  it('saves nothing when the payment fails (Declines), and the order stays pending', async () => {
    const sale = await pendingOrder();
    const outcome = await handleNotification(serviceContext(orm, sale.clock), {
      gateway: 'test',
      notification: {
        eventId: `page_${unique()}`,
        kind: 'failed',
        orderId: sale.orderId,
        amountMinor: 1250,
        currency: 'USD',
        providerRef: null,
      },
      now: sale.clock.now(),
    });
    expect(outcome).toBe('recorded');
    expect(await savedMethodOfOrder(serviceContext(orm), sale.orderId)).toBeNull();
    expect((await orm.em.fork().findOneOrFail(OrderSchema, { id: sale.orderId })).status).toBe('pending');
  });
});

describe('the test gateway charging a saved card (chargeSaved)', () => {
  it.each([
    ['succeeds', { status: 'succeeded' }],
    ['declines_renewals', { status: 'failed', declineCode: 'card_declined' }],
    ['requires_authentication', { status: 'requires_action' }],
  ] as const)('answers the card %s as its behaviour', async (card, expected) => {
    const { method, clock } = await paidWith(card);
    const result = await testGateway.chargeSaved!(method, 1250, 'USD', `renew-${unique()}`, serviceContext(orm, clock));
    expect(result).toMatchObject(expected);
    expect(result.providerRef).toMatch(/^test:[0-9a-z]+$/);
    const charges = await chargesOf(method.id);
    expect(charges).toHaveLength(1);
    expect(charges[0]).toMatchObject({ amountMinor: 1250, currency: 'USD', status: expected.status, livemode: true });
  });

  it('declines the card Declines as well (card_declined)', async () => {
    const sale = await pendingOrder();
    const ctx = serviceContext(orm, sale.clock);
    const order = await ctx.em.findOneOrFail(OrderSchema, { id: sale.orderId });
    await saveMethodOfOrder(ctx, {
      order,
      method: { gateway: 'test', customerRef: null, methodRef: 'declines' },
      now: sale.clock.now(),
    });
    await ctx.em.flush();
    const method = (await savedMethodOfOrder(serviceContext(orm), sale.orderId))!;
    expect(await testGateway.chargeSaved!(method, 1250, 'USD', `renew-${unique()}`, serviceContext(orm))).toMatchObject(
      {
        status: 'failed',
        declineCode: 'card_declined',
      },
    );
  });

  it('charges once per idempotency key: the same key again answers the first charge', async () => {
    const { method } = await paidWith('succeeds');
    const key = `sub_${unique()}:2026-12-28:1`;
    const first = await testGateway.chargeSaved!(method, 1250, 'USD', key, serviceContext(orm));
    const again = await testGateway.chargeSaved!(method, 1250, 'USD', key, serviceContext(orm));
    expect(again).toEqual(first);
    expect(await chargesOf(method.id)).toHaveLength(1);
    // Another key is another charge.
    const next = await testGateway.chargeSaved!(method, 1250, 'USD', `${key}:next`, serviceContext(orm));
    expect(next.providerRef).not.toBe(first.providerRef);
    expect(await chargesOf(method.id)).toHaveLength(2);
  });

  it('charges once when eight attempts with one key race each other', async () => {
    const { method } = await paidWith('succeeds');
    const key = `sub_${unique()}:race`;
    const results = await Promise.all(
      Array.from({ length: 8 }, () => testGateway.chargeSaved!(method, 1250, 'USD', key, serviceContext(orm))),
    );
    expect(new Set(results.map((result) => result.providerRef)).size).toBe(1);
    expect(results.every((result) => result.status === 'succeeded')).toBe(true);
    expect(await chargesOf(method.id)).toHaveLength(1);
  });

  it('refuses the same key with another amount (gateway_error) and charges nothing more', async () => {
    const { method } = await paidWith('succeeds');
    const key = `sub_${unique()}:amount`;
    await testGateway.chargeSaved!(method, 1250, 'USD', key, serviceContext(orm));
    const error = await testGateway.chargeSaved!(method, 999, 'USD', key, serviceContext(orm)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).appCode).toBe('gateway_error');
    expect(await chargesOf(method.id)).toHaveLength(1);
  });

  it('has no chargeSaved for manual: its renewals are invoices the seller marks paid', () => {
    expect('chargeSaved' in GATEWAYS.manual!).toBe(false);
    expect('chargeSaved' in GATEWAYS.test!).toBe(true);
    expect('chargeSaved' in GATEWAYS.stripe!).toBe(true);
  });
});
