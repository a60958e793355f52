/**
 * The order state machine and buyer access against the real database, without HTTP
 * (docs/decisions.md):
 * - settlement: the stored amount (or more) in the stored currency settles and fulfils in one
 *   transaction (completed, or processing for a manual-delivery line or short keys); anything else
 *   only flags the order; a second settlement is already_settled; keys are assigned exactly once;
 * - restocks: tryAssignKeys and fillWaitingOrders (oldest payment first), also through restock (a key import);
 * - refund (keys revoked, order.refunded event), cancel (pending only, coupon use given back);
 * - the seller's updateOrder / markOrderDelivered / markOrderPaid rules;
 * - buyerOrderAccess: token (input or checkout cookie), e-mail, staff session with CSRF.
 * Every test makes its own store, products, keys and orders on a ManualClock.
 */
import { randomBytes } from 'node:crypto';
import type { TDeliveryMethod } from '@svc/schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../test/support/env.js';
import { createStore } from '../../../../test/support/factories.js';
import {
  codeOf,
  requestContext,
  serviceContext,
  type RequestOptions,
  contextOn,
} from '../../../../test/support/in-process.js';
import { openOrm, type Orm } from '../db/orm.js';
import { ManualClock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import type { ServiceContext } from '../modules/request/context.js';
import { LicenseKeySchema } from '../modules/catalog/catalog.entities.js';
import { createProduct } from '../modules/catalog/catalog.service.js';
import { importKeys } from '../modules/catalog/key-store.js';
import { createOrder } from './place-order.js';
import { CouponSchema } from '../modules/coupons/coupons.entities.js';
import { EventSchema } from '../modules/events/events.entities.js';
import { register } from '../modules/identity/identity.service.js';
import { OrderSchema } from '../modules/orders/orders.entities.js';
import { PaymentSchema } from '../modules/payments/payments.entities.js';
import { handleNotification } from './settle-payment.js';
import { StoreMemberSchema, StoreSchema } from '../modules/stores/stores.entities.js';
import { buyerOrderAccess, deliveryPayload, orderKeys } from '../modules/fulfilment/delivery.service.js';
import {
  cancelOrder,
  cancelStoreOrder,
  markOrderDelivered,
  markOrderPaid,
  refundStoreOrder,
  updateOrder,
} from './seller-order-actions.js';
import { refundOrder } from './refund-order.js';
import { settleOrder, type Settlement } from './settle-payment.js';
import { fillWaitingOrders, tryAssignKeys } from '../modules/fulfilment/fulfilment.service.js';
import { restock as importAndServe } from './restock.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 2 });
});
afterAll(() => orm?.close());

const buyerRequest = { ip: '203.0.113.5', userAgent: 'test', country: 'DE' };
const MINUTE = 60_000;

// ---------------------------------------------------------------------------------------------
// Fixtures: one store per test, a shared application key within it (keys are sealed under it)

interface Shop {
  storeId: string;
  clock: ManualClock;
  /** A service context on a fresh EntityManager (so reads never come from a stale identity map). */
  ctx(): ServiceContext;
}

async function newShop(): Promise<Shop> {
  const clock = new ManualClock(Date.UTC(2026, 5, 1, 9, 0));
  const base = serviceContext(orm, clock);
  const store = await createStore(orm.em.fork());
  return { storeId: store.id, clock, ctx: () => ({ ...base, em: orm.em.fork() }) };
}

async function newProduct(
  shop: Shop,
  deliveryMethods: TDeliveryMethod[],
  extra: { deliveryInstructions?: string; price?: number } = {},
) {
  return createProduct(shop.ctx(), {
    storeId: shop.storeId,
    name: `Product ${randomBytes(3).toString('hex')}`,
    price: extra.price ?? 10,
    deliveryMethods,
    ...extra,
  });
}

async function restock(shop: Shop, productId: string, count: number): Promise<string[]> {
  const keys = Array.from({ length: count }, () => `KEY-${randomBytes(8).toString('hex')}`);
  const result = await importAndServe(shop.ctx(), { storeId: shop.storeId, productId, keys });
  expect(result.added).toBe(count);
  return keys;
}

/** Keys that appear in stock through the catalog alone (so no fill runs on its own). */
async function addKeysQuietly(shop: Shop, productId: string, count: number): Promise<void> {
  const keys = Array.from({ length: count }, () => `QUIET-${randomBytes(8).toString('hex')}`);
  expect((await importKeys(shop.ctx(), { storeId: shop.storeId, productId, keys })).added).toBe(count);
}

async function placeOrder(
  shop: Shop,
  cart: Array<[productId: string, quantity: number]>,
  opts: { email?: string; coupon?: string } = {},
) {
  const created = await createOrder(
    shop.ctx(),
    {
      store: shop.storeId,
      cart: cart.map(([productId, quantity]) => ({ productId, quantity })),
      email: opts.email ?? `buyer-${randomBytes(4).toString('hex')}@example.test`,
      coupon: opts.coupon,
    },
    buyerRequest,
  );
  return { id: created.order.id, token: created.checkoutToken, email: created.order.email };
}

async function loadOrder(id: string) {
  return orm.em.fork().findOneOrFail(OrderSchema, { id });
}

/** Settles with what the order asks for, unless told otherwise. */
async function pay(shop: Shop, orderId: string, override: Partial<Settlement> = {}) {
  const order = await loadOrder(orderId);
  return settleOrder(contextOn(orm.em.fork(), shop.ctx().deps), {
    orderId: orderId,
    payment: {
      gateway: 'test',
      providerRef: `pi_${randomBytes(4).toString('hex')}`,
      amountMinor: order.priceMinor,
      currency: order.currency,
      ...override,
    },
    now: shop.clock.now(),
  });
}

async function keyRowsOfProduct(productId: string) {
  return orm.em.fork().find(LicenseKeySchema, { product: productId }, { orderBy: { id: 'asc' } });
}

async function keyRowsOfOrder(orderId: string) {
  return orm.em.fork().find(LicenseKeySchema, { order: orderId }, { orderBy: { id: 'asc' } });
}

async function eventsOf(shop: Shop, type: string, orderId: string) {
  const events = await orm.em
    .fork()
    .find(EventSchema, { store: shop.storeId, type }, { orderBy: { createdAt: 'asc', id: 'asc' } });
  return events.filter((event) => (event.payload as { order?: { id?: string } }).order?.id === orderId);
}

async function paymentsOf(orderId: string) {
  return orm.em.fork().find(PaymentSchema, { order: orderId });
}

// ---------------------------------------------------------------------------------------------

describe('settleOrder', () => {
  it('settles the stored amount in the stored currency and completes an order whose keys are all assigned', async () => {
    const shop = await newShop();
    const product = await newProduct(shop, ['licenseKeys']);
    await restock(shop, product.id, 3);
    const order = await placeOrder(shop, [[product.id, 2]]);
    shop.clock.advance(5 * MINUTE);

    expect(await pay(shop, order.id, { amountMinor: 2000, currency: 'USD' })).toBe('settled');

    const settled = await loadOrder(order.id);
    expect(settled).toMatchObject({
      status: 'completed',
      paidMinor: 2000,
      keyCount: 2,
      paymentFlag: null,
      paymentMethod: 'test',
    });
    expect(settled.paidAt).toEqual(shop.clock.now());
    expect(settled.completedAt).toEqual(shop.clock.now());
    const keys = await keyRowsOfProduct(product.id);
    expect(keys.filter((k) => k.status === 'assigned' && k.order?.id === order.id)).toHaveLength(2);
    expect(keys.filter((k) => k.status === 'available' && k.order === null)).toHaveLength(1);
    expect(await paymentsOf(order.id)).toEqual([
      expect.objectContaining({ amountMinor: 2000, currency: 'USD', status: 'paid', gateway: 'test' }),
    ]);
  });

  it('writes order.paid and order.completed with the order as it was at each step', async () => {
    const shop = await newShop();
    const product = await newProduct(shop, ['licenseKeys']);
    await restock(shop, product.id, 1);
    const order = await placeOrder(shop, [[product.id, 1]]);
    await pay(shop, order.id);

    const paid = await eventsOf(shop, 'order.paid', order.id);
    const completed = await eventsOf(shop, 'order.completed', order.id);
    expect(paid).toHaveLength(1);
    expect(completed).toHaveLength(1);
    expect(paid[0]!.payload).toMatchObject({ order: { id: order.id, status: 'paid', paid: 10 } });
    expect(completed[0]!.payload).toMatchObject({ order: { id: order.id, status: 'completed', keyCount: 1 } });
    expect(paid[0]!.createdAt).toEqual(shop.clock.now());
  });

  it('completes an order of delivery instructions only', async () => {
    const shop = await newShop();
    const product = await newProduct(shop, ['deliveryInstructions'], {
      deliveryInstructions: 'Log in with your e-mail.',
    });
    const order = await placeOrder(shop, [[product.id, 1]]);
    expect(await pay(shop, order.id)).toBe('settled');
    expect(await loadOrder(order.id)).toMatchObject({ status: 'completed', keyCount: 0 });
  });

  it('leaves an order with a manual-delivery line processing, though its keys were assigned', async () => {
    const shop = await newShop();
    const keyed = await newProduct(shop, ['licenseKeys']);
    const manual = await newProduct(shop, ['manualDelivery']);
    await restock(shop, keyed.id, 1);
    const order = await placeOrder(shop, [
      [keyed.id, 1],
      [manual.id, 1],
    ]);

    expect(await pay(shop, order.id)).toBe('settled');
    const processing = await loadOrder(order.id);
    expect(processing).toMatchObject({ status: 'processing', keyCount: 1, completedAt: null });
    expect(await eventsOf(shop, 'order.paid', order.id)).toHaveLength(1);
    expect(await eventsOf(shop, 'order.completed', order.id)).toHaveLength(0);
  });

  it('leaves an order processing with the keys there were when they ran short, and never gives a key twice', async () => {
    const shop = await newShop();
    const product = await newProduct(shop, ['licenseKeys']);
    await restock(shop, product.id, 3);
    // Pending orders reserve nothing: both pass checkout against the same three keys.
    const first = await placeOrder(shop, [[product.id, 2]]);
    const second = await placeOrder(shop, [[product.id, 2]]);

    expect(await pay(shop, first.id)).toBe('settled');
    expect(await pay(shop, second.id)).toBe('settled');

    expect(await loadOrder(first.id)).toMatchObject({ status: 'completed', keyCount: 2 });
    expect(await loadOrder(second.id)).toMatchObject({ status: 'processing', keyCount: 1 });
    const keys = await keyRowsOfProduct(product.id);
    expect(keys.map((k) => k.status)).toEqual(['assigned', 'assigned', 'assigned']);
    expect(keys.filter((k) => k.order?.id === first.id)).toHaveLength(2);
    expect(keys.filter((k) => k.order?.id === second.id)).toHaveLength(1);
  });

  it('never settles a lower amount or another currency, and keeps the flag for the seller', async () => {
    const shop = await newShop();
    const product = await newProduct(shop, ['licenseKeys']);
    await restock(shop, product.id, 1);
    const order = await placeOrder(shop, [[product.id, 1]]);

    expect(await pay(shop, order.id, { amountMinor: 999 })).toBe('amount_mismatch');
    expect(await loadOrder(order.id)).toMatchObject({
      status: 'pending',
      paymentFlag: 'amount_mismatch',
      paidMinor: 0,
      paidAt: null,
      keyCount: 0,
    });

    expect(await pay(shop, order.id, { currency: 'EUR' })).toBe('currency_mismatch');
    expect(await loadOrder(order.id)).toMatchObject({
      status: 'pending',
      paymentFlag: 'currency_mismatch',
      paidMinor: 0,
      paidAt: null,
    });

    expect(await paymentsOf(order.id)).toHaveLength(0);
    expect(await eventsOf(shop, 'order.paid', order.id)).toHaveLength(0);
    expect(await keyRowsOfOrder(order.id)).toHaveLength(0);

    // The right payment still settles, and clears the flag.
    expect(await pay(shop, order.id)).toBe('settled');
    expect(await loadOrder(order.id)).toMatchObject({ status: 'completed', paymentFlag: null, paidMinor: 1000 });
  });

  it('settles a payment of more than the stored amount, recording what was paid', async () => {
    const shop = await newShop();
    const product = await newProduct(shop, ['deliveryInstructions'], { deliveryInstructions: 'Use it.' });
    const order = await placeOrder(shop, [[product.id, 1]]);
    expect(await pay(shop, order.id, { amountMinor: 1050 })).toBe('settled');
    expect(await loadOrder(order.id)).toMatchObject({ status: 'completed', paidMinor: 1050 });
  });

  it('answers already_settled to a second settlement and changes nothing', async () => {
    const shop = await newShop();
    const product = await newProduct(shop, ['licenseKeys']);
    await restock(shop, product.id, 4);
    const order = await placeOrder(shop, [[product.id, 2]]);
    expect(await pay(shop, order.id)).toBe('settled');
    const before = await loadOrder(order.id);

    shop.clock.advance(MINUTE);
    expect(await pay(shop, order.id)).toBe('already_settled');

    const after = await loadOrder(order.id);
    expect(after).toMatchObject({ status: 'completed', keyCount: 2, version: before.version });
    expect(after.paidAt).toEqual(before.paidAt);
    expect(await keyRowsOfOrder(order.id)).toHaveLength(2);
    expect((await keyRowsOfProduct(product.id)).filter((k) => k.status === 'available')).toHaveLength(2);
    expect(await paymentsOf(order.id)).toHaveLength(1);
    expect(await eventsOf(shop, 'order.paid', order.id)).toHaveLength(1);
  });

  it('settles once when two settlements of the same order race', async () => {
    const shop = await newShop();
    const product = await newProduct(shop, ['licenseKeys']);
    await restock(shop, product.id, 4);
    const order = await placeOrder(shop, [[product.id, 2]]);

    const outcomes = await Promise.all([pay(shop, order.id), pay(shop, order.id)]);

    expect(outcomes.sort()).toEqual(['already_settled', 'settled']);
    expect(await keyRowsOfOrder(order.id)).toHaveLength(2);
    expect(await loadOrder(order.id)).toMatchObject({ status: 'completed', keyCount: 2 });
    expect(await paymentsOf(order.id)).toHaveLength(1);
  });

  it('gives the last key to one order only when two settlements race for it', async () => {
    const shop = await newShop();
    const product = await newProduct(shop, ['licenseKeys']);
    await restock(shop, product.id, 1);
    const a = await placeOrder(shop, [[product.id, 1]]);
    const b = await placeOrder(shop, [[product.id, 1]]);

    expect(await Promise.all([pay(shop, a.id), pay(shop, b.id)])).toEqual(['settled', 'settled']);

    const orders = [await loadOrder(a.id), await loadOrder(b.id)];
    expect(orders.map((o) => o.status).sort()).toEqual(['completed', 'processing']);
    expect(orders.map((o) => o.keyCount).sort()).toEqual([0, 1]);
    const [key] = await keyRowsOfProduct(product.id);
    expect(key).toMatchObject({ status: 'assigned' });
    expect(key!.order?.id).toBe(orders.find((o) => o.status === 'completed')!.id);
  });

  it('answers not_pending for a cancelled order and leaves it cancelled', async () => {
    const shop = await newShop();
    const product = await newProduct(shop, ['manualDelivery']);
    const order = await placeOrder(shop, [[product.id, 1]]);
    await cancelOrder(contextOn(orm.em.fork()), { orderId: order.id, now: shop.clock.now() });
    expect(await pay(shop, order.id)).toBe('not_pending');
    expect(await loadOrder(order.id)).toMatchObject({ status: 'cancelled', paidAt: null });
    expect(await paymentsOf(order.id)).toHaveLength(0);
  });

  it('rolls the order.paid and order.completed events back with the settlement (same transaction)', async () => {
    const shop = await newShop();
    const product = await newProduct(shop, ['licenseKeys']);
    await restock(shop, product.id, 1);
    const order = await placeOrder(shop, [[product.id, 1]]);

    const rollback = new Error('roll back the surrounding transaction');
    await expect(
      orm.em.fork().transactional(async (tx) => {
        expect(
          await settleOrder(contextOn(tx, shop.ctx().deps), {
            orderId: order.id,
            payment: { gateway: 'test', providerRef: null, amountMinor: 1000, currency: 'USD' },
            now: shop.clock.now(),
          }),
        ).toBe('settled');
        throw rollback;
      }),
    ).rejects.toBe(rollback);

    expect(await loadOrder(order.id)).toMatchObject({ status: 'pending', keyCount: 0 });
    expect(await eventsOf(shop, 'order.paid', order.id)).toHaveLength(0);
    expect(await eventsOf(shop, 'order.completed', order.id)).toHaveLength(0);
    expect((await keyRowsOfProduct(product.id)).map((k) => k.status)).toEqual(['available']);
  });
});

describe('handleNotification', () => {
  it('records a short payment with its flag, ignores a repeat of the same notification, then settles a good one', async () => {
    const shop = await newShop();
    const product = await newProduct(shop, ['licenseKeys']);
    await restock(shop, product.id, 1);
    const order = await placeOrder(shop, [[product.id, 1]]);
    const notify = (eventId: string, amountMinor: number) =>
      handleNotification(contextOn(orm.em.fork(), shop.ctx().deps), {
        gateway: 'test',
        notification: { eventId, kind: 'paid', orderId: order.id, amountMinor, currency: 'USD', providerRef: null },
        now: shop.clock.now(),
      });

    const eventId = `tevt_${randomBytes(6).toString('hex')}`;
    expect(await notify(eventId, 500)).toBe('amount_mismatch');
    expect(await loadOrder(order.id)).toMatchObject({ status: 'pending', paymentFlag: 'amount_mismatch' });
    // The same provider event again, even with the right amount now, is a duplicate.
    expect(await notify(eventId, 1000)).toBe('duplicate');
    expect(await loadOrder(order.id)).toMatchObject({ status: 'pending' });

    expect(await notify(`tevt_${randomBytes(6).toString('hex')}`, 1000)).toBe('settled');
    expect(await loadOrder(order.id)).toMatchObject({ status: 'completed', keyCount: 1, paymentFlag: null });
  });
});

describe('tryAssignKeys and fillWaitingOrders', () => {
  it('completes a processing order once the missing keys are in stock', async () => {
    const shop = await newShop();
    const product = await newProduct(shop, ['licenseKeys']);
    await restock(shop, product.id, 2);
    const other = await placeOrder(shop, [[product.id, 1]]);
    const order = await placeOrder(shop, [[product.id, 2]]);
    await pay(shop, other.id);
    await pay(shop, order.id);
    expect(await loadOrder(order.id)).toMatchObject({ status: 'processing', keyCount: 1 });

    // Without stock nothing changes.
    expect(await tryAssignKeys(contextOn(orm.em.fork()), { orderId: order.id, now: shop.clock.now() })).toMatchObject({
      status: 'processing',
      keyCount: 1,
    });

    await addKeysQuietly(shop, product.id, 2);
    shop.clock.advance(10 * MINUTE);
    const filled = await tryAssignKeys(contextOn(orm.em.fork()), { orderId: order.id, now: shop.clock.now() });

    expect(filled).toMatchObject({ status: 'completed', keyCount: 2 });
    expect(filled.completedAt).toEqual(shop.clock.now());
    expect(await keyRowsOfOrder(order.id)).toHaveLength(2);
    // Exactly the one missing key was taken; the other new key stays in stock.
    expect((await keyRowsOfProduct(product.id)).filter((k) => k.status === 'available')).toHaveLength(1);
    expect(await eventsOf(shop, 'order.completed', order.id)).toHaveLength(1);
  });

  it('refuses an unpaid order with order_not_paid and takes no more keys for a completed one', async () => {
    const shop = await newShop();
    const product = await newProduct(shop, ['licenseKeys']);
    await restock(shop, product.id, 3);
    const pending = await placeOrder(shop, [[product.id, 1]]);
    const completed = await placeOrder(shop, [[product.id, 1]]);
    await pay(shop, completed.id);

    expect(await codeOf(tryAssignKeys(contextOn(orm.em.fork()), { orderId: pending.id, now: shop.clock.now() }))).toBe(
      'order_not_paid',
    );
    expect(await keyRowsOfOrder(pending.id)).toHaveLength(0);

    expect(
      await tryAssignKeys(contextOn(orm.em.fork()), { orderId: completed.id, now: shop.clock.now() }),
    ).toMatchObject({
      status: 'completed',
      keyCount: 1,
    });
    expect(await keyRowsOfOrder(completed.id)).toHaveLength(1);
    expect((await keyRowsOfProduct(product.id)).filter((k) => k.status === 'available')).toHaveLength(2);
  });

  it('fills waiting orders after a restock, oldest payment first, and a key import does the same', async () => {
    const shop = await newShop();
    const product = await newProduct(shop, ['licenseKeys']);
    await restock(shop, product.id, 1);
    // Created in the order a, b, c; paid in the order c, b, a.
    const a = await placeOrder(shop, [[product.id, 1]]);
    const b = await placeOrder(shop, [[product.id, 1]]);
    const c = await placeOrder(shop, [[product.id, 1]]);
    for (const order of [c, b, a]) {
      shop.clock.advance(MINUTE);
      expect(await pay(shop, order.id)).toBe('settled');
    }
    expect((await loadOrder(b.id)).status).toBe('processing');
    expect((await loadOrder(a.id)).status).toBe('processing');

    await addKeysQuietly(shop, product.id, 1);
    expect(await fillWaitingOrders(contextOn(orm.em.fork()), { productId: product.id, now: shop.clock.now() })).toBe(1);
    expect(await loadOrder(b.id)).toMatchObject({ status: 'completed', keyCount: 1 });
    expect(await loadOrder(a.id)).toMatchObject({ status: 'processing', keyCount: 0 });

    await restock(shop, product.id, 1);
    expect(await loadOrder(a.id)).toMatchObject({ status: 'completed', keyCount: 1 });

    // Three keys, three orders, one key each.
    const keys = await keyRowsOfProduct(product.id);
    expect(keys.every((k) => k.status === 'assigned')).toBe(true);
    expect(keys.map((k) => k.order?.id).sort()).toEqual([a.id, b.id, c.id].sort());
  });
});

describe('refundOrder', () => {
  it("revokes the order's keys, refunds its payment and writes order.refunded; other orders keep theirs", async () => {
    const shop = await newShop();
    const product = await newProduct(shop, ['licenseKeys']);
    await restock(shop, product.id, 4);
    const order = await placeOrder(shop, [[product.id, 2]]);
    const other = await placeOrder(shop, [[product.id, 1]]);
    await pay(shop, order.id);
    await pay(shop, other.id);
    shop.clock.advance(MINUTE);

    const refunded = await refundOrder(contextOn(orm.em.fork()), { orderId: order.id, now: shop.clock.now() });

    expect(refunded.status).toBe('refunded');
    expect((await loadOrder(order.id)).refundedAt).toEqual(shop.clock.now());
    expect((await keyRowsOfOrder(order.id)).map((k) => k.status)).toEqual(['revoked', 'revoked']);
    expect((await keyRowsOfOrder(other.id)).map((k) => k.status)).toEqual(['assigned']);
    expect((await keyRowsOfProduct(product.id)).filter((k) => k.status === 'available')).toHaveLength(1);
    expect((await paymentsOf(order.id)).map((p) => p.status)).toEqual(['refunded']);
    expect((await paymentsOf(other.id)).map((p) => p.status)).toEqual(['paid']);
    const events = await eventsOf(shop, 'order.refunded', order.id);
    expect(events).toHaveLength(1);
    expect(events[0]!.payload).toMatchObject({ order: { id: order.id, status: 'refunded' } });
    expect(events[0]!.createdAt).toEqual(shop.clock.now());
  });

  it('refunds a processing order too, and a second refund changes nothing', async () => {
    const shop = await newShop();
    const product = await newProduct(shop, ['manualDelivery']);
    const order = await placeOrder(shop, [[product.id, 1]]);
    await pay(shop, order.id);
    expect((await loadOrder(order.id)).status).toBe('processing');

    await refundOrder(contextOn(orm.em.fork()), { orderId: order.id, now: shop.clock.now() });
    const first = await loadOrder(order.id);
    shop.clock.advance(MINUTE);
    expect((await refundOrder(contextOn(orm.em.fork()), { orderId: order.id, now: shop.clock.now() })).status).toBe(
      'refunded',
    );
    expect((await loadOrder(order.id)).refundedAt).toEqual(first.refundedAt);
    expect(await eventsOf(shop, 'order.refunded', order.id)).toHaveLength(1);
  });

  it('refuses an unpaid order with order_not_paid', async () => {
    const shop = await newShop();
    const product = await newProduct(shop, ['manualDelivery']);
    const pending = await placeOrder(shop, [[product.id, 1]]);
    const cancelled = await placeOrder(shop, [[product.id, 1]]);
    await cancelOrder(contextOn(orm.em.fork()), { orderId: cancelled.id, now: shop.clock.now() });

    expect(await codeOf(refundOrder(contextOn(orm.em.fork()), { orderId: pending.id, now: shop.clock.now() }))).toBe(
      'order_not_paid',
    );
    expect(await codeOf(refundStoreOrder(shop.ctx(), { storeId: shop.storeId, orderId: cancelled.id }))).toBe(
      'order_not_paid',
    );
    expect((await loadOrder(pending.id)).status).toBe('pending');
    expect(await eventsOf(shop, 'order.refunded', pending.id)).toHaveLength(0);
  });

  it("answers not_found for another store's order", async () => {
    const shop = await newShop();
    const elsewhere = await newShop();
    const product = await newProduct(elsewhere, ['manualDelivery']);
    const order = await placeOrder(elsewhere, [[product.id, 1]]);
    await pay(elsewhere, order.id);
    expect(await codeOf(refundStoreOrder(shop.ctx(), { storeId: shop.storeId, orderId: order.id }))).toBe('not_found');
    expect((await loadOrder(order.id)).status).toBe('processing');
  });
});

describe('cancelOrder', () => {
  async function couponFor(shop: Shop): Promise<{ id: string; code: string }> {
    const id = newId();
    const code = `SAVE${id.slice(0, 8)}`;
    await orm.em.fork().insert(CouponSchema, {
      id,
      store: shop.storeId,
      code,
      discountType: 'percent',
      discountValue: 10,
      productIds: [],
      maxUses: 5,
      uses: 0,
      minAmountMinor: null,
      expiresAt: null,
      active: true,
      createdAt: shop.clock.now(),
      updatedAt: shop.clock.now(),
    });
    return { id, code };
  }
  const usesOf = async (couponId: string) => (await orm.em.fork().findOneOrFail(CouponSchema, { id: couponId })).uses;

  it('cancels a pending order and gives its coupon use back', async () => {
    const shop = await newShop();
    const product = await newProduct(shop, ['manualDelivery']);
    const coupon = await couponFor(shop);
    const order = await placeOrder(shop, [[product.id, 1]], { coupon: coupon.code });
    expect(await usesOf(coupon.id)).toBe(1);

    const detail = await cancelStoreOrder(shop.ctx(), { storeId: shop.storeId, orderId: order.id });

    expect(detail.status).toBe('cancelled');
    expect((await loadOrder(order.id)).status).toBe('cancelled');
    expect(await usesOf(coupon.id)).toBe(0);
  });

  it('refuses anything but a pending order with order_not_pending, and gives no coupon use back', async () => {
    const shop = await newShop();
    const product = await newProduct(shop, ['manualDelivery']);
    const coupon = await couponFor(shop);
    const paid = await placeOrder(shop, [[product.id, 1]], { coupon: coupon.code });
    const cancelled = await placeOrder(shop, [[product.id, 1]], { coupon: coupon.code });
    await pay(shop, paid.id);
    await cancelOrder(contextOn(orm.em.fork()), { orderId: cancelled.id, now: shop.clock.now() });
    expect(await usesOf(coupon.id)).toBe(1);

    expect(await codeOf(cancelOrder(contextOn(orm.em.fork()), { orderId: paid.id, now: shop.clock.now() }))).toBe(
      'order_not_pending',
    );
    expect(await codeOf(cancelOrder(contextOn(orm.em.fork()), { orderId: cancelled.id, now: shop.clock.now() }))).toBe(
      'order_not_pending',
    );
    expect((await loadOrder(paid.id)).status).toBe('processing');
    expect(await usesOf(coupon.id)).toBe(1);
  });
});

describe('updateOrder, markOrderDelivered and markOrderPaid', () => {
  it('refuses markDelivered false and a body with neither field with validation_failed', async () => {
    const shop = await newShop();
    const product = await newProduct(shop, ['manualDelivery']);
    const order = await placeOrder(shop, [[product.id, 1]]);
    await pay(shop, order.id);

    expect(
      await codeOf(updateOrder(shop.ctx(), { storeId: shop.storeId, orderId: order.id, markDelivered: false })),
    ).toBe('validation_failed');
    expect(
      await codeOf(
        updateOrder(shop.ctx(), { storeId: shop.storeId, orderId: order.id, markDelivered: false, note: 'x' }),
      ),
    ).toBe('validation_failed');
    expect(await codeOf(updateOrder(shop.ctx(), { storeId: shop.storeId, orderId: order.id }))).toBe(
      'validation_failed',
    );
    expect(await loadOrder(order.id)).toMatchObject({ status: 'processing', deliveredAt: null, note: '' });
  });

  it('refuses to mark a pending order delivered with order_not_deliverable, and keeps its note unchanged', async () => {
    const shop = await newShop();
    const product = await newProduct(shop, ['manualDelivery']);
    const order = await placeOrder(shop, [[product.id, 1]]);
    expect(
      await codeOf(
        updateOrder(shop.ctx(), { storeId: shop.storeId, orderId: order.id, markDelivered: true, note: 'sent' }),
      ),
    ).toBe('order_not_deliverable');
    expect(await codeOf(markOrderDelivered(shop.ctx(), { storeId: shop.storeId, orderId: order.id }))).toBe(
      'order_not_deliverable',
    );
    expect(await loadOrder(order.id)).toMatchObject({ status: 'pending', deliveredAt: null, note: '' });
  });

  it('refuses an order with nothing to deliver with nothing_to_deliver', async () => {
    const shop = await newShop();
    // Files were promised but none was ever uploaded: no key, file, instructions or manual line.
    const product = await newProduct(shop, ['downloadFiles']);
    const order = await placeOrder(shop, [[product.id, 1]]);
    await pay(shop, order.id);
    expect(
      await codeOf(updateOrder(shop.ctx(), { storeId: shop.storeId, orderId: order.id, markDelivered: true })),
    ).toBe('nothing_to_deliver');
    expect((await loadOrder(order.id)).deliveredAt).toBeNull();
  });

  it('completes a processing order, sets deliveredAt once and writes order.completed once', async () => {
    const shop = await newShop();
    const product = await newProduct(shop, ['manualDelivery']);
    const order = await placeOrder(shop, [[product.id, 1]]);
    await pay(shop, order.id);
    shop.clock.advance(MINUTE);
    const deliveredAt = shop.clock.now();

    const detail = await updateOrder(shop.ctx(), { storeId: shop.storeId, orderId: order.id, markDelivered: true });
    expect(detail).toMatchObject({ status: 'completed', completedAt: deliveredAt.toISOString() });
    expect(await loadOrder(order.id)).toMatchObject({ status: 'completed', deliveredAt, completedAt: deliveredAt });

    shop.clock.advance(MINUTE);
    const again = await updateOrder(shop.ctx(), { storeId: shop.storeId, orderId: order.id, markDelivered: true });
    expect(again).toMatchObject({ status: 'completed', completedAt: deliveredAt.toISOString() });
    expect(await loadOrder(order.id)).toMatchObject({ status: 'completed', deliveredAt, completedAt: deliveredAt });
    expect(await eventsOf(shop, 'order.completed', order.id)).toHaveLength(1);
  });

  it('marks a completed order with keys delivered without another order.completed', async () => {
    const shop = await newShop();
    const product = await newProduct(shop, ['licenseKeys']);
    await restock(shop, product.id, 1);
    const order = await placeOrder(shop, [[product.id, 1]]);
    await pay(shop, order.id);
    shop.clock.advance(MINUTE);

    await updateOrder(shop.ctx(), {
      storeId: shop.storeId,
      orderId: `ORD-${(await loadOrder(order.id)).number}`,
      markDelivered: true,
    });
    const delivered = await loadOrder(order.id);
    expect(delivered.deliveredAt).toEqual(shop.clock.now());
    expect(delivered.completedAt).not.toEqual(shop.clock.now());
    expect(await eventsOf(shop, 'order.completed', order.id)).toHaveLength(1);
  });

  it('stores the manually delivered content given to markOrderDelivered', async () => {
    const shop = await newShop();
    const product = await newProduct(shop, ['manualDelivery']);
    const order = await placeOrder(shop, [[product.id, 1]]);
    await pay(shop, order.id);

    await markOrderDelivered(shop.ctx(), {
      storeId: shop.storeId,
      orderId: order.id,
      content: 'Your account: demo / hunter2',
    });
    const delivered = await loadOrder(order.id);
    expect(delivered).toMatchObject({ status: 'completed', manualDeliveryContent: 'Your account: demo / hunter2' });
    expect((await deliveryPayload(shop.ctx(), delivered)).manualDelivery).toEqual({
      status: 'delivered',
      content: 'Your account: demo / hunter2',
    });
  });

  it('sets the seller note, also on a pending order', async () => {
    const shop = await newShop();
    const product = await newProduct(shop, ['manualDelivery']);
    const order = await placeOrder(shop, [[product.id, 1]]);
    shop.clock.advance(MINUTE);

    const detail = await updateOrder(shop.ctx(), {
      storeId: shop.storeId,
      orderId: order.id,
      note: 'Called the buyer.\nWaiting.',
    });

    expect(detail).toMatchObject({
      note: 'Called the buyer.\nWaiting.',
      status: 'pending',
      updatedAt: shop.clock.now().toISOString(),
    });
    expect(await loadOrder(order.id)).toMatchObject({ note: 'Called the buyer.\nWaiting.', status: 'pending' });
  });

  it("answers not_found for another store's order", async () => {
    const shop = await newShop();
    const elsewhere = await newShop();
    const product = await newProduct(elsewhere, ['manualDelivery']);
    const order = await placeOrder(elsewhere, [[product.id, 1]]);
    await pay(elsewhere, order.id);
    expect(
      await codeOf(updateOrder(shop.ctx(), { storeId: shop.storeId, orderId: order.id, markDelivered: true })),
    ).toBe('not_found');
    expect(await codeOf(updateOrder(shop.ctx(), { storeId: shop.storeId, orderId: order.id, note: 'mine?' }))).toBe(
      'not_found',
    );
    expect(await loadOrder(order.id)).toMatchObject({ status: 'processing', note: '' });
  });

  it('rolls order.completed back with a mark-delivered that does not commit (same transaction)', async () => {
    const shop = await newShop();
    const product = await newProduct(shop, ['manualDelivery']);
    const order = await placeOrder(shop, [[product.id, 1]]);
    await pay(shop, order.id);
    const ctx = shop.ctx();
    const rollback = new Error('roll back');
    // updateOrder opens its transaction on ctx.em; one already open around it decides the commit.
    await expect(
      ctx.em.transactional(async (tx) => {
        await updateOrder({ ...ctx, em: tx }, { storeId: shop.storeId, orderId: order.id, markDelivered: true });
        throw rollback;
      }),
    ).rejects.toBe(rollback);
    expect(await loadOrder(order.id)).toMatchObject({ status: 'processing', deliveredAt: null });
    expect(await eventsOf(shop, 'order.completed', order.id)).toHaveLength(0);
  });

  it('markOrderPaid settles a pending order for its full price and refuses it once paid', async () => {
    const shop = await newShop();
    const product = await newProduct(shop, ['deliveryInstructions'], { deliveryInstructions: 'Thanks.' });
    const order = await placeOrder(shop, [[product.id, 2]]);

    const detail = await markOrderPaid(shop.ctx(), { storeId: shop.storeId, orderId: order.id });

    expect(detail).toMatchObject({ status: 'completed', paid: 20, paymentMethod: 'manual' });
    expect(await paymentsOf(order.id)).toEqual([
      expect.objectContaining({ gateway: 'manual', amountMinor: 2000, status: 'paid' }),
    ]);
    expect(await codeOf(markOrderPaid(shop.ctx(), { storeId: shop.storeId, orderId: order.id }))).toBe(
      'order_not_pending',
    );
  });
});

describe('buyerOrderAccess', () => {
  /** A paid order of keys, with its checkout token and buyer e-mail. */
  async function paidKeyOrder(shop: Shop) {
    const product = await newProduct(shop, ['licenseKeys']);
    const [key] = await restock(shop, product.id, 1);
    const order = await placeOrder(shop, [[product.id, 1]]);
    await pay(shop, order.id);
    return { ...order, key: key! };
  }

  const access = (shop: Shop, query: { orderId: string; token?: string; email?: string }, opts: RequestOptions = {}) =>
    buyerOrderAccess(requestContext(shop.ctx(), opts), query);

  /** A seller account with a session, optionally a staff member of the shop's store. */
  async function staffSession(shop: Shop, permissions: string[] | null) {
    const signedIn = await register(shop.ctx(), {
      email: `staff-${randomBytes(5).toString('hex')}@example.test`,
      password: `pw-${randomBytes(8).toString('hex')}`,
    });
    if (permissions) {
      await orm.em.fork().insert(StoreMemberSchema, {
        id: newId(),
        store: shop.storeId,
        user: signedIn.user.id,
        role: 'staff',
        permissions,
        createdAt: shop.clock.now(),
      });
    }
    return signedIn.session;
  }

  it('answers unauthorized when no credential is given', async () => {
    const shop = await newShop();
    const order = await paidKeyOrder(shop);
    expect(await codeOf(access(shop, { orderId: order.id }))).toBe('unauthorized');
  });

  it('answers not_found for an unknown order', async () => {
    const shop = await newShop();
    expect(await codeOf(access(shop, { orderId: newId(), token: 'whatever' }))).toBe('not_found');
  });

  it('answers store_forbidden to a wrong token, including the token of another order', async () => {
    const shop = await newShop();
    const order = await paidKeyOrder(shop);
    const other = await paidKeyOrder(shop);
    expect(await codeOf(access(shop, { orderId: order.id, token: 'not-the-token' }))).toBe('store_forbidden');
    expect(await codeOf(access(shop, { orderId: order.id, token: other.token }))).toBe('store_forbidden');
    expect(
      await codeOf(
        access(shop, { orderId: order.id }, { credentials: { checkout: { orderId: order.id, token: other.token } } }),
      ),
    ).toBe('store_forbidden');
  });

  it('answers store_forbidden, not unauthorized, to a wrong token beside a session cookie that is gone', async () => {
    const shop = await newShop();
    const order = await paidKeyOrder(shop);
    // Given but not matching is 403 (docs/decisions.md); the stale cookie is no credential at all.
    expect(
      await codeOf(
        access(
          shop,
          { orderId: order.id, token: 'not-the-token' },
          { credentials: { sessionToken: 'no-such-session' } },
        ),
      ),
    ).toBe('store_forbidden');
    // Alone, a session that is gone still asks to sign in.
    expect(
      await codeOf(access(shop, { orderId: order.id }, { credentials: { sessionToken: 'no-such-session' } })),
    ).toBe('unauthorized');
  });

  it('opens the order with the right token, given in the input or by the checkout cookie', async () => {
    const shop = await newShop();
    const order = await paidKeyOrder(shop);
    expect((await access(shop, { orderId: order.id, token: order.token })).id).toBe(order.id);
    expect(
      (
        await access(
          shop,
          { orderId: order.id },
          { credentials: { checkout: { orderId: order.id, token: order.token } } },
        )
      ).id,
    ).toBe(order.id);
  });

  it('ignores a checkout cookie that names another order', async () => {
    const shop = await newShop();
    const order = await paidKeyOrder(shop);
    const other = await paidKeyOrder(shop);
    expect(
      await codeOf(
        access(shop, { orderId: order.id }, { credentials: { checkout: { orderId: other.id, token: other.token } } }),
      ),
    ).toBe('unauthorized');
  });

  it('answers order_not_paid to the right token of an unpaid order', async () => {
    const shop = await newShop();
    const product = await newProduct(shop, ['manualDelivery']);
    const order = await placeOrder(shop, [[product.id, 1]]);
    expect(await codeOf(access(shop, { orderId: order.id, token: order.token }))).toBe('order_not_paid');
  });

  it("opens the order with the buyer's e-mail, whatever its case, unless the store turned that off", async () => {
    const shop = await newShop();
    const order = await paidKeyOrder(shop);
    expect((await access(shop, { orderId: order.id, email: `  ${order.email.toUpperCase()} ` })).id).toBe(order.id);
    expect(await codeOf(access(shop, { orderId: order.id, email: 'someone-else@example.test' }))).toBe(
      'store_forbidden',
    );

    await orm.em.fork().nativeUpdate(StoreSchema, { id: shop.storeId }, { settings: { emailOrderAccess: false } });
    expect(await codeOf(access(shop, { orderId: order.id, email: order.email }))).toBe('store_forbidden');
    // The token still opens it.
    expect((await access(shop, { orderId: order.id, token: order.token })).id).toBe(order.id);
  });

  it('refuses a staff session on an unsafe call without the right CSRF token with csrf_failed', async () => {
    const shop = await newShop();
    const order = await paidKeyOrder(shop);
    const session = await staffSession(shop, ['viewOrders']);
    const unsafe = { unsafe: true, csrf: 'required' } as const;
    expect(
      await codeOf(access(shop, { orderId: order.id }, { credentials: { sessionToken: session.token }, call: unsafe })),
    ).toBe('csrf_failed');
    expect(
      await codeOf(
        access(
          shop,
          { orderId: order.id },
          { credentials: { sessionToken: session.token, csrfToken: 'wrong' }, call: unsafe },
        ),
      ),
    ).toBe('csrf_failed');
    const opened = await access(
      shop,
      { orderId: order.id },
      { credentials: { sessionToken: session.token, csrfToken: session.csrfToken }, call: unsafe },
    );
    expect(opened.id).toBe(order.id);
  });

  it('opens the order to staff with viewOrders on a safe call, and only to them', async () => {
    const shop = await newShop();
    const order = await paidKeyOrder(shop);
    const safe = { unsafe: false, csrf: 'required' } as const;
    const viewer = await staffSession(shop, ['viewOrders']);
    const editorOnly = await staffSession(shop, ['manageProducts']);
    const stranger = await staffSession(shop, null);

    expect(
      (await access(shop, { orderId: order.id }, { credentials: { sessionToken: viewer.token }, call: safe })).id,
    ).toBe(order.id);
    expect(
      await codeOf(
        access(shop, { orderId: order.id }, { credentials: { sessionToken: editorOnly.token }, call: safe }),
      ),
    ).toBe('permission_missing');
    expect(
      await codeOf(access(shop, { orderId: order.id }, { credentials: { sessionToken: stranger.token }, call: safe })),
    ).toBe('store_forbidden');
  });

  it('delivers the assigned key to the buyer, and nothing once the order is refunded', async () => {
    const shop = await newShop();
    const order = await paidKeyOrder(shop);
    const opened = await access(shop, { orderId: order.id, token: order.token });
    expect((await deliveryPayload(shop.ctx(), opened)).licenseKeys?.map((k) => k.key)).toEqual([order.key]);
    expect((await orderKeys(shop.ctx(), opened)).keys.map((k) => k.key)).toEqual([order.key]);

    await refundOrder(contextOn(orm.em.fork()), { orderId: order.id, now: shop.clock.now() });
    const refunded = await access(shop, { orderId: order.id, token: order.token });
    expect(refunded.status).toBe('refunded');
    const payload = await deliveryPayload(shop.ctx(), refunded);
    expect(payload).toMatchObject({ status: 'refunded', methods: [] });
    expect(payload.licenseKeys).toBeUndefined();
    expect((await orderKeys(shop.ctx(), refunded)).keys).toEqual([]);
  });
});
