/**
 * recordReceipt reads why the order exists: a subscription's renewal order (`subscription_cycle`
 * with its subscription) gets the renewal's subject and opening; a subscription's first order and
 * a one-time purchase get the receipt as it always was. Against the real database; mail is kept
 * (no SMTP_URL), so keptMail reads what was recorded.
 */
import { randomBytes } from 'node:crypto';
import type { TBillingReason } from '@svc/schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../test/support/env.js';
import { createStore } from '../../../../test/support/factories.js';
import { contextOn, serviceContext } from '../../../../test/support/in-process.js';
import { openOrm, type Orm } from '../db/orm.js';
import { ManualClock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import { createOrder } from './place-order.js';
import { createProduct } from '../modules/catalog/catalog.service.js';
import { keptMail } from '../modules/mail/outbox.js';
import { OrderSchema } from '../modules/orders/orders.entities.js';
import { recordReceipt } from '../modules/receipts/receipts.service.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 2 });
});
afterAll(() => orm?.close());

const buyer = { ip: '203.0.113.41', userAgent: 'vitest', country: 'DE' };

/**
 * An order of one "Editor Pro" at a fresh store, marked with `billingReason` (and a subscription
 * when `subscribed`) as the subscriptions module marks its orders, and its receipt recorded.
 */
async function receiptFor(billingReason: TBillingReason, subscribed: boolean) {
  const clock = new ManualClock(Date.UTC(2027, 2, 1, 12, 0));
  const ctx = serviceContext(orm, clock);
  const store = await createStore(orm.em.fork(), { name: 'Renewal Lab' });
  const product = await createProduct(ctx, {
    storeId: store.id,
    name: 'Editor Pro',
    price: 9,
    deliveryMethods: ['deliveryInstructions'],
    deliveryInstructions: 'Sign in with your e-mail.',
  });
  const email = `buyer-${randomBytes(6).toString('hex')}@example.test`;
  const { order } = await createOrder(
    { ...ctx, em: orm.em.fork() },
    { store: store.id, cart: [{ productId: product.id, quantity: 1 }], email },
    buyer,
  );
  await orm.em
    .fork()
    .nativeUpdate(OrderSchema, { id: order.id }, { billingReason, subscriptionId: subscribed ? newId() : null });
  const recorded = await orm.em.fork().transactional(async (tx) => {
    const row = await tx.findOneOrFail(OrderSchema, { id: order.id });
    return recordReceipt(contextOn(tx, ctx.deps), { order: row, payment: { paidAt: clock.now(), gateway: 'test' } });
  });
  expect(recorded).toBe(true);
  const [mail, ...more] = await keptMail({ em: orm.em.fork(), deps: ctx.deps }, { to: email });
  expect(more).toEqual([]);
  return mail!;
}

describe('recordReceipt and the order’s billing reason', () => {
  it('says the subscription renewed for a renewal order', async () => {
    const mail = await receiptFor('subscription_cycle', true);
    expect(mail.subject).toMatch(/^Your Editor Pro subscription from Renewal Lab renewed — ORD-\d+$/);
    expect(mail.text).toMatch(/^Your Editor Pro subscription from Renewal Lab renewed\.\n\nOrder ORD-\d+, paid /);
    expect(mail.text).toContain('- Editor Pro\n  1 × $9.00 = $9.00');
    expect(mail.html).toContain('>Your Editor Pro subscription from Renewal Lab renewed</h1>');
  });

  it('is the usual receipt for a subscription’s first order and for a one-time purchase', async () => {
    for (const [reason, subscribed] of [
      ['subscription_create', true],
      ['purchase', false],
    ] as const) {
      const mail = await receiptFor(reason, subscribed);
      expect(mail.subject, reason).toMatch(/^Your receipt from Renewal Lab — ORD-\d+$/);
      expect(mail.text, reason).toMatch(/^Thank you for your order from Renewal Lab\.\n/);
    }
  });
});
