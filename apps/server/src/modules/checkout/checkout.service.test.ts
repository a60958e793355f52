/** Order creation and expiry against the real database, on a clock the test moves. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../../test/support/env.js';
import { createStore } from '../../../../../test/support/factories.js';
import { serviceContext } from '../../../../../test/support/in-process.js';
import { openOrm, type Orm } from '../../db/orm.js';
import { ManualClock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { CouponSchema } from '../coupons/coupons.entities.js';
import { createProduct } from '../catalog/catalog.service.js';
import { OrderSchema } from '../orders/orders.entities.js';
import { createOrder, expirePendingOrders } from './checkout.service.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 2 });
});
afterAll(() => orm?.close());

const buyer = { ip: '203.0.113.5', userAgent: 'test', country: 'DE' };

describe('pending order expiry', () => {
  it('expires pending orders after the checkout lifetime and gives their coupon uses back', async () => {
    const clock = new ManualClock(Date.UTC(2026, 3, 1, 10, 0));
    const ctx = serviceContext(orm, clock);
    const store = await createStore(orm.em.fork());
    const product = await createProduct(ctx, { storeId: store.id, name: 'P', price: 10, deliveryMethods: ['manualDelivery'] });
    const couponId = newId();
    await orm.em.fork().insert(CouponSchema, {
      id: couponId, store: store.id, code: `SAVE${couponId.slice(0, 6)}`, discountType: 'percent', discountValue: 10, productIds: [], maxUses: 5, uses: 0,
      minAmountMinor: null, expiresAt: null, active: true, createdAt: clock.now(), updatedAt: clock.now(),
    });
    const code = `SAVE${couponId.slice(0, 6)}`.toLowerCase();
    const first = await createOrder(serviceContext(orm, clock), { store: store.id, cart: [{ productId: product.id, quantity: 1 }], email: 'a@example.test', coupon: code }, buyer);
    expect(first.order.discount).toBe(1);
    expect(first.order.price).toBe(9);
    clock.advance(30 * 60_000);
    const second = await createOrder(serviceContext(orm, clock), { store: store.id, cart: [{ productId: product.id, quantity: 1 }], email: 'b@example.test' }, buyer);
    const lifetime = ctx.deps.config.checkoutLifetimeMs;
    expect(lifetime).toBe(60 * 60_000);

    const statusOf = async (id: string) => (await orm.em.fork().findOneOrFail(OrderSchema, { id })).status;
    clock.advance(30 * 60_000 - 1); // the first is 1 ms short of its lifetime
    await orm.em.fork().transactional((em) => expirePendingOrders(em, clock.now(), lifetime));
    expect(await statusOf(first.order.id)).toBe('pending');
    clock.advance(1);
    await orm.em.fork().transactional((em) => expirePendingOrders(em, clock.now(), lifetime));

    const em = orm.em.fork();
    expect((await em.findOneOrFail(OrderSchema, { id: first.order.id })).status).toBe('expired');
    expect((await em.findOneOrFail(OrderSchema, { id: second.order.id })).status).toBe('pending');
    expect((await em.findOneOrFail(CouponSchema, { id: couponId })).uses).toBe(0);
  });
});
