/**
 * The receipt against the real database, without HTTP: it is recorded in the settling
 * transaction (a settlement that rolls back leaves none), once per order whatever settles it
 * again (a second settlement, a duplicate or a new notification, a retried recording), to the
 * buyer with the order's own link, and not at all when the store turned receipts off or the
 * order has no buyer e-mail. Mail is kept here (no SMTP_URL), so keptMail reads what was recorded.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../test/support/env.js';
import { createStore } from '../../../../test/support/factories.js';
import { serviceContext, contextOn } from '../../../../test/support/in-process.js';
import { openOrm, type Orm } from '../db/orm.js';
import { ManualClock } from '../lib/clock.js';
import { createProduct } from '../modules/catalog/catalog.service.js';
import { createOrder } from './place-order.js';
import { OutboundEmailSchema } from '../modules/mail/mail.entities.js';
import { keptMail } from '../modules/mail/outbox.js';
import { orderUrl } from '../modules/orders/order-link.js';
import { OrderSchema } from '../modules/orders/orders.entities.js';
import { handleNotification } from './settle-payment.js';
import { settleOrder, type Settlement } from './settle-payment.js';
import type { ServiceContext } from '../modules/request/context.js';
import { StoreSchema } from '../modules/stores/stores.entities.js';
import { receiptDedupeKey, recordReceipt } from '../modules/receipts/receipts.service.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 2 });
});
afterAll(() => orm?.close());

const buyer = { ip: '203.0.113.40', userAgent: 'vitest', country: 'DE' };
const unique = () => randomBytes(6).toString('hex');

interface Sale {
  ctx: ServiceContext;
  clock: ManualClock;
  orderId: string;
  email: string | undefined;
  payment: Settlement;
}

/** A fresh store (with `settings`) selling one guide, and a pending order of two of it. */
async function pendingOrder(opts: { settings?: Record<string, unknown>; email?: string | null } = {}): Promise<Sale> {
  const clock = new ManualClock(Date.UTC(2026, 6, 1, 12, 0));
  const ctx = serviceContext(orm, clock);
  const store = await createStore(orm.em.fork(), { name: 'Receipt Lab' });
  if (opts.settings) await orm.em.fork().nativeUpdate(StoreSchema, { id: store.id }, { settings: opts.settings });
  const product = await createProduct(ctx, {
    storeId: store.id,
    name: 'Field Guide',
    price: 7.5,
    deliveryMethods: ['deliveryInstructions'],
    deliveryInstructions: 'Read it outdoors.',
  });
  const email = opts.email === null ? undefined : (opts.email ?? `buyer-${unique()}@example.test`);
  const { order } = await createOrder(
    { ...ctx, em: orm.em.fork() },
    { store: store.id, cart: [{ productId: product.id, quantity: 2 }], email },
    buyer,
  );
  return {
    ctx,
    clock,
    orderId: order.id,
    email,
    payment: { gateway: 'test', providerRef: null, amountMinor: 1500, currency: 'USD' },
  };
}

const settle = (sale: Sale) =>
  settleOrder(contextOn(orm.em.fork(), sale.ctx.deps), {
    orderId: sale.orderId,
    payment: sale.payment,
    now: sale.clock.now(),
  });

/** Every receipt recorded for the order, whatever its status. */
const receiptsOf = (orderId: string) =>
  orm.em.fork().find(OutboundEmailSchema, { dedupeKey: receiptDedupeKey(orderId) });

describe('the receipt in the settlement', () => {
  it('is recorded with the payment, to the buyer, with the order link, and taken away when the settlement rolls back', async () => {
    const sale = await pendingOrder();
    const rollback = new Error('roll back the surrounding transaction');
    await expect(
      orm.em.fork().transactional(async (tx) => {
        expect(
          await settleOrder(contextOn(tx, sale.ctx.deps), {
            orderId: sale.orderId,
            payment: sale.payment,
            now: sale.clock.now(),
          }),
        ).toBe('settled');
        // Inside the transaction the receipt is there...
        expect(await tx.count(OutboundEmailSchema, { dedupeKey: receiptDedupeKey(sale.orderId) })).toBe(1);
        throw rollback;
      }),
    ).rejects.toBe(rollback);
    // ...and it went with the payment.
    expect(await receiptsOf(sale.orderId)).toEqual([]);
    expect((await orm.em.fork().findOneOrFail(OrderSchema, { id: sale.orderId })).status).toBe('pending');

    expect(await settle(sale)).toBe('settled');
    const [mail, ...more] = await keptMail({ em: orm.em.fork(), deps: sale.ctx.deps }, { to: sale.email! });
    expect(more).toEqual([]);
    expect(mail!.dedupeKey).toBe(`receipt:${sale.orderId}`);
    expect(mail!.subject).toMatch(/^Your receipt from Receipt Lab — ORD-\d+$/);
    expect(mail!.text).toContain('- Field Guide\n  2 × $7.50 = $15.00');
    expect(mail!.text).toContain('Total: $15.00');
    expect(mail!.text).toContain(orderUrl(sale.ctx.deps.config, sale.orderId));
    expect(mail!.html).toContain('>$15.00</td>');
  });

  it('is recorded once however often the order is settled again', async () => {
    const sale = await pendingOrder();
    expect(await settle(sale)).toBe('settled');
    expect(await settle(sale)).toBe('already_settled');
    const notification = {
      eventId: `tevt_${unique()}`,
      kind: 'paid' as const,
      orderId: sale.orderId,
      amountMinor: 1500,
      currency: 'USD',
      providerRef: null,
    };
    const notify = () =>
      handleNotification(contextOn(orm.em.fork(), sale.ctx.deps), {
        gateway: 'test',
        notification: notification,
        now: sale.clock.now(),
      });
    expect(await notify()).toBe('already_settled');
    expect(await notify()).toBe('duplicate');
    expect(await receiptsOf(sale.orderId)).toHaveLength(1);
  });

  it('is not recorded twice when its recording is retried (a crash after the first commit)', async () => {
    const sale = await pendingOrder();
    expect(await settle(sale)).toBe('settled');
    const em = orm.em.fork();
    const order = await em.findOneOrFail(OrderSchema, { id: sale.orderId });
    const again = await em.transactional((tx) =>
      recordReceipt(contextOn(tx, sale.ctx.deps), {
        order: order,
        payment: { paidAt: sale.clock.now(), gateway: 'test' },
      }),
    );
    expect(again).toBe(false);
    expect(await receiptsOf(sale.orderId)).toHaveLength(1);
  });

  it('is not recorded when the store turned receipts off, nor for an order without a buyer e-mail', async () => {
    const off = await pendingOrder({ settings: { receiptsEnabled: false } });
    expect(await settle(off)).toBe('settled');
    expect(await receiptsOf(off.orderId)).toEqual([]);

    const anonymous = await pendingOrder({ email: null });
    expect((await orm.em.fork().findOneOrFail(OrderSchema, { id: anonymous.orderId })).customerEmail).toBe('');
    expect(await settle(anonymous)).toBe('settled');
    expect(await receiptsOf(anonymous.orderId)).toEqual([]);
  });

  it('ends with the store’s receipt note', async () => {
    const sale = await pendingOrder({ settings: { receiptNote: 'Reply to this e-mail for help.' } });
    expect(await settle(sale)).toBe('settled');
    const [mail] = await keptMail({ em: orm.em.fork(), deps: sale.ctx.deps }, { to: sale.email! });
    expect(mail!.text).toContain('\n\nReply to this e-mail for help.\n\n');
    expect(mail!.html).toContain('Reply to this e-mail for help.');
  });
});
