/**
 * Tax worked out by hand (docs/decisions.md, "#42 Tax"), against the real database, without HTTP:
 * each example states the store's settings, the buyer, the cart and, written out in the test, the
 * amounts the rules give: domestic and one-stop-shop rates, reverse charge, a country where the
 * store is not registered, inclusive and exclusive prices, per-line rounding under a coupon,
 * invoices and credit notes, a renewal after a rate change, and the bad input.
 */
import { randomBytes } from 'node:crypto';
import type { TCreateProductInput, TTaxSettingsInput } from '@svc/schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../test/support/env.js';
import { createStore } from '../../../../test/support/factories.js';
import { serviceContext } from '../../../../test/support/in-process.js';
import { openOrm, type Orm } from '../db/orm.js';
import { ManualClock } from '../lib/clock.js';
import { AppError } from '../lib/errors.js';
import { hydrateCart } from '../modules/catalog/cart.service.js';
import { createProduct } from '../modules/catalog/catalog.service.js';
import { createCoupon } from '../modules/coupons/coupons.service.js';
import { OrderLineSchema, OrderSchema } from '../modules/orders/orders.entities.js';
import { giveInvoiceNumber } from '../modules/orders/invoice-numbers.js';
import type { ServiceContext } from '../modules/request/context.js';
import { inTransaction } from '../modules/request/transaction.js';
import { updateMerchantStore } from '../modules/stores/stores.service.js';
import { advanceSubscription } from './advance-subscription.js';
import {
  checkoutSession,
  createOrder,
  startCheckout,
  updateCheckoutBilling,
  type BuyerContext,
} from './place-order.js';
import { markOrderPaid, refundStoreOrder } from './seller-order-actions.js';
import { handleNotification } from './settle-payment.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 4 });
});
afterAll(() => orm?.close());

const T0 = Date.UTC(2026, 5, 10, 9, 0);
const unique = () => randomBytes(6).toString('hex');
const ALL = () => Promise.resolve(true);
const fromDE: BuyerContext = { ip: '203.0.113.7', userAgent: 'test', country: 'DE', testMode: ALL };
const SELLER = {
  sellerName: 'Beispiel GmbH',
  sellerAddress: 'Hauptstraße 1\n10115 Berlin',
  sellerTaxId: 'DE136695976',
};

async function appError(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

/** A EUR store with this tax, and a context on a clock at `at`. */
async function taxedStore(tax: TTaxSettingsInput, options: { at?: number; currency?: string } = {}) {
  const clock = new ManualClock(options.at ?? T0);
  const ctx: ServiceContext = serviceContext(orm, clock);
  const store = await createStore(orm.em.fork(), { currency: options.currency ?? 'EUR' });
  await updateMerchantStore(ctx, { storeId: store.id, settings: { tax } });
  const product = (input: Partial<TCreateProductInput> & { price?: number }, livemode = true) =>
    createProduct(
      { ...ctx, livemode },
      {
        storeId: store.id,
        name: `Product ${unique()}`,
        deliveryMethods: ['deliveryInstructions'],
        deliveryInstructions: 'Thanks.',
        ...input,
      },
    );
  return { clock, ctx, store, product };
}

const german: TTaxSettingsInput = { behavior: 'exclusive', originCountry: 'DE', registrations: ['DE'], ...SELLER };
const oss: TTaxSettingsInput = { ...german, registrations: ['EU'] };

/** The context of one request: its own EntityManager, as each call has in the service. */
function fresh(ctx: ServiceContext): ServiceContext {
  return { ...ctx, em: orm.em.fork() };
}
function order(ctx: ServiceContext, id: string) {
  return ctx.em.fork().findOneOrFail(OrderSchema, { id });
}
function lines(ctx: ServiceContext, id: string) {
  return ctx.em.fork().find(OrderLineSchema, { order: id }, { orderBy: { position: 'asc' } });
}

describe('checkout tax, worked by hand', () => {
  it('charges a German buyer of a German store 19 % on top: 100.00 + 19.00 = 119.00', async () => {
    const { ctx, store, product } = await taxedStore(german);
    const p = await product({ price: 100 });
    const { order: placed } = await createOrder(
      ctx,
      { store: store.id, cart: [{ productId: p.id, quantity: 1 }], email: 'a@example.test', country: 'DE' },
      fromDE,
    );
    expect(placed).toMatchObject({
      subtotal: 100,
      discount: 0,
      taxAmount: 19,
      taxRate: 0.19,
      taxCountry: 'DE',
      reverseCharge: false,
      taxBehavior: 'exclusive',
      price: 119,
      invoiceNumber: null,
    });
    const row = await order(ctx, placed.id);
    expect(row).toMatchObject({ priceMinor: 11900, taxMinor: 1900, taxRatePpm: 190_000, billingCountry: 'DE' });
  });

  it("charges a French buyer of an EU-registered German store France's 20 %", async () => {
    const { ctx, store, product } = await taxedStore(oss);
    const p = await product({ price: 100 });
    const { order: placed } = await createOrder(
      ctx,
      { store: store.id, cart: [{ productId: p.id, quantity: 1 }], email: 'b@example.test', country: 'FR' },
      fromDE,
    );
    // The billing country wins over the IP's (DE); both are kept as evidence.
    expect(placed).toMatchObject({ taxAmount: 20, taxRate: 0.2, taxCountry: 'FR', price: 120 });
    expect(await order(ctx, placed.id)).toMatchObject({ country: 'DE', billingCountry: 'FR', taxCountry: 'FR' });
  });

  it('reverse-charges a French business with a valid VAT id: 0 %, the id kept for the invoice', async () => {
    const { ctx, store, product } = await taxedStore(oss);
    const p = await product({ price: 100 });
    const { order: placed } = await createOrder(
      ctx,
      {
        store: store.id,
        cart: [{ productId: p.id, quantity: 1 }],
        email: 'c@example.test',
        country: 'FR',
        taxId: 'FR 403 032 650 45',
        billingName: 'Exemple SARL',
      },
      fromDE,
    );
    expect(placed).toMatchObject({ taxAmount: 0, taxRate: 0, taxCountry: 'FR', reverseCharge: true, price: 100 });
    expect(await order(ctx, placed.id)).toMatchObject({ buyerTaxId: 'FR40303265045', billingName: 'Exemple SARL' });
  });

  it("taxes a German business's VAT id at home: domestic B2B is no reverse charge", async () => {
    const { ctx, store, product } = await taxedStore(oss);
    const p = await product({ price: 50 });
    const { order: placed } = await createOrder(
      ctx,
      {
        store: store.id,
        cart: [{ productId: p.id, quantity: 1 }],
        email: 'd@example.test',
        country: 'DE',
        taxId: 'DE136695976',
      },
      fromDE,
    );
    expect(placed).toMatchObject({ taxAmount: 9.5, taxRate: 0.19, reverseCharge: false, price: 59.5 });
  });

  it('charges no tax where the store is not registered (a US buyer of an EU store)', async () => {
    const { ctx, store, product } = await taxedStore(oss);
    const p = await product({ price: 100 });
    const { order: placed } = await createOrder(
      ctx,
      { store: store.id, cart: [{ productId: p.id, quantity: 2 }], email: 'e@example.test', country: 'US' },
      fromDE,
    );
    expect(placed).toMatchObject({ subtotal: 200, taxAmount: 0, taxRate: 0, taxCountry: 'US', price: 200 });
  });

  it('carves tax out of inclusive prices, rounding the net: 9.99 at 19 % is 8.39 + 1.60', async () => {
    const { ctx, store, product } = await taxedStore({ ...german, behavior: 'inclusive' });
    const p = await product({ price: 9.99 });
    const { order: placed } = await createOrder(
      ctx,
      { store: store.id, cart: [{ productId: p.id, quantity: 1 }], email: 'f@example.test', country: 'DE' },
      fromDE,
    );
    // 999 / 1.19 = 839.49… -> 839 net; 999 - 839 = 160 tax; the buyer pays the price as shown.
    expect(placed).toMatchObject({
      subtotal: 9.99,
      taxAmount: 1.6,
      taxRate: 0.19,
      price: 9.99,
      taxBehavior: 'inclusive',
    });
    expect((await lines(ctx, placed.id)).map((l) => [l.netMinor, l.taxMinor])).toEqual([[839, 160]]);
  });

  it('shares a coupon across a 3-line cart and rounds each line: 19.74 - 1.97 + 3.38 = 21.15', async () => {
    const { ctx, store, product } = await taxedStore(german);
    const a = await product({ price: 3.33 });
    const b = await product({ price: 7.77 });
    const c = await product({ price: 0.99 });
    const code = `TEN${unique()}`.toUpperCase();
    await createCoupon(ctx, { storeId: store.id, code, discountType: 'percent', discountValue: 10 });
    const { order: placed } = await createOrder(
      ctx,
      {
        store: store.id,
        cart: [
          { productId: a.id, quantity: 3 },
          { productId: b.id, quantity: 1 },
          { productId: c.id, quantity: 2 },
        ],
        email: 'g@example.test',
        coupon: code,
        country: 'DE',
      },
      fromDE,
    );
    // Lines 999, 777, 198 (1974); 10 % off is 197, shared by amount: 99.70, 77.54, 19.76 ->
    // 99, 77, 19 and the 2 left to the largest remainders (the third, then the first): 100, 77, 20.
    // Net 899, 700, 178; tax at 19 % each: 170.81 -> 171, 133.00 -> 133, 33.82 -> 34; 338 in all.
    expect((await lines(ctx, placed.id)).map((l) => [l.discountMinor, l.netMinor, l.taxMinor, l.taxRatePpm])).toEqual([
      [100, 899, 171, 190_000],
      [77, 700, 133, 190_000],
      [20, 178, 34, 190_000],
    ]);
    expect(placed).toMatchObject({ subtotal: 19.74, discount: 1.97, taxAmount: 3.38, price: 21.15 });
  });

  it("takes an e-book's reduced rate where the country has one: 7 % in Germany", async () => {
    const { ctx, store, product } = await taxedStore(oss);
    const book = await product({ price: 10, taxCategory: 'ebook' });
    const app = await product({ price: 10 });
    const { order: placed } = await createOrder(
      ctx,
      {
        store: store.id,
        cart: [
          { productId: book.id, quantity: 1 },
          { productId: app.id, quantity: 1 },
        ],
        email: 'h@example.test',
        country: 'DE',
      },
      fromDE,
    );
    // 0.70 and 1.90: the lines' rates differ, so the order names none.
    expect(placed).toMatchObject({ taxAmount: 2.6, taxRate: null, price: 22.6 });
    expect((await lines(ctx, placed.id)).map((l) => l.taxRatePpm)).toEqual([70_000, 190_000]);
  });

  it('keeps a currency without a minor unit whole: 1000 JPY at 10 % is 100 JPY', async () => {
    const { ctx, store, product } = await taxedStore(
      { behavior: 'exclusive', originCountry: 'JP', registrations: ['JP'], ...SELLER },
      { currency: 'JPY' },
    );
    const p = await product({ price: 1000 });
    const { order: placed } = await createOrder(
      ctx,
      { store: store.id, cart: [{ productId: p.id, quantity: 1 }], email: 'i@example.test', country: 'JP' },
      fromDE,
    );
    expect(placed).toMatchObject({ subtotal: 1000, taxAmount: 100, taxRate: 0.1, price: 1100 });
  });

  it('prices the cart with the tax before checkout, for the country asked or the caller’s own', async () => {
    const { ctx, store, product } = await taxedStore(oss);
    const p = await product({ price: 10 });
    const cart = JSON.stringify([{ productId: p.id, quantity: 3 }]);
    expect(await hydrateCart(ctx, { storeId: store.id, cart, country: 'FR' }, ALL, () => 'DE')).toMatchObject({
      subtotal: 30,
      taxAmount: 6,
      total: 36,
      taxRate: 0.2,
      taxCountry: 'FR',
      taxBehavior: 'exclusive',
    });
    expect(await hydrateCart(ctx, { storeId: store.id, cart }, ALL, () => 'DE')).toMatchObject({
      taxAmount: 5.7,
      total: 35.7,
    });
    // An unknown country of the caller: no tax until the buyer says where they are.
    expect(await hydrateCart(ctx, { storeId: store.id, cart }, ALL, () => 'XX')).toMatchObject({
      taxAmount: 0,
      total: 30,
      taxCountry: null,
    });
  });
});

describe('billing details at checkout', () => {
  it('re-taxes a pending order for the country and VAT id the buyer gives, and requires a country before paying', async () => {
    const { ctx, store, product } = await taxedStore(oss);
    const p = await product({ price: 100 });
    const placed = await createOrder(
      ctx,
      { store: store.id, cart: [{ productId: p.id, quantity: 1 }], email: 'j@example.test' },
      { ...fromDE, country: 'XX' },
    );
    expect(placed.order).toMatchObject({ taxAmount: 0, taxCountry: null, price: 100 });
    const start = { orderId: placed.order.id, token: placed.checkoutToken, paymentMethod: 'manual' as const };
    expect((await appError(startCheckout(fresh(ctx), start, fromDE))).issues).toMatchObject([{ path: 'country' }]);

    const it1 = await updateCheckoutBilling(fresh(ctx), { ...start, country: 'IT', taxId: null });
    expect(it1.order).toMatchObject({ taxAmount: 22, taxRate: 0.22, taxCountry: 'IT', price: 122 });
    const b2b = await updateCheckoutBilling(fresh(ctx), { ...start, country: 'IT', taxId: 'IT00743110157' });
    expect(b2b.order).toMatchObject({ taxAmount: 0, reverseCharge: true, price: 100 });
    // A malformed id is 400 naming the field; a VAT id of another country than the billing one too.
    const bad = await appError(updateCheckoutBilling(fresh(ctx), { ...start, country: 'IT', taxId: 'IT123' }));
    expect(bad.issues).toMatchObject([{ path: 'taxId' }]);
    const elsewhere = await appError(
      updateCheckoutBilling(fresh(ctx), { ...start, country: 'IT', taxId: 'FR40303265045' }),
    );
    expect(elsewhere.issues).toMatchObject([{ path: 'taxId' }]);

    const back = await updateCheckoutBilling(fresh(ctx), { ...start, country: 'AT', taxId: null });
    expect(back.order).toMatchObject({ taxAmount: 20, taxCountry: 'AT', reverseCharge: false, price: 120 });
    const started = await startCheckout(fresh(ctx), start, fromDE);
    expect(started.price).toBe(120);
  });
});

describe('invoices and credit notes', () => {
  it('numbers a taxed order when it is paid and gives a refund a credit note; an untaxed store numbers nothing', async () => {
    const { ctx, store, product, clock } = await taxedStore(german);
    const p = await product({ price: 10 });
    const place = async () =>
      (
        await createOrder(
          ctx,
          { store: store.id, cart: [{ productId: p.id, quantity: 1 }], email: 'k@example.test', country: 'DE' },
          fromDE,
        )
      ).order;
    const first = await place();
    const second = await place();
    // Numbers go by payment, not by placing: the second order is paid first.
    const paid2 = await markOrderPaid(ctx, { storeId: store.id, orderId: second.id });
    const paid1 = await markOrderPaid(ctx, { storeId: store.id, orderId: first.id });
    expect([paid2.invoiceNumber, paid1.invoiceNumber]).toEqual(['INV-2026-1', 'INV-2026-2']);
    const refunded = await refundStoreOrder(ctx, { storeId: store.id, orderId: second.id });
    expect(refunded).toMatchObject({ invoiceNumber: 'INV-2026-1', creditNoteNumber: 'CN-2026-1' });
    // A new year starts again at 1.
    clock.set(Date.UTC(2027, 0, 1, 0, 0, 1));
    const third = await place();
    expect((await markOrderPaid(ctx, { storeId: store.id, orderId: third.id })).invoiceNumber).toBe('INV-2027-1');

    // Tax off: no number, nothing changes.
    const plain = await createStore(orm.em.fork(), { currency: 'EUR' });
    const q = await createProduct(ctx, {
      storeId: plain.id,
      name: 'Plain',
      price: 10,
      deliveryMethods: ['deliveryInstructions'],
      deliveryInstructions: 'Thanks.',
    });
    const untaxed = (
      await createOrder(
        ctx,
        { store: plain.id, cart: [{ productId: q.id, quantity: 1 }], email: 'l@example.test', country: 'DE' },
        fromDE,
      )
    ).order;
    expect(untaxed).toMatchObject({ price: 10, taxAmount: 0, taxRate: null, taxCountry: null, taxBehavior: 'off' });
    expect((await markOrderPaid(ctx, { storeId: plain.id, orderId: untaxed.id })).invoiceNumber).toBeNull();
  });

  it('gives the number back when the paying transaction fails after taking it: no hole', async () => {
    const { ctx, store, product } = await taxedStore(german);
    const p = await product({ price: 10 });
    const placed = (
      await createOrder(
        ctx,
        { store: store.id, cart: [{ productId: p.id, quantity: 1 }], email: 'p@example.test', country: 'DE' },
        fromDE,
      )
    ).order;
    // A payment whose transaction fails once the number is taken (a crash, a lost connection).
    const failed = await appError(
      inTransaction(fresh(ctx), async (tx) => {
        const row = await tx.em.findOneOrFail(OrderSchema, { id: placed.id });
        await giveInvoiceNumber(tx, row, tx.clock.now());
        expect(row.invoiceNumber).toBe('INV-2026-1');
        throw new AppError('service_unavailable', 'The payment could not be recorded.');
      }),
    );
    expect(failed.appCode).toBe('service_unavailable');
    expect((await order(ctx, placed.id)).invoiceNumber).toBeNull();
    expect((await markOrderPaid(fresh(ctx), { storeId: store.id, orderId: placed.id })).invoiceNumber).toBe(
      'INV-2026-1',
    );
  });

  it('leaves orders placed before tax was turned on untaxed and unnumbered', async () => {
    const { ctx, store, product } = await taxedStore({ behavior: 'off' });
    const p = await product({ price: 10 });
    const before = (
      await createOrder(
        ctx,
        { store: store.id, cart: [{ productId: p.id, quantity: 1 }], email: 'm@example.test', country: 'DE' },
        fromDE,
      )
    ).order;
    await updateMerchantStore(ctx, { storeId: store.id, settings: { tax: german } });
    const paid = await markOrderPaid(ctx, { storeId: store.id, orderId: before.id });
    expect(paid).toMatchObject({ price: 10, taxAmount: 0, invoiceNumber: null });
    const after = (
      await createOrder(
        ctx,
        { store: store.id, cart: [{ productId: p.id, quantity: 1 }], email: 'm@example.test', country: 'DE' },
        fromDE,
      )
    ).order;
    expect(after).toMatchObject({ price: 11.9, taxAmount: 1.9 });
  });
});

describe('renewals', () => {
  it("taxes each renewal at the rate of its own date: Estonia's 22 % became 24 % on 1 July 2025", async () => {
    const start = Date.UTC(2025, 5, 15, 10, 0);
    const { ctx, store, product } = await taxedStore(oss, { at: start });
    const testCtx = { ...ctx, livemode: false };
    const plan = await product(
      { plans: [{ interval: 'month', intervalCount: 1, price: 10, trialDays: 0, active: true }] },
      false,
    );
    const { order: first } = await createOrder(
      testCtx,
      {
        store: store.id,
        cart: [{ productId: plan.id, quantity: 1 }],
        email: `n-${unique()}@example.test`,
        country: 'EE',
      },
      fromDE,
    );
    expect(first).toMatchObject({ taxRate: 0.22, taxAmount: 2.2, price: 12.2 });
    // The checkout says the next charge with its tax, as the renewal will work it out: 10.00 + 2.20.
    const session = await checkoutSession(fresh(testCtx), await order(testCtx, first.id));
    expect(session.nextCharge).toMatchObject({ amount: 12.2, interval: 'month' });
    const notification = {
      eventId: `page_${unique()}`,
      kind: 'paid' as const,
      orderId: first.id,
      amountMinor: 1220,
      currency: 'EUR',
      providerRef: `test:${unique()}`,
      savedMethod: { gateway: 'test' as const, customerRef: null, methodRef: 'succeeds' as const },
    };
    expect(await handleNotification(testCtx, { gateway: 'test', notification, now: new Date(start) })).toBe('settled');
    const result = await advanceSubscription(testCtx, {
      storeId: store.id,
      subscriptionId: first.subscriptionId!,
      to: new Date(Date.UTC(2025, 6, 20)).toISOString(),
    });
    expect(
      result.orders.map((o) => [o.billingReason, o.status, o.price, o.taxRate, o.taxAmount, o.invoiceNumber]),
    ).toEqual([['subscription_cycle', 'completed', 12.4, 0.24, 2.4, 'INV-2025-2']]);
  });
});

describe('tax settings', () => {
  it('refuses a registration svc has no rates for, and tax on without the seller’s details', async () => {
    const { ctx, store } = await taxedStore({ behavior: 'off' });
    const error = await appError(
      updateMerchantStore(ctx, { storeId: store.id, settings: { tax: { ...german, registrations: ['DE', 'AQ'] } } }),
    );
    expect(error.issues).toMatchObject([{ path: 'settings.tax.registrations.1' }]);
    const { ZTaxSettingsInput } = await import('@svc/schemas');
    const parsed = ZTaxSettingsInput.safeParse({ behavior: 'exclusive', originCountry: 'DE', registrations: ['XY'] });
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues.map((issue) => issue.path.join('.')).sort()).toEqual([
      'registrations.0',
      'sellerAddress',
      'sellerName',
      'sellerTaxId',
    ]);
  });

  it('changes only future orders when the origin country changes', async () => {
    const { ctx, store, product } = await taxedStore(oss);
    const p = await product({ price: 100 });
    const viaFR = async () =>
      (
        await createOrder(
          ctx,
          {
            store: store.id,
            cart: [{ productId: p.id, quantity: 1 }],
            email: 'o@example.test',
            country: 'FR',
            taxId: 'FR40303265045',
          },
          fromDE,
        )
      ).order;
    const before = await viaFR();
    expect(before).toMatchObject({ reverseCharge: true, price: 100 });
    // Moved to France: a French business is now domestic B2B, taxed.
    await updateMerchantStore(ctx, { storeId: store.id, settings: { tax: { ...oss, originCountry: 'FR' } } });
    expect(await viaFR()).toMatchObject({ reverseCharge: false, taxAmount: 20, price: 120 });
    expect(await order(ctx, before.id)).toMatchObject({ reverseCharge: true, priceMinor: 10000 });
  });
});
