/**
 * Test mode at the service level (docs/architecture.md, Test mode), against the real database, without HTTP: the
 * context's `livemode` decides what a service reads and writes. Objects made in one mode are not
 * listed, found, changed or counted in the other (404 exactly as another store's); a cart that
 * mixes modes is 400 mixed_modes; an order, its lines and its event take its products' mode; the
 * fan-out queues an event only for endpoints of its mode; a buyer who may not see the store's test
 * mode (no preview token or test key) cannot order a test product. No credential makes a test
 * context here (keys and the dashboard's header come with the isolation test over every route),
 * so this is the services' side of the contract.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../test/support/env.js';
import { createStore } from '../../../../test/support/factories.js';
import { codeOf, serviceContext, contextOn } from '../../../../test/support/in-process.js';
import { openOrm, type Orm } from '../db/orm.js';
import { addBlacklistEntry, listBlacklist } from '../modules/blacklist/blacklist.service.js';
import { createProduct, getProduct, listProducts, updateProduct } from '../modules/catalog/catalog.service.js';
import { createOrder } from './place-order.js';
import { createCoupon, listCoupons } from '../modules/coupons/coupons.service.js';
import { EventSchema } from '../modules/events/events.entities.js';
import { listEvents } from '../modules/events/events.service.js';
import { OrderLineSchema } from '../modules/orders/orders.entities.js';
import { findStoreOrder } from '../modules/orders/order-lookup.js';
import { listOrders, storeStats } from '../modules/orders/orders.service.js';
import { fanOutBatch } from '../modules/webhooks/claims.repo.js';
import { WebhookDeliverySchema } from '../modules/webhooks/webhooks.entities.js';
import { createWebhook, getWebhook, listWebhooks } from '../modules/webhooks/endpoints.service.js';
import type { ServiceContext } from '../modules/request/context.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 2 });
});
afterAll(() => orm?.close());

/** A buyer on the seller's side (a preview token or test key, access/test-mode.ts): test products are theirs to buy. */
const buyer = { ip: '203.0.113.7', userAgent: 'test', country: 'DE', testMode: () => Promise.resolve(true) };
/** Anyone else: test products are unknown to them. */
const stranger = { ip: '203.0.113.8', userAgent: 'test', country: 'DE' };

function inMode(livemode: boolean): ServiceContext {
  return { ...serviceContext(orm), livemode };
}

describe('a store in two modes', () => {
  it('lists, finds and changes only the objects of the context’s mode; the other mode’s are 404', async () => {
    const store = await createStore(orm.em.fork());
    const live = inMode(true);
    const test = inMode(false);
    const name = (tag: string) => `${tag}-${randomBytes(3).toString('hex')}`;
    const liveProduct = await createProduct(live, {
      storeId: store.id,
      name: name('live'),
      price: 10,
      deliveryMethods: ['manualDelivery'],
    });
    const testProduct = await createProduct(test, {
      storeId: store.id,
      name: name('test'),
      price: 10,
      deliveryMethods: ['manualDelivery'],
    });
    expect(liveProduct.livemode).toBe(true);
    expect(testProduct.livemode).toBe(false);
    expect((await listProducts(live, { storeId: store.id })).map((p) => p.id)).toEqual([liveProduct.id]);
    expect((await listProducts(test, { storeId: store.id })).map((p) => p.id)).toEqual([testProduct.id]);
    expect(await codeOf(getProduct(test, { storeId: store.id, productId: liveProduct.id }))).toBe('not_found');
    expect(await codeOf(updateProduct(live, { storeId: store.id, productId: testProduct.id, name: 'x' }))).toBe(
      'not_found',
    );
    expect((await getProduct(live, { storeId: store.id, productId: liveProduct.id })).name).toBe(liveProduct.name);

    // The same code and the same blacklisted address in both modes: each mode its own.
    await createCoupon(live, { storeId: store.id, code: 'SAME', discountType: 'percent', discountValue: 10 });
    const testCoupon = await createCoupon(test, {
      storeId: store.id,
      code: 'SAME',
      discountType: 'percent',
      discountValue: 20,
    });
    expect(testCoupon.livemode).toBe(false);
    expect((await listCoupons(live, { storeId: store.id })).map((c) => c.discountValue)).toEqual([10]);
    expect((await listCoupons(test, { storeId: store.id })).map((c) => c.discountValue)).toEqual([20]);
    await addBlacklistEntry(test, { storeId: store.id, kind: 'email', value: 'blocked@example.test' });
    expect(await listBlacklist(live, { storeId: store.id })).toEqual([]);
    expect((await listBlacklist(test, { storeId: store.id })).map((e) => e.livemode)).toEqual([false]);

    // A test order: of its products' mode, with its lines and event; the live side never sees it.
    const created = await createOrder(
      test,
      { store: store.id, cart: [{ productId: testProduct.id, quantity: 1 }], email: 'b@example.test' },
      buyer,
    );
    expect(created.order.livemode).toBe(false);
    const lines = await orm.em.fork().find(OrderLineSchema, { order: created.order.id });
    expect(lines.map((line) => line.livemode)).toEqual([false]);
    expect(
      await codeOf(
        findStoreOrder(
          { ...contextOn(orm.em.fork()), livemode: true },
          { storeId: store.id, orderId: created.order.id },
        ),
      ),
    ).toBe('not_found');
    expect(
      (
        await findStoreOrder(
          { ...contextOn(orm.em.fork()), livemode: false },
          { storeId: store.id, orderId: created.order.id },
        )
      ).id,
    ).toBe(created.order.id);
    expect((await listOrders(live, { storeId: store.id })).orders).toEqual([]);
    expect((await listOrders(test, { storeId: store.id })).orders.map((o) => [o.id, o.livemode])).toEqual([
      [created.order.id, false],
    ]);
    // The blacklist a test order meets is the test one: the same address is refused there only.
    expect(
      await codeOf(
        createOrder(
          test,
          { store: store.id, cart: [{ productId: testProduct.id, quantity: 1 }], email: 'blocked@example.test' },
          buyer,
        ),
      ),
    ).toBe('blacklisted');
    await createOrder(
      live,
      { store: store.id, cart: [{ productId: liveProduct.id, quantity: 1 }], email: 'blocked@example.test' },
      buyer,
    );

    // Events: each of its object's mode, listed only in that mode.
    const liveEvents = (await listEvents(live, { storeId: store.id })).events;
    const testEvents = (await listEvents(test, { storeId: store.id })).events;
    expect(liveEvents.map((e) => [e.event, e.livemode])).toEqual([
      ['order.created', true],
      ['product.created', true],
    ]);
    expect(testEvents.map((e) => [e.event, e.livemode])).toEqual([
      ['order.created', false],
      ['product.created', false],
    ]);

    // The Home figures count only the mode's paid orders (none paid here in either).
    expect((await storeStats(test, { storeId: store.id })).last30Days.orders).toBe(0);
  });

  it('refuses a cart that mixes modes with mixed_modes, and writes nothing', async () => {
    const store = await createStore(orm.em.fork());
    const base = { storeId: store.id, price: 5, deliveryMethods: ['manualDelivery' as const] };
    const live = await createProduct(inMode(true), { ...base, name: 'Live one' });
    const test = await createProduct(inMode(false), { ...base, name: 'Test one' });
    const cart = [
      { productId: live.id, quantity: 1 },
      { productId: test.id, quantity: 1 },
    ];
    expect(await codeOf(createOrder(inMode(true), { store: store.id, cart, email: 'm@example.test' }, buyer))).toBe(
      'mixed_modes',
    );
    expect((await listOrders(inMode(true), { storeId: store.id })).orders).toEqual([]);
    expect((await listOrders(inMode(false), { storeId: store.id })).orders).toEqual([]);
  });

  it('never sells a test product to a buyer who may not see the store’s test mode: to them it is unknown', async () => {
    const store = await createStore(orm.em.fork());
    const base = { storeId: store.id, price: 5, deliveryMethods: ['manualDelivery' as const] };
    const live = await createProduct(inMode(true), { ...base, name: 'Live one' });
    const test = await createProduct(inMode(false), { ...base, name: 'Test one' });
    const order = (cart: Array<{ productId: string; quantity: number }>) =>
      createOrder(inMode(true), { store: store.id, cart, email: 's@example.test' }, stranger);
    expect(await codeOf(order([{ productId: test.id, quantity: 1 }]))).toBe('product_unavailable');
    // Beside a live product it is left out as an unknown one would be: no mixed_modes, nothing of it.
    expect(
      await codeOf(
        order([
          { productId: live.id, quantity: 1 },
          { productId: test.id, quantity: 1 },
        ]),
      ),
    ).toBe('product_unavailable');
    expect((await listOrders(inMode(false), { storeId: store.id })).orders).toEqual([]);
    const bought = await order([{ productId: live.id, quantity: 1 }]);
    expect(bought.order.livemode).toBe(true);
  });

  it('queues an event only for the endpoints of its mode', async () => {
    const store = await createStore(orm.em.fork());
    const hook = (ctx: ServiceContext, tag: string) =>
      createWebhook(ctx, {
        storeId: store.id,
        name: tag,
        url: `http://127.0.0.1:9/${tag}`,
        events: ['product.created'],
      });
    const liveHook = await hook(inMode(true), 'live');
    const testHook = await hook(inMode(false), 'test');
    expect([liveHook.livemode, testHook.livemode]).toEqual([true, false]);
    expect((await listWebhooks(inMode(true), store.id)).map((w) => w.id)).toEqual([liveHook.id]);
    expect(await codeOf(getWebhook(inMode(true), { storeId: store.id, webhookId: testHook.id }))).toBe('not_found');

    const product = await createProduct(inMode(false), {
      storeId: store.id,
      name: 'Test product',
      price: 1,
      deliveryMethods: ['manualDelivery'],
    });
    const event = await orm.em.fork().findOneOrFail(EventSchema, { store: store.id, type: 'product.created' });
    expect(event.livemode).toBe(false);
    expect(event.payload).toMatchObject({ product: { id: product.id, livemode: false } });
    // Other tests' events may be waiting in the shared outbox: fan out until this one is dispatched.
    for (let round = 0; round < 50; round++) {
      await fanOutBatch(orm.em.fork(), 500, new Date());
      const dispatched = await orm.em.fork().findOneOrFail(EventSchema, { id: event.id }, { refresh: true });
      if (dispatched.dispatchedAt) break;
    }
    const deliveries = await orm.em.fork().find(WebhookDeliverySchema, { eventId: event.id });
    expect(deliveries.map((d) => [d.webhook.id, d.livemode])).toEqual([[testHook.id, false]]);
  });
});
