/**
 * The tax report over orders the real flows made (docs/decisions.md, "#42 The tax report"), against
 * the real database, without HTTP: an EU-registered German store sells to France (a standard line at
 * 20 % and an e-book at 5.5 % in one order), to Germany (19 %) and to a French business (reverse
 * charge); checkout works the tax out, paying gives the invoice, a refund next month the credit
 * note. Each month's report, and the two months together, say what the amounts written out here say.
 */
import { randomBytes } from 'node:crypto';
import type { TCreateProductInput } from '@svc/schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../test/support/env.js';
import { createStore } from '../../../../test/support/factories.js';
import { serviceContext } from '../../../../test/support/in-process.js';
import { openOrm, type Orm } from '../db/orm.js';
import { ManualClock } from '../lib/clock.js';
import type { ServiceContext } from '../modules/request/context.js';
import { updateMerchantStore } from '../modules/stores/stores.service.js';
import { createProduct } from '../modules/catalog/catalog.service.js';
import { taxReport } from '../modules/tax/tax-report.service.js';
import { createOrder, type BuyerContext } from './place-order.js';
import { markOrderPaid, refundStoreOrder } from './seller-order-actions.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 4 });
});
afterAll(() => orm?.close());

const ALL = () => Promise.resolve(true);
const fromDE: BuyerContext = { ip: '203.0.113.7', userAgent: 'test', country: 'DE', testMode: ALL };
const JUNE = { from: '2026-06-01T00:00:00Z', to: '2026-07-01T00:00:00Z' };
const JULY = { from: '2026-07-01T00:00:00Z', to: '2026-08-01T00:00:00Z' };

describe('the tax report over checkout, payment and refund', () => {
  it("adds June's invoices per country and line rate, and subtracts July's credit note in July", async () => {
    const clock = new ManualClock(Date.UTC(2026, 5, 10, 9, 0));
    const ctx: ServiceContext = serviceContext(orm, clock);
    const fresh = (): ServiceContext => ({ ...ctx, em: orm.em.fork() });
    const store = await createStore(orm.em.fork(), { currency: 'EUR' });
    await updateMerchantStore(fresh(), {
      storeId: store.id,
      settings: {
        tax: {
          behavior: 'exclusive',
          originCountry: 'DE',
          registrations: ['EU'],
          sellerName: 'Beispiel GmbH',
          sellerAddress: 'Hauptstraße 1\n10115 Berlin',
          sellerTaxId: 'DE136695976',
        },
      },
    });
    const product = (input: Partial<TCreateProductInput> & { price: number }) =>
      createProduct(fresh(), {
        storeId: store.id,
        name: `Product ${randomBytes(4).toString('hex')}`,
        deliveryMethods: ['deliveryInstructions'],
        deliveryInstructions: 'Thanks.',
        ...input,
      });
    const app = await product({ price: 100 });
    const book = await product({ price: 10, taxCategory: 'ebook' });
    const buy = async (cart: Array<{ productId: string; quantity: number }>, buyer: Record<string, string>) => {
      const { order } = await createOrder(
        fresh(),
        { store: store.id, cart, email: `${randomBytes(4).toString('hex')}@example.test`, country: 'DE', ...buyer },
        fromDE,
      );
      return markOrderPaid(fresh(), { storeId: store.id, orderId: order.id });
    };

    // France: 100.00 at 20 % (20.00) and an e-book of 10.00 at 5.5 % (0.55), one invoice.
    const french = await buy(
      [
        { productId: app.id, quantity: 1 },
        { productId: book.id, quantity: 1 },
      ],
      { country: 'FR' },
    );
    // Germany: 2 x 100.00 at 19 % (38.00).
    const german = await buy([{ productId: app.id, quantity: 2 }], { country: 'DE' });
    // A French business with a VAT id: 100.00, reverse charge, no tax.
    await buy([{ productId: app.id, quantity: 1 }], { country: 'FR', taxId: 'FR40303265045' });
    expect([french.invoiceNumber, german.invoiceNumber]).toEqual(['INV-2026-1', 'INV-2026-2']);

    // The German order is refunded in July: its credit note belongs to July.
    clock.set(Date.UTC(2026, 6, 2, 12, 0));
    expect((await refundStoreOrder(fresh(), { storeId: store.id, orderId: german.id })).creditNoteNumber).toBe(
      'CN-2026-1',
    );

    const june = await taxReport(fresh(), { storeId: store.id, ...JUNE });
    expect(june.rows).toEqual([
      {
        country: 'DE',
        rate: 0.19,
        reverseCharge: false,
        currency: 'EUR',
        taxable: 200,
        tax: 38,
        invoices: 1,
        creditNotes: 0,
      },
      {
        country: 'FR',
        rate: 0.2,
        reverseCharge: false,
        currency: 'EUR',
        taxable: 100,
        tax: 20,
        invoices: 1,
        creditNotes: 0,
      },
      {
        country: 'FR',
        rate: 0.055,
        reverseCharge: false,
        currency: 'EUR',
        taxable: 10,
        tax: 0.55,
        invoices: 1,
        creditNotes: 0,
      },
      {
        country: 'FR',
        rate: 0,
        reverseCharge: true,
        currency: 'EUR',
        taxable: 100,
        tax: 0,
        invoices: 1,
        creditNotes: 0,
      },
    ]);
    expect(june.totals).toEqual([{ currency: 'EUR', taxable: 410, tax: 58.55 }]);

    const july = await taxReport(fresh(), { storeId: store.id, ...JULY });
    expect(july.rows).toEqual([
      {
        country: 'DE',
        rate: 0.19,
        reverseCharge: false,
        currency: 'EUR',
        taxable: -200,
        tax: -38,
        invoices: 0,
        creditNotes: 1,
      },
    ]);

    const both = await taxReport(fresh(), { storeId: store.id, from: JUNE.from, to: JULY.to });
    expect(both.rows[0]).toEqual({
      country: 'DE',
      rate: 0.19,
      reverseCharge: false,
      currency: 'EUR',
      taxable: 0,
      tax: 0,
      invoices: 1,
      creditNotes: 1,
    });
    expect(both.totals).toEqual([{ currency: 'EUR', taxable: 210, tax: 20.55 }]);
    // Test mode's report of the same store has none of these live orders.
    expect((await taxReport({ ...fresh(), livemode: false }, { storeId: store.id, ...JUNE })).rows).toEqual([]);
  });
});
