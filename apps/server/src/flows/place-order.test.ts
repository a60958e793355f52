/**
 * Checkout rules against the real database, without HTTP, on a clock the test moves
 * (docs/decisions.md, "IDs and money"):
 * - pending orders expire after the checkout lifetime and give their coupon uses back;
 * - createOrder refuses what cannot be sold (empty cart, unavailable products, short key stock,
 *   blacklisted buyers, banned or unknown stores), prices from the database, applies a coupon and
 *   claims a use, checks custom-field answers, and writes the order, its lines and its
 *   `order.created` event in one go;
 * - orderForToken opens an order with its checkout token only;
 * - startCheckout takes a method the store offers for a pending order within its lifetime, with an
 *   e-mail, the required answers, at most one coupon, and a buyer the store does not refuse;
 * - checkoutSession summarises the order for the checkout page.
 */
import { randomBytes } from 'node:crypto';
import type { TCreateProductInput, TPaymentMethod } from '@svc/schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../test/support/env.js';
import { createStore } from '../../../../test/support/factories.js';
import { serviceContext, contextOn } from '../../../../test/support/in-process.js';
import { openOrm, type Orm } from '../db/orm.js';
import { ManualClock } from '../lib/clock.js';
import { sha256Hex } from '../lib/crypto.js';
import { newId } from '../lib/ids.js';
import { addBlacklistEntry } from '../modules/blacklist/blacklist.service.js';
import { CouponSchema } from '../modules/coupons/coupons.entities.js';
import { createCoupon } from '../modules/coupons/coupons.service.js';
import { createProduct, deleteProduct } from '../modules/catalog/catalog.service.js';
import { importKeys } from '../modules/catalog/key-store.js';
import { EventSchema } from '../modules/events/events.entities.js';
import { cancelOrder } from './seller-order-actions.js';
import { orderForToken } from '../modules/orders/order-lookup.js';
import { OrderLineSchema, OrderSchema } from '../modules/orders/orders.entities.js';
import {
  decide,
  IDEMPOTENCY_CLAIM_TIMEOUT_MS,
  idempotentResponseKey,
  type Claim,
  type IdempotentCall,
} from '../modules/idempotency/idempotency.service.js';
import { StoreSchema } from '../modules/stores/stores.entities.js';
import {
  checkoutSession,
  createOrder,
  startCheckout,
  type BuyerContext,
  type CreateOrderRequest,
} from './place-order.js';
import { expirePendingOrders } from './expire-orders.js';

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
    const product = await createProduct(ctx, {
      storeId: store.id,
      name: 'P',
      price: 10,
      deliveryMethods: ['manualDelivery'],
    });
    const couponId = newId();
    await orm.em.fork().insert(CouponSchema, {
      id: couponId,
      store: store.id,
      code: `SAVE${couponId.slice(0, 6)}`,
      discountType: 'percent',
      discountValue: 10,
      productIds: [],
      maxUses: 5,
      uses: 0,
      minAmountMinor: null,
      expiresAt: null,
      active: true,
      createdAt: clock.now(),
      updatedAt: clock.now(),
    });
    const code = `SAVE${couponId.slice(0, 6)}`.toLowerCase();
    const first = await createOrder(
      serviceContext(orm, clock),
      { store: store.id, cart: [{ productId: product.id, quantity: 1 }], email: 'a@example.test', coupon: code },
      buyer,
    );
    expect(first.order.discount).toBe(1);
    expect(first.order.price).toBe(9);
    clock.advance(30 * 60_000);
    const second = await createOrder(
      serviceContext(orm, clock),
      { store: store.id, cart: [{ productId: product.id, quantity: 1 }], email: 'b@example.test' },
      buyer,
    );
    const lifetime = ctx.deps.config.checkoutLifetimeMs;
    expect(lifetime).toBe(60 * 60_000);

    const statusOf = async (id: string) => (await orm.em.fork().findOneOrFail(OrderSchema, { id })).status;
    clock.advance(30 * 60_000 - 1); // the first is 1 ms short of its lifetime
    await expirePendingOrders(serviceContext(orm, clock));
    expect(await statusOf(first.order.id)).toBe('pending');
    clock.advance(1);
    await expirePendingOrders(serviceContext(orm, clock));

    const em = orm.em.fork();
    expect((await em.findOneOrFail(OrderSchema, { id: first.order.id })).status).toBe('expired');
    expect((await em.findOneOrFail(OrderSchema, { id: second.order.id })).status).toBe('pending');
    expect((await em.findOneOrFail(CouponSchema, { id: couponId })).uses).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------
// Shared fixtures for the rules below: every test makes its own store, products and buyers.

const unique = () => randomBytes(6).toString('hex');
const email = () => `buyer-${unique()}@example.test`;
const T0 = Date.UTC(2026, 5, 1, 8, 0);
const LIFETIME_MS = 60 * 60_000;

interface Shop {
  id: string;
  subdomain: string;
  clock: ManualClock;
  env: Record<string, string>;
}

async function shop(
  opts: { paymentMethods?: TPaymentMethod[]; manualPaymentInstructions?: string; env?: Record<string, string> } = {},
): Promise<Shop> {
  const store = await createStore(orm.em.fork(), { name: `Shop ${unique()}` });
  if (opts.paymentMethods || opts.manualPaymentInstructions) {
    await orm.em.fork().nativeUpdate(
      StoreSchema,
      { id: store.id },
      {
        settings: {
          paymentMethods: opts.paymentMethods ?? ['manual'],
          manualPaymentInstructions: opts.manualPaymentInstructions ?? '',
        },
      },
    );
  }
  return { id: store.id, subdomain: store.subdomain, clock: new ManualClock(T0), env: opts.env ?? {} };
}

/** A fresh service context on the shop's clock and configuration (as each request gets one). */
const ctxOf = (s: Shop) => serviceContext(orm, s.clock, s.env);

/** An active product sold with delivery instructions (no stock counted), unless `fields` says otherwise. */
const product = (s: Shop, fields: Partial<Omit<TCreateProductInput, 'storeId'>> = {}) =>
  createProduct(ctxOf(s), {
    name: 'Ebook',
    price: 10,
    deliveryMethods: ['deliveryInstructions'],
    deliveryInstructions: 'Read it online.',
    ...fields,
    storeId: s.id,
  });

const keys = (s: Shop, productId: string, count: number) =>
  importKeys(ctxOf(s), { storeId: s.id, productId, keys: Array.from({ length: count }, () => `KEY-${unique()}`) });

const order = (
  s: Shop,
  request: Partial<CreateOrderRequest> & Pick<CreateOrderRequest, 'cart'>,
  who: BuyerContext = buyer,
) => createOrder(ctxOf(s), { store: s.id, email: email(), ...request }, who);

const line = (productId: string, quantity = 1) => ({ productId, quantity });
const ordersOf = (storeId: string) => orm.em.fork().find(OrderSchema, { store: storeId });
const orderRow = (id: string) => orm.em.fork().findOneOrFail(OrderSchema, { id });
const couponRow = (storeId: string, code: string) =>
  orm.em.fork().findOneOrFail(CouponSchema, { store: storeId, code });

describe('createOrder: what cannot be sold', () => {
  it('refuses an empty cart (cart_empty)', async () => {
    const s = await shop();
    await expect(order(s, { cart: [] })).rejects.toMatchObject({ appCode: 'cart_empty' });
    expect(await ordersOf(s.id)).toHaveLength(0);
  });

  it("refuses an unknown, draft, deleted or other store's product (product_unavailable)", async () => {
    const s = await shop();
    const elsewhere = await shop();
    const active = await product(s);
    const draft = await product(s, { status: 'draft' });
    const deleted = await product(s);
    await deleteProduct(ctxOf(s), { storeId: s.id, productId: deleted.id });
    const foreign = await product(elsewhere);

    for (const productId of [newId(), draft.id, deleted.id, foreign.id]) {
      await expect(order(s, { cart: [line(active.id), line(productId)] })).rejects.toMatchObject({
        appCode: 'product_unavailable',
      });
    }
    expect(await ordersOf(s.id)).toHaveLength(0);
    await expect(order(s, { cart: [line(active.id)] })).resolves.toMatchObject({ order: { status: 'pending' } });
  });

  it('refuses a cart beyond key stock (out_of_stock) and sells exactly the stock', async () => {
    const s = await shop();
    const keyed = await product(s, { deliveryMethods: ['licenseKeys'], deliveryInstructions: '' });
    const soldOut = await product(s, { deliveryMethods: ['licenseKeys'], deliveryInstructions: '' });
    await keys(s, keyed.id, 2);

    await expect(order(s, { cart: [line(keyed.id, 3)] })).rejects.toMatchObject({ appCode: 'out_of_stock' });
    await expect(order(s, { cart: [line(keyed.id, 2), line(keyed.id, 1)] })).rejects.toMatchObject({
      appCode: 'out_of_stock',
    });
    await expect(order(s, { cart: [line(soldOut.id)] })).rejects.toMatchObject({ appCode: 'out_of_stock' });
    expect(await ordersOf(s.id)).toHaveLength(0);

    const created = await order(s, { cart: [line(keyed.id, 2)] });
    expect(created.order.lines).toEqual([
      { productId: keyed.id, productName: 'Ebook', quantity: 2, unitPrice: 10, plan: null },
    ]);
  });

  it('refuses a banned store (store_banned) and an unknown one (not_found); finds a store by subdomain too', async () => {
    const banned = await createStore(orm.em.fork(), { banned: true });
    await expect(
      createOrder(serviceContext(orm), { store: banned.id, cart: [line(newId())], email: email() }, buyer),
    ).rejects.toMatchObject({ appCode: 'store_banned' });
    await expect(
      createOrder(serviceContext(orm), { store: banned.subdomain, cart: [line(newId())], email: email() }, buyer),
    ).rejects.toMatchObject({ appCode: 'store_banned' });
    await expect(
      createOrder(serviceContext(orm), { store: newId(), cart: [line(newId())], email: email() }, buyer),
    ).rejects.toMatchObject({ appCode: 'not_found' });

    const s = await shop();
    const p = await product(s);
    const created = await order(s, { store: s.subdomain.toUpperCase(), cart: [line(p.id)] });
    expect(created.order.storeId).toBe(s.id);
  });

  it('refuses a buyer whose e-mail, IP or country the store blacklisted (blacklisted)', async () => {
    const s = await shop();
    const p = await product(s);
    const ctx = ctxOf(s);
    await addBlacklistEntry(ctx, { storeId: s.id, kind: 'email', value: 'Blocked@Example.test' });
    await addBlacklistEntry(ctx, { storeId: s.id, kind: 'ip', value: '198.51.100.66' });
    await addBlacklistEntry(ctx, { storeId: s.id, kind: 'country', value: 'ru' });

    await expect(order(s, { cart: [line(p.id)], email: 'blocked@example.test' })).rejects.toMatchObject({
      appCode: 'blacklisted',
    });
    await expect(order(s, { cart: [line(p.id)], email: 'BLOCKED@example.TEST' })).rejects.toMatchObject({
      appCode: 'blacklisted',
    });
    await expect(order(s, { cart: [line(p.id)] }, { ...buyer, ip: '198.51.100.66' })).rejects.toMatchObject({
      appCode: 'blacklisted',
    });
    await expect(order(s, { cart: [line(p.id)] }, { ...buyer, country: 'RU' })).rejects.toMatchObject({
      appCode: 'blacklisted',
    });
    expect(await ordersOf(s.id)).toHaveLength(0);

    await expect(
      order(s, { cart: [line(p.id)] }, { ...buyer, ip: '198.51.100.67', country: 'FR' }),
    ).resolves.toBeDefined();
    // Another store's blacklist is not this one's.
    const other = await shop();
    const q = await product(other);
    await expect(
      order(other, { cart: [line(q.id)], email: 'blocked@example.test' }, { ...buyer, country: 'RU' }),
    ).resolves.toBeDefined();
  });
});

describe('createOrder: price, coupon and custom fields', () => {
  it('applies a coupon: subtotal, discount and price in minor units, and claims one use', async () => {
    const s = await shop();
    const p = await product(s, { price: 12.5 });
    await createCoupon(ctxOf(s), { storeId: s.id, code: 'SAVE20', discountType: 'percent', discountValue: 20 });

    const created = await order(s, { cart: [line(p.id, 2)], coupon: 'save20' });

    expect(created.order).toMatchObject({ subtotal: 25, discount: 5, price: 20, currency: 'USD' });
    const row = await orderRow(created.order.id);
    const coupon = await couponRow(s.id, 'SAVE20');
    expect(row).toMatchObject({ subtotalMinor: 2500, discountMinor: 500, priceMinor: 2000, couponId: coupon.id });
    expect(coupon.uses).toBe(1);
  });

  it('keeps the coupon code on the order and shows it with the discount in order.created', async () => {
    const s = await shop();
    const p = await product(s, { price: 12.5 });
    await createCoupon(ctxOf(s), { storeId: s.id, code: 'Spring10', discountType: 'fixed', discountValue: 1.25 });

    const created = await order(s, { cart: [line(p.id, 2)], coupon: 'SPRING10' });

    // The code as the seller wrote it, not as the buyer typed it.
    expect(await orderRow(created.order.id)).toMatchObject({ couponCode: 'Spring10', discountMinor: 125 });
    const [event] = await orm.em.fork().find(EventSchema, { store: s.id, type: 'order.created' });
    expect(event!.payload).toMatchObject({ order: { price: 23.75, discount: 1.25, couponCode: 'Spring10' } });
    const plain = await order(s, { cart: [line(p.id)] });
    const events = await orm.em.fork().find(EventSchema, { store: s.id, type: 'order.created' });
    expect(events.find((e) => (e.payload.order as { id: string }).id === plain.order.id)!.payload).toMatchObject({
      order: { discount: 0, couponCode: null },
    });
  });

  it('refuses a coupon that does not apply (coupon_invalid) and claims nothing', async () => {
    const s = await shop();
    const p = await product(s);
    await createCoupon(ctxOf(s), { storeId: s.id, code: 'ONCE', discountType: 'fixed', discountValue: 3, maxUses: 1 });

    await expect(order(s, { cart: [line(p.id)], coupon: 'NOPE' })).rejects.toMatchObject({ appCode: 'coupon_invalid' });
    const first = await order(s, { cart: [line(p.id)], coupon: 'ONCE' });
    expect(first.order.price).toBe(7);
    await expect(order(s, { cart: [line(p.id)], coupon: 'ONCE' })).rejects.toMatchObject({ appCode: 'coupon_invalid' });

    expect((await couponRow(s.id, 'ONCE')).uses).toBe(1);
    expect(await ordersOf(s.id)).toHaveLength(1);
  });

  it('requires the required fields when answers are given, naming the field (validation_failed)', async () => {
    const s = await shop();
    const p = await product(s, {
      customFields: [
        { name: 'Username', type: 'text', required: true },
        { name: 'Newsletter', type: 'checkbox', required: false },
      ],
    });
    const missing = { appCode: 'validation_failed', issues: [{ path: 'customFields.Username' }] };
    await expect(order(s, { cart: [line(p.id)], customFields: {} })).rejects.toMatchObject(missing);
    await expect(
      order(s, { cart: [line(p.id)], customFields: { Username: '   ', Newsletter: true } }),
    ).rejects.toMatchObject(missing);
    await expect(
      order(s, { cart: [line(p.id)], customFields: { Username: 'neo', Colour: 'red' } }),
    ).rejects.toMatchObject({
      appCode: 'validation_failed',
      issues: [{ path: 'customFields.Colour' }],
    });
    expect(await ordersOf(s.id)).toHaveLength(0);

    // No answers at all: the checkout page asks for them and checkout/start insists.
    const deferred = await order(s, { cart: [line(p.id)] });
    expect((await orderRow(deferred.order.id)).customFieldResponses).toEqual([]);
  });

  it("keeps the answers in the products' field order, one per name, trimmed", async () => {
    const s = await shop();
    const first = await product(s, {
      name: 'Server slot',
      customFields: [
        { name: 'Username', type: 'text', required: true },
        { name: 'Age', type: 'number', required: false },
      ],
    });
    const second = await product(s, {
      name: 'Skin',
      customFields: [
        { name: 'Contact', type: 'email', required: false },
        { name: 'Username', type: 'text', required: false },
      ],
    });

    const created = await order(s, {
      cart: [line(first.id), line(second.id)],
      customFields: { Contact: ' me@example.test ', Age: '42', Username: ' neo ' },
    });

    expect((await orderRow(created.order.id)).customFieldResponses).toEqual([
      { name: 'Username', value: 'neo' },
      { name: 'Age', value: '42' },
      { name: 'Contact', value: 'me@example.test' },
    ]);
  });
});

describe('createOrder: the order, its lines and order.created in one write', () => {
  it('writes the order, its lines in cart order and its order.created event', async () => {
    const s = await shop();
    const a = await product(s, { name: 'Album', price: 4.99 });
    const b = await product(s, { name: 'Bonus track', price: 0.99 });
    const who = { ...buyer, ip: '203.0.113.44' };

    const { order: created, checkoutToken } = await order(
      s,
      { cart: [line(b.id, 3), line(a.id)], email: 'fan@example.test' },
      who,
    );

    const row = await orderRow(created.id);
    expect(created.orderId).toBe(`ORD-${row.number}`);
    expect(row).toMatchObject({
      status: 'pending',
      productName: 'Bonus track +1 more',
      subtotalMinor: 3 * 99 + 499,
      priceMinor: 796,
      paidMinor: 0,
      customerEmail: 'fan@example.test',
      buyerIp: '203.0.113.44',
      country: 'DE',
      paymentMethod: '',
    });
    expect(row.checkoutTokenHash).toBe(sha256Hex(checkoutToken));
    expect(row.checkoutTokenHash).not.toContain(checkoutToken);
    expect(row.createdAt.getTime()).toBe(T0);
    expect(created.expiresAt).toBe(new Date(T0 + LIFETIME_MS).toISOString());

    const lines = await orm.em.fork().find(OrderLineSchema, { order: created.id }, { orderBy: { position: 'asc' } });
    expect(
      lines.map(({ productId, productName, quantity, unitPriceMinor, position }) => ({
        productId,
        productName,
        quantity,
        unitPriceMinor,
        position,
      })),
    ).toEqual([
      { productId: b.id, productName: 'Bonus track', quantity: 3, unitPriceMinor: 99, position: 0 },
      { productId: a.id, productName: 'Album', quantity: 1, unitPriceMinor: 499, position: 1 },
    ]);

    const events = await orm.em.fork().find(EventSchema, { store: s.id, type: 'order.created' });
    expect(events).toHaveLength(1);
    expect(events[0]!.id).toMatch(/^evt_/);
    expect(events[0]!.payload).toMatchObject({
      order: {
        id: created.id,
        orderId: created.orderId,
        status: 'pending',
        price: 7.96,
        customerEmail: 'fan@example.test',
      },
    });
  });

  it('writes nothing, and gives the coupon use back, when the database refuses part of it', async () => {
    const s = await shop();
    const p = await product(s, { price: 1 });
    await createCoupon(ctxOf(s), { storeId: s.id, code: 'TEN', discountType: 'percent', discountValue: 10 });
    // The order row alone would be valid; its line's quantity does not fit the column (the
    // route's schema caps quantities, the service does not), so the one statement fails late.
    const tooMany = 3_000_000_000;

    await expect(order(s, { cart: [line(p.id, tooMany)], coupon: 'TEN' })).rejects.toThrow();

    expect(await ordersOf(s.id)).toHaveLength(0);
    expect(await orm.em.fork().count(EventSchema, { store: s.id, type: 'order.created' })).toBe(0);
    expect((await couponRow(s.id, 'TEN')).uses).toBe(0);
  });
});

describe('createOrder with an Idempotency-Key: the order and its result commit together', () => {
  const claimFor = (s: Shop, token: string): Claim => ({
    path: 'checkout.create',
    scope: s.id,
    keyHash: sha256Hex(`key-${s.id}`),
    bodyHash: sha256Hex('{}'),
    token,
  });
  /** One application (one encryption key) for every request of a test, each with its own EntityManager. */
  const apps = new Map<string, ReturnType<typeof ctxOf>>();
  const appOf = (s: Shop) => apps.get(s.id) ?? apps.set(s.id, ctxOf(s)).get(s.id)!;
  const requestCtx = (s: Shop, idempotency: IdempotentCall) => ({ ...appOf(s), em: orm.em.fork(), idempotency });
  const responseKey = (s: Shop) => idempotentResponseKey(appOf(s).deps.config.encryptionKey);

  it('a process that dies after the order commits leaves its result: the retry past the claim timeout gets that order, and no second one', async () => {
    const s = await shop();
    const p = await product(s, { price: 3 });
    const request = { store: s.id, email: 'once@example.test', cart: [line(p.id)] };
    const first = claimFor(s, 'first');
    expect(await decide({ em: orm.em.fork(), clock: s.clock }, { claim: first, responseKey: responseKey(s) })).toEqual({
      run: true,
    });
    const call = { mode: 'run' as const, claim: first, status: 201, recorded: false };
    const created = await createOrder(requestCtx(s, call), request, buyer);
    expect(call.recorded).toBe(true);
    // The process dies here: nothing after the service runs. The retry comes after the claim timeout.
    s.clock.advance(IDEMPOTENCY_CLAIM_TIMEOUT_MS + 1_000);
    const retry = await decide(
      { em: orm.em.fork(), clock: s.clock },
      { claim: claimFor(s, 'retry'), responseKey: responseKey(s) },
    );
    expect(retry).toEqual({ run: false, response: JSON.stringify(created), kind: 'result' });
    if (retry.run || !('kind' in retry)) throw new Error('unreachable');
    const replayed = await createOrder(
      requestCtx(s, { mode: 'replay', result: JSON.parse(retry.response) }),
      request,
      buyer,
    );
    expect(replayed).toEqual(created);
    expect((await ordersOf(s.id)).map((o) => o.id)).toEqual([created.order.id]);
  });

  it("a run whose claim a retry took over writes no order (the retry's is the one)", async () => {
    const s = await shop();
    const p = await product(s, { price: 3 });
    await createCoupon(ctxOf(s), { storeId: s.id, code: 'FIVE', discountType: 'percent', discountValue: 5 });
    const request = { store: s.id, email: 'slow@example.test', cart: [line(p.id)], coupon: 'FIVE' };
    const slow = claimFor(s, 'slow');
    expect(await decide({ em: orm.em.fork(), clock: s.clock }, { claim: slow, responseKey: responseKey(s) })).toEqual({
      run: true,
    });
    s.clock.advance(IDEMPOTENCY_CLAIM_TIMEOUT_MS + 1_000);
    const retry = claimFor(s, 'retry');
    expect(await decide({ em: orm.em.fork(), clock: s.clock }, { claim: retry, responseKey: responseKey(s) })).toEqual({
      run: true,
    });
    const retried = await createOrder(
      requestCtx(s, { mode: 'run', claim: retry, status: 201, recorded: false }),
      request,
      buyer,
    );
    await expect(
      createOrder(requestCtx(s, { mode: 'run', claim: slow, status: 201, recorded: false }), request, buyer),
    ).rejects.toMatchObject({ appCode: 'idempotency_key_in_use' });
    expect((await ordersOf(s.id)).map((o) => o.id)).toEqual([retried.order.id]);
    expect(await orm.em.fork().count(EventSchema, { store: s.id, type: 'order.created' })).toBe(1);
    expect((await couponRow(s.id, 'FIVE')).uses).toBe(1);
  });
});

describe('orderForToken', () => {
  it('opens an order with its own token only (store_forbidden), and an unknown order is not_found', async () => {
    const s = await shop();
    const p = await product(s);
    const mine = await order(s, { cart: [line(p.id)] });
    const theirs = await order(s, { cart: [line(p.id)] });

    expect((await orderForToken(contextOn(orm.em.fork()), mine.order.id, mine.checkoutToken)).id).toBe(mine.order.id);
    await expect(orderForToken(contextOn(orm.em.fork()), mine.order.id, theirs.checkoutToken)).rejects.toMatchObject({
      appCode: 'store_forbidden',
    });
    await expect(
      orderForToken(contextOn(orm.em.fork()), mine.order.id, mine.checkoutToken.slice(1)),
    ).rejects.toMatchObject({
      appCode: 'store_forbidden',
    });
    await expect(orderForToken(contextOn(orm.em.fork()), newId(), mine.checkoutToken)).rejects.toMatchObject({
      appCode: 'not_found',
    });
  });
});

describe('startCheckout', () => {
  const start = (
    s: Shop,
    created: { order: { id: string }; checkoutToken: string },
    fields: {
      paymentMethod?: TPaymentMethod;
      email?: string;
      coupon?: string;
      customFields?: Record<string, string | number | boolean>;
    } = {},
    who: BuyerContext = buyer,
  ) =>
    startCheckout(
      ctxOf(s),
      { orderId: created.order.id, token: created.checkoutToken, paymentMethod: 'manual', ...fields },
      who,
    );

  it('starts a manual payment: the method is stored and the instructions name the amount and the order', async () => {
    const s = await shop({ manualPaymentInstructions: 'IBAN DE00 1234 5678' });
    const p = await product(s, { price: 25 });
    const created = await order(s, { cart: [line(p.id)] });

    const started = await start(s, created);

    expect(started).toMatchObject({ orderId: created.order.id, paymentMethod: 'manual', price: 25, currency: 'USD' });
    expect(started.instructions).toContain('IBAN DE00 1234 5678');
    expect(started.instructions).toContain('Amount: $25.00.');
    expect(started.instructions).toContain(created.order.orderId);
    expect((await orderRow(created.order.id)).paymentMethod).toBe('manual');
  });

  it('refuses a method the store does not offer (validation_failed on paymentMethod)', async () => {
    const s = await shop({ env: { TEST_GATEWAY_SECRET: 'checkout-test-secret' } });
    const p = await product(s);
    const created = await order(s, { cart: [line(p.id)] });

    await expect(start(s, created, { paymentMethod: 'test' })).rejects.toMatchObject({
      appCode: 'validation_failed',
      issues: [{ path: 'paymentMethod' }],
    });
    expect((await orderRow(created.order.id)).paymentMethod).toBe('');

    await orm.em.fork().nativeUpdate(StoreSchema, { id: s.id }, { settings: { paymentMethods: ['manual', 'test'] } });
    const started = await start(s, created, { paymentMethod: 'test' });
    expect(started.redirectUrl).toContain(created.order.id);
  });

  it('refuses a method the store offers but this process cannot take, before writing anything', async () => {
    // Stripe offered by the store, but no STRIPE_SECRET_KEY here: nothing of the start may stick.
    const s = await shop();
    await orm.em.fork().nativeUpdate(StoreSchema, { id: s.id }, { settings: { paymentMethods: ['manual', 'stripe'] } });
    const p = await product(s, { price: 10 });
    await createCoupon(ctxOf(s), { storeId: s.id, code: 'HALF', discountType: 'percent', discountValue: 50 });
    const created = await order(s, { cart: [line(p.id)] });

    await expect(start(s, created, { paymentMethod: 'stripe', coupon: 'HALF' })).rejects.toMatchObject({
      appCode: 'validation_failed',
      issues: [{ path: 'paymentMethod' }],
    });
    expect(await orderRow(created.order.id)).toMatchObject({ paymentMethod: '', couponId: null, priceMinor: 1000 });
    expect((await couponRow(s.id, 'HALF')).uses).toBe(0);
    // The buyer picks another method and the coupon still applies.
    await expect(start(s, created, { paymentMethod: 'manual', coupon: 'HALF' })).resolves.toMatchObject({ price: 5 });
  });

  it('refuses an order past the checkout lifetime or no longer pending (order_not_pending)', async () => {
    const s = await shop();
    const p = await product(s);
    const created = await order(s, { cart: [line(p.id)] });

    s.clock.advance(LIFETIME_MS - 1);
    await expect(start(s, created)).resolves.toMatchObject({ paymentMethod: 'manual' });
    s.clock.advance(1); // still `pending` in the table: the sweeper has not run yet
    await expect(start(s, created)).rejects.toMatchObject({ appCode: 'order_not_pending' });

    const cancelled = await order(s, { cart: [line(p.id)] });
    await cancelOrder(contextOn(orm.em.fork()), { orderId: cancelled.order.id, now: s.clock.now() });
    await expect(start(s, cancelled)).rejects.toMatchObject({ appCode: 'order_not_pending' });
  });

  it('applies a coupon given at start once (naming it again changes nothing); a second coupon is a conflict', async () => {
    const s = await shop();
    const p = await product(s, { price: 40 });
    const ctx = ctxOf(s);
    await createCoupon(ctx, { storeId: s.id, code: 'HALF', discountType: 'percent', discountValue: 50 });
    await createCoupon(ctx, { storeId: s.id, code: 'FIVE', discountType: 'fixed', discountValue: 5 });
    const created = await order(s, { cart: [line(p.id)] });

    const started = await start(s, created, { coupon: 'half' });
    expect(started.price).toBe(20);
    const half = await couponRow(s.id, 'HALF');
    expect(half.uses).toBe(1);
    expect(await orderRow(created.order.id)).toMatchObject({
      couponId: half.id,
      subtotalMinor: 4000,
      discountMinor: 2000,
      priceMinor: 2000,
    });

    // A retry naming the coupon already applied changes nothing.
    await expect(start(s, created, { coupon: 'HALF' })).resolves.toMatchObject({ price: 20 });
    expect((await couponRow(s.id, 'HALF')).uses).toBe(1);
    await expect(start(s, created, { coupon: 'FIVE' })).rejects.toMatchObject({ appCode: 'conflict' });
    const withCoupon = await order(s, { cart: [line(p.id)], coupon: 'FIVE' });
    await expect(start(s, withCoupon, { coupon: 'HALF' })).rejects.toMatchObject({ appCode: 'conflict' });
    expect((await couponRow(s.id, 'HALF')).uses).toBe(1);
    expect((await orderRow(withCoupon.order.id)).priceMinor).toBe(3500);
  });

  it("requires an e-mail: the order's, or one given at start", async () => {
    const s = await shop();
    const p = await product(s);
    const created = await order(s, { cart: [line(p.id)], email: null });

    await expect(start(s, created)).rejects.toMatchObject({
      appCode: 'validation_failed',
      issues: [{ path: 'email' }],
    });
    await start(s, created, { email: 'late@example.test' });
    expect((await orderRow(created.order.id)).customerEmail).toBe('late@example.test');
  });

  it('refuses a buyer the store blacklisted since the order was made, and changes nothing (blacklisted)', async () => {
    const s = await shop();
    const p = await product(s);
    const created = await order(s, { cart: [line(p.id)], email: 'first@example.test' });
    await addBlacklistEntry(ctxOf(s), { storeId: s.id, kind: 'email', value: 'blocked@example.test' });
    await addBlacklistEntry(ctxOf(s), { storeId: s.id, kind: 'ip', value: '198.51.100.99' });

    await expect(start(s, created, { email: 'blocked@example.test' })).rejects.toMatchObject({
      appCode: 'blacklisted',
    });
    await expect(start(s, created, {}, { ...buyer, ip: '198.51.100.99' })).rejects.toMatchObject({
      appCode: 'blacklisted',
    });
    expect(await orderRow(created.order.id)).toMatchObject({ customerEmail: 'first@example.test', paymentMethod: '' });

    await addBlacklistEntry(ctxOf(s), { storeId: s.id, kind: 'email', value: 'first@example.test' });
    await expect(start(s, created)).rejects.toMatchObject({ appCode: 'blacklisted' });
  });

  it('insists at start on required answers left out at creation', async () => {
    const s = await shop();
    const p = await product(s, { customFields: [{ name: 'Username', type: 'text', required: true }] });
    const created = await order(s, { cart: [line(p.id)] });

    await expect(start(s, created)).rejects.toMatchObject({
      appCode: 'validation_failed',
      issues: [{ path: 'customFields.Username' }],
    });
    await expect(start(s, created, { customFields: {} })).rejects.toMatchObject({
      appCode: 'validation_failed',
      issues: [{ path: 'customFields.Username' }],
    });
    await start(s, created, { customFields: { Username: 'trinity' } });
    expect((await orderRow(created.order.id)).customFieldResponses).toEqual([{ name: 'Username', value: 'trinity' }]);
  });
});

describe('checkoutSession', () => {
  it('summarises the order with its store, the methods payable here and the fields to ask', async () => {
    const s = await shop({
      paymentMethods: ['stripe', 'test', 'manual'],
      env: { TEST_GATEWAY_SECRET: 'checkout-test-secret' },
    });
    const a = await product(s, {
      name: 'Plugin',
      price: 30,
      customFields: [{ name: 'Domain', type: 'text', required: false }],
    });
    const b = await product(s, {
      name: 'Support',
      price: 10,
      customFields: [
        { name: 'Domain', type: 'text', required: true },
        { name: 'Agree', type: 'checkbox', required: true },
      ],
    });
    await createCoupon(ctxOf(s), { storeId: s.id, code: 'TENOFF', discountType: 'fixed', discountValue: 10 });
    const created = await order(s, {
      cart: [line(a.id), line(b.id, 2)],
      coupon: 'TENOFF',
      customFields: { Domain: 'example.org', Agree: true },
    });
    const opened = await orderForToken(contextOn(orm.em.fork()), created.order.id, created.checkoutToken);

    const session = await checkoutSession(ctxOf(s), opened);

    const store = await orm.em.fork().findOneOrFail(StoreSchema, { id: s.id });
    expect(session.store).toEqual({ id: s.id, name: store.name, subdomain: s.subdomain });
    expect(session.order).toMatchObject({
      id: created.order.id,
      orderId: created.order.orderId,
      status: 'pending',
      subtotal: 50,
      discount: 10,
      price: 40,
      currency: 'USD',
      expiresAt: new Date(T0 + LIFETIME_MS).toISOString(),
      lines: [
        { productId: a.id, productName: 'Plugin', quantity: 1, unitPrice: 30 },
        { productId: b.id, productName: 'Support', quantity: 2, unitPrice: 10 },
      ],
    });
    // Stripe is offered but not configured in this process; `test` has its secret.
    expect(session.paymentMethods).toEqual(['test', 'manual']);
    expect(session.customFields).toEqual([
      { name: 'Domain', type: 'text', required: true },
      { name: 'Agree', type: 'checkbox', required: true },
    ]);
    expect(session.answers).toEqual([
      { name: 'Domain', value: 'example.org' },
      { name: 'Agree', value: 'true' },
    ]);

    // A process that cannot take `test` leaves it out. (Outside production the configuration always
    // has the gateway's secret now, config.ts making one when none is set: this takes it away.)
    const plain = serviceContext(orm, s.clock);
    const noTestGateway = {
      ...plain,
      deps: { ...plain.deps, config: { ...plain.deps.config, testGatewaySecret: undefined } },
    };
    const withoutSecret = await checkoutSession(noTestGateway, opened);
    expect(withoutSecret.paymentMethods).toEqual(['manual']);
  });
});
