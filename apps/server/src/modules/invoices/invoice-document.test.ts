/**
 * What an invoice and a credit note say (invoice-document.ts), from plain data: exact amounts from
 * minor units (cents and JPY's none), the tax per rate, the totals, the reverse-charge note, the
 * credit note's negative amounts and its reference to the invoice; and that the PDF
 * (invoice-pdf.ts) carries that text, read back with poppler's pdftotext.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  buildInvoiceDocument,
  invoiceAmount,
  ratePercent,
  REVERSE_CHARGE_NOTE,
  type InvoiceSource,
} from './invoice-document.js';
import { renderInvoicePdf } from './invoice-pdf.js';

const PAID_AT = new Date(Date.UTC(2026, 10, 3, 9, 30));
const REFUNDED_AT = new Date(Date.UTC(2026, 10, 20, 16, 0));

function source(
  overrides: Partial<InvoiceSource['order']> = {},
  kind: InvoiceSource['kind'] = 'invoice',
): InvoiceSource {
  return {
    kind,
    seller: { name: 'Pixel Forge GmbH', address: 'Hauptstr. 1\n10115 Berlin\nGermany', taxId: 'DE123456789' },
    order: {
      number: 42,
      currency: 'EUR',
      customerEmail: 'ana@example.com',
      taxBehavior: 'exclusive',
      reverseCharge: false,
      billingName: 'Ana Lopez',
      billingAddress: 'Calle 1\nMadrid',
      billingCountry: 'ES',
      buyerTaxId: null,
      invoiceNumber: 'INV-2026-7',
      creditNoteNumber: null,
      paidAt: PAID_AT,
      refundedAt: null,
      ...overrides,
    },
    lines: [
      // 2 x 19.99 with 1.00 off: net 38.98, 21% of it 8.1858 -> 8.19.
      {
        productName: 'Font Pack',
        quantity: 2,
        unitPriceMinor: 1999,
        discountMinor: 100,
        netMinor: 3898,
        taxMinor: 819,
        taxRatePpm: 210000,
      },
      {
        productName: 'Icons',
        quantity: 1,
        unitPriceMinor: 1250,
        discountMinor: 0,
        netMinor: 1250,
        taxMinor: 263,
        taxRatePpm: 210000,
      },
      // A reduced rate (e-books in Spain: 4%).
      {
        productName: 'Guide (e-book)',
        quantity: 1,
        unitPriceMinor: 999,
        discountMinor: 0,
        netMinor: 999,
        taxMinor: 40,
        taxRatePpm: 40000,
      },
    ],
  };
}

describe('amounts and rates as printed', () => {
  it('are exact decimal text from minor units', () => {
    expect(invoiceAmount(123456, 'EUR')).toBe('1,234.56');
    expect(invoiceAmount(5, 'EUR')).toBe('0.05');
    expect(invoiceAmount(0, 'EUR')).toBe('0.00');
    expect(invoiceAmount(-450, 'EUR')).toBe('-4.50');
    expect(invoiceAmount(1234567, 'JPY')).toBe('1,234,567');
    expect(invoiceAmount(900719925474099, 'USD')).toBe('9,007,199,254,740.99');
    expect(ratePercent(210000)).toBe('21%');
    expect(ratePercent(55000)).toBe('5.5%');
    expect(ratePercent(77000)).toBe('7.7%');
    expect(ratePercent(0)).toBe('0%');
  });
});

describe('buildInvoiceDocument', () => {
  it('states every line, the tax per rate and the totals exactly', () => {
    const doc = buildInvoiceDocument(source());
    expect(doc).toMatchObject({
      title: 'Invoice',
      number: 'INV-2026-7',
      date: '2026-11-03',
      credits: null,
      orderNumber: 'ORD-42',
      currency: 'EUR',
      seller: {
        name: 'Pixel Forge GmbH',
        addressLines: ['Hauptstr. 1', '10115 Berlin', 'Germany'],
        taxId: 'DE123456789',
      },
      buyer: {
        name: 'Ana Lopez',
        email: 'ana@example.com',
        addressLines: ['Calle 1', 'Madrid'],
        country: 'ES',
        taxId: null,
      },
      reverseChargeNote: null,
    });
    expect(doc.lines).toEqual([
      {
        description: 'Font Pack',
        quantity: 2,
        unitPrice: '19.99',
        discount: '1.00',
        net: '38.98',
        rate: '21%',
        tax: '8.19',
        total: '47.17',
      },
      {
        description: 'Icons',
        quantity: 1,
        unitPrice: '12.50',
        discount: '0.00',
        net: '12.50',
        rate: '21%',
        tax: '2.63',
        total: '15.13',
      },
      {
        description: 'Guide (e-book)',
        quantity: 1,
        unitPrice: '9.99',
        discount: '0.00',
        net: '9.99',
        rate: '4%',
        tax: '0.40',
        total: '10.39',
      },
    ]);
    expect(doc.taxByRate).toEqual([
      { rate: '21%', net: '51.48', tax: '10.82' },
      { rate: '4%', net: '9.99', tax: '0.40' },
    ]);
    expect(doc.totals).toEqual({ net: '61.47', tax: '11.22', gross: '72.69' });
    expect(doc.totalsMinor).toEqual({ net: 6147, tax: 1122, gross: 7269 });
  });

  it('a reverse-charge sale shows the buyer VAT id, rate 0 and the note', () => {
    const src = source({ reverseCharge: true, buyerTaxId: 'FR40303265045', billingCountry: 'FR' });
    src.lines = src.lines.map((line) => ({ ...line, taxMinor: 0, taxRatePpm: 0 }));
    const doc = buildInvoiceDocument(src);
    expect(doc.buyer.taxId).toBe('FR40303265045');
    expect(doc.reverseChargeNote).toBe(REVERSE_CHARGE_NOTE);
    expect(doc.taxByRate).toEqual([{ rate: '0%', net: '61.47', tax: '0.00' }]);
    expect(doc.totals).toEqual({ net: '61.47', tax: '0.00', gross: '61.47' });
  });

  it('inclusive prices: the unit price holds the tax, the totals add up to what was paid', () => {
    // 12.00 with 20% inside: net round(1200 / 1.2) = 1000, tax 200.
    const src = source({ taxBehavior: 'inclusive' });
    src.lines = [
      {
        productName: 'Plugin',
        quantity: 1,
        unitPriceMinor: 1200,
        discountMinor: 0,
        netMinor: 1000,
        taxMinor: 200,
        taxRatePpm: 200000,
      },
    ];
    const doc = buildInvoiceDocument(src);
    expect(doc.pricesNote).toMatch(/include tax/);
    expect(doc.totals).toEqual({ net: '10.00', tax: '2.00', gross: '12.00' });
  });

  it('JPY has no minor unit', () => {
    const src = source({ currency: 'JPY' });
    src.lines = [
      {
        productName: 'Sprite Kit',
        quantity: 3,
        unitPriceMinor: 1500,
        discountMinor: 0,
        netMinor: 4500,
        taxMinor: 450,
        taxRatePpm: 100000,
      },
    ];
    const doc = buildInvoiceDocument(src);
    expect(doc.lines[0]).toMatchObject({ unitPrice: '1,500', net: '4,500', tax: '450', total: '4,950', rate: '10%' });
    expect(doc.totals).toEqual({ net: '4,500', tax: '450', gross: '4,950' });
  });

  it('a credit note has its own number and date, names the invoice and states the amounts credited', () => {
    const doc = buildInvoiceDocument(source({ creditNoteNumber: 'CN-2026-2', refundedAt: REFUNDED_AT }, 'creditNote'));
    expect(doc).toMatchObject({
      title: 'Credit note',
      number: 'CN-2026-2',
      date: '2026-11-20',
      credits: 'Credit note for invoice INV-2026-7',
    });
    expect(doc.lines[0]).toMatchObject({
      unitPrice: '-19.99',
      discount: '-1.00',
      net: '-38.98',
      tax: '-8.19',
      total: '-47.17',
    });
    expect(doc.lines[1]!.discount).toBe('0.00');
    expect(doc.taxByRate).toEqual([
      { rate: '21%', net: '-51.48', tax: '-10.82' },
      { rate: '4%', net: '-9.99', tax: '-0.40' },
    ]);
    expect(doc.totals).toEqual({ net: '-61.47', tax: '-11.22', gross: '-72.69' });
  });

  it('refuses a credit note for an order that was not credited', () => {
    expect(() => buildInvoiceDocument(source({}, 'creditNote'))).toThrow(RangeError);
  });
});

describe('renderInvoicePdf', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-invoice-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const text = async (src: InvoiceSource) => {
    const file = path.join(dir, `${src.kind}.pdf`);
    const pdf = await renderInvoicePdf(buildInvoiceDocument(src), PAID_AT);
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    writeFileSync(file, pdf);
    return execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' });
  };

  it('prints the seller, the buyer, the number, each line, the tax per rate and the totals', async () => {
    const printed = await text(source({ reverseCharge: true, buyerTaxId: 'ES12345678Z' }));
    for (const expected of [
      'Invoice INV-2026-7',
      '2026-11-03',
      'ORD-42',
      'Pixel Forge GmbH',
      '10115 Berlin',
      'VAT id: DE123456789',
      'Ana Lopez',
      'Calle 1',
      'VAT id: ES12345678Z',
      'ana@example.com',
      'Tax 21% on 51.48',
      'Tax 4% on 9.99',
      '72.69',
      REVERSE_CHARGE_NOTE,
    ])
      expect(printed).toContain(expected);
    expect(printed).toMatch(/Font Pack\s+2\s+19\.99\s+1\.00\s+38\.98\s+21%\s+8\.19\s+47\.17/);
    expect(printed).toMatch(/Guide \(e-book\)\s+1\s+9\.99\s+0\.00\s+9\.99\s+4%\s+0\.40\s+10\.39/);
  });

  it('a credit note names its invoice', async () => {
    const printed = await text(source({ creditNoteNumber: 'CN-2026-2', refundedAt: REFUNDED_AT }, 'creditNote'));
    expect(printed).toContain('Credit note CN-2026-2');
    expect(printed).toContain('Credit note for invoice INV-2026-7');
    expect(printed).toMatch(/Total credited \(EUR\)\s+-72\.69/);
  });
});
