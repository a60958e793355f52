/**
 * The invoice and credit note documents (modules/invoices) of orders placed, paid and refunded
 * through the flows, against the real database, without HTTP: the seller from the store's tax
 * settings as they were when the invoice was issued, the buyer's billing details, each line's share of a coupon, net and tax exactly as the
 * order's lines hold them, the totals equal to what the buyer paid, the credit note negative and
 * naming the invoice; an untaxed or unpaid order has none (404 not_found).
 */
import { randomBytes } from 'node:crypto';
import type { TTaxSettingsInput } from '@svc/schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../test/support/env.js';
import { createStore } from '../../../../test/support/factories.js';
import { serviceContext } from '../../../../test/support/in-process.js';
import { openOrm, type Orm } from '../db/orm.js';
import { ManualClock } from '../lib/clock.js';
import { AppError } from '../lib/errors.js';
import { createProduct } from '../modules/catalog/catalog.service.js';
import { createCoupon } from '../modules/coupons/coupons.service.js';
import { orderDocument, storeOrderDocumentPdf } from '../modules/invoices/invoices.service.js';
import { REVERSE_CHARGE_NOTE } from '../modules/invoices/invoice-document.js';
import { OrderSchema } from '../modules/orders/orders.entities.js';
import type { ServiceContext } from '../modules/request/context.js';
import { updateMerchantStore } from '../modules/stores/stores.service.js';
import { createOrder, type BuyerContext } from './place-order.js';
import { markOrderPaid, refundStoreOrder } from './seller-order-actions.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 4 });
});
afterAll(() => orm?.close());

const T0 = Date.UTC(2026, 5, 10, 9, 0);
const ALL = () => Promise.resolve(true);
const fromDE: BuyerContext = { ip: '203.0.113.7', userAgent: 'test', country: 'DE', testMode: ALL };
const unique = () => randomBytes(6).toString('hex');

/** A German seller registered for the EU's one-stop shop, prices without tax. */
const BERLIN: TTaxSettingsInput = {
  behavior: 'exclusive',
  originCountry: 'DE',
  registrations: ['EU'],
  sellerName: 'Beispiel GmbH',
  sellerAddress: 'Hauptstraße 1\n10115 Berlin',
  sellerTaxId: 'DE136695976',
};

async function germanStore() {
  const clock = new ManualClock(T0);
  const ctx: ServiceContext = serviceContext(orm, clock);
  const store = await createStore(orm.em.fork(), { currency: 'EUR' });
  await updateMerchantStore(ctx, { storeId: store.id, settings: { tax: BERLIN } });
  const product = (name: string, price: number) =>
    createProduct(ctx, {
      storeId: store.id,
      name,
      price,
      deliveryMethods: ['deliveryInstructions'],
      deliveryInstructions: 'Thanks.',
    });
  return { clock, ctx, store, product };
}

const loaded = (ctx: ServiceContext, id: string) => ctx.em.fork().findOneOrFail(OrderSchema, { id });

describe('invoice documents of real orders', () => {
  it('states a 3-line cart under a coupon line by line, exactly, and its credit note after the refund', async () => {
    const { ctx, store, product, clock } = await germanStore();
    const a = await product('Brushes', 3.33);
    const b = await product('Textures', 7.77);
    const c = await product('Stickers', 0.99);
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
        email: 'buyer@example.test',
        coupon: code,
        country: 'DE',
        billingName: 'Erika Muster',
        billingAddress: 'Seestraße 5\n20095 Hamburg',
      },
      fromDE,
    );
    // Unpaid: no invoice yet.
    const unpaid = await orderDocument(ctx, { order: await loaded(ctx, placed.id), kind: 'invoice' }).catch((e) => e);
    expect(unpaid).toBeInstanceOf(AppError);
    expect((unpaid as AppError).appCode).toBe('not_found');

    const paid = await markOrderPaid(ctx, { storeId: store.id, orderId: placed.id });
    const invoice = await orderDocument(ctx, { order: await loaded(ctx, placed.id), kind: 'invoice' });
    expect(invoice).toMatchObject({
      title: 'Invoice',
      number: paid.invoiceNumber,
      date: '2026-06-10',
      orderNumber: paid.orderId,
      currency: 'EUR',
      seller: { name: 'Beispiel GmbH', addressLines: ['Hauptstraße 1', '10115 Berlin'], taxId: 'DE136695976' },
      buyer: {
        name: 'Erika Muster',
        email: 'buyer@example.test',
        addressLines: ['Seestraße 5', '20095 Hamburg'],
        country: 'DE',
        taxId: null,
      },
      reverseChargeNote: null,
    });
    // Lines 9.99, 7.77, 1.98; the coupon's 1.97 shared 1.00, 0.77, 0.20; 19 % of each net, rounded per line.
    expect(invoice.lines).toEqual([
      {
        description: 'Brushes',
        quantity: 3,
        unitPrice: '3.33',
        discount: '1.00',
        net: '8.99',
        rate: '19%',
        tax: '1.71',
        total: '10.70',
      },
      {
        description: 'Textures',
        quantity: 1,
        unitPrice: '7.77',
        discount: '0.77',
        net: '7.00',
        rate: '19%',
        tax: '1.33',
        total: '8.33',
      },
      {
        description: 'Stickers',
        quantity: 2,
        unitPrice: '0.99',
        discount: '0.20',
        net: '1.78',
        rate: '19%',
        tax: '0.34',
        total: '2.12',
      },
    ]);
    expect(invoice.taxByRate).toEqual([{ rate: '19%', net: '17.77', tax: '3.38' }]);
    expect(invoice.totals).toEqual({ net: '17.77', tax: '3.38', gross: '21.15' });
    // What the buyer paid, to the cent.
    expect(invoice.totalsMinor.gross).toBe(Math.round(paid.price * 100));

    clock.set(Date.UTC(2026, 6, 2, 12, 0));
    const refunded = await refundStoreOrder(ctx, { storeId: store.id, orderId: placed.id });
    const credit = await orderDocument(ctx, { order: await loaded(ctx, placed.id), kind: 'creditNote' });
    expect(credit).toMatchObject({
      title: 'Credit note',
      number: refunded.creditNoteNumber,
      date: '2026-07-02',
      credits: `Credit note for invoice ${paid.invoiceNumber}`,
      totals: { net: '-17.77', tax: '-3.38', gross: '-21.15' },
    });
    const pdf = await storeOrderDocumentPdf(ctx, { storeId: store.id, orderId: paid.orderId, kind: 'creditNote' });
    expect(pdf.fileName).toBe(`${refunded.creditNoteNumber}.pdf`);
    expect(pdf.pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
  });

  it('a reverse-charge sale: 0 %, the buyer VAT id and the note', async () => {
    const { ctx, store, product } = await germanStore();
    const p = await product('Plugin', 50);
    const { order: placed } = await createOrder(
      ctx,
      {
        store: store.id,
        cart: [{ productId: p.id, quantity: 1 }],
        email: 'b2b@example.test',
        country: 'FR',
        taxId: 'FR40303265045',
      },
      fromDE,
    );
    await markOrderPaid(ctx, { storeId: store.id, orderId: placed.id });
    const invoice = await orderDocument(ctx, { order: await loaded(ctx, placed.id), kind: 'invoice' });
    expect(invoice.buyer).toMatchObject({ country: 'FR', taxId: 'FR40303265045' });
    expect(invoice.reverseChargeNote).toBe(REVERSE_CHARGE_NOTE);
    expect(invoice.taxByRate).toEqual([{ rate: '0%', net: '50.00', tax: '0.00' }]);
    expect(invoice.totals).toEqual({ net: '50.00', tax: '0.00', gross: '50.00' });
  });

  it('an issued invoice keeps the seller it named when the store edits its name, address and tax id', async () => {
    const { ctx, store, product, clock } = await germanStore();
    const p = await product('Fonts', 20);
    const place = async () =>
      (
        await createOrder(
          ctx,
          { store: store.id, cart: [{ productId: p.id, quantity: 1 }], email: 'keep@example.test', country: 'DE' },
          fromDE,
        )
      ).order;
    const first = await place();
    await markOrderPaid(ctx, { storeId: store.id, orderId: first.id });

    // The business moves and changes its name after the first invoice.
    await updateMerchantStore(ctx, {
      storeId: store.id,
      settings: {
        tax: {
          ...BERLIN,
          sellerName: 'Beispiel AG',
          sellerAddress: 'Neue Allee 9\n80331 München',
          sellerTaxId: 'DE129273398',
        },
      },
    });
    const original = {
      name: 'Beispiel GmbH',
      addressLines: ['Hauptstraße 1', '10115 Berlin'],
      taxId: 'DE136695976',
    };
    const invoice = await orderDocument(ctx, { order: await loaded(ctx, first.id), kind: 'invoice' });
    expect(invoice.seller).toEqual(original);

    // Its credit note, issued after the edit, names the seller its invoice named.
    clock.set(T0 + 86_400_000);
    await refundStoreOrder(ctx, { storeId: store.id, orderId: first.id });
    const credit = await orderDocument(ctx, { order: await loaded(ctx, first.id), kind: 'creditNote' });
    expect(credit.seller).toEqual(original);

    // An invoice issued after the edit names the seller as the store names itself now.
    const second = await place();
    await markOrderPaid(ctx, { storeId: store.id, orderId: second.id });
    const later = await orderDocument(ctx, { order: await loaded(ctx, second.id), kind: 'invoice' });
    expect(later.seller).toEqual({
      name: 'Beispiel AG',
      addressLines: ['Neue Allee 9', '80331 München'],
      taxId: 'DE129273398',
    });
  });

  it('an order of a store without tax has neither document; another store cannot name it', async () => {
    const clock = new ManualClock(T0);
    const ctx = serviceContext(orm, clock);
    const plain = await createStore(orm.em.fork(), { currency: 'EUR' });
    const p = await createProduct(ctx, {
      storeId: plain.id,
      name: 'Plain',
      price: 5,
      deliveryMethods: ['deliveryInstructions'],
      deliveryInstructions: 'Thanks.',
    });
    const { order: placed } = await createOrder(
      ctx,
      { store: plain.id, cart: [{ productId: p.id, quantity: 1 }], email: 'p@example.test' },
      fromDE,
    );
    await markOrderPaid(ctx, { storeId: plain.id, orderId: placed.id });
    for (const kind of ['invoice', 'creditNote'] as const) {
      const error = await storeOrderDocumentPdf(ctx, { storeId: plain.id, orderId: placed.id, kind }).catch((e) => e);
      expect((error as AppError).appCode).toBe('not_found');
    }
    const other = await createStore(orm.em.fork(), { currency: 'EUR' });
    const elsewhere = await storeOrderDocumentPdf(ctx, {
      storeId: other.id,
      orderId: placed.id,
      kind: 'invoice',
    }).catch((e) => e);
    expect((elsewhere as AppError).appCode).toBe('not_found');
  });
});
