/**
 * What an invoice or a credit note says (docs/decisions.md, "#42 Invoices"), as plain data built
 * from plain data: the seller (the store's `settings.tax`), the buyer (e-mail and the billing
 * details given at checkout), the numbers and dates, each line with its discount, net, rate and
 * tax, the tax per rate and the totals. Every amount is text made exactly from minor units
 * (lib/money.ts): nothing here is a float. Rendering it is invoice-pdf.ts's.
 *
 * A credit note is the invoice's mirror: its own number and date (the refund's), a line naming
 * the invoice it credits, and every amount negative (what is credited).
 */
import { currencyExponent } from '../../lib/money.js';
import { PPM } from '../tax/rates.js';

export const REVERSE_CHARGE_NOTE =
  'Reverse charge: VAT to be accounted for by the recipient (Art. 196 Directive 2006/112/EC)';

export type InvoiceKind = 'invoice' | 'creditNote';

/** What the document is built from: the order's columns, its lines' and the seller's details. */
export interface InvoiceSource {
  kind: InvoiceKind;
  seller: { name: string; address: string; taxId: string };
  order: {
    number: number;
    currency: string;
    customerEmail: string;
    taxBehavior: 'exclusive' | 'inclusive';
    reverseCharge: boolean;
    billingName: string | null;
    billingAddress: string | null;
    billingCountry: string | null;
    buyerTaxId: string | null;
    invoiceNumber: string;
    creditNoteNumber: string | null;
    paidAt: Date;
    refundedAt: Date | null;
  };
  lines: Array<{
    productName: string;
    quantity: number;
    unitPriceMinor: number;
    discountMinor: number;
    netMinor: number;
    taxMinor: number;
    taxRatePpm: number;
  }>;
}

export interface InvoiceDocumentLine {
  description: string;
  quantity: number;
  unitPrice: string;
  discount: string;
  net: string;
  rate: string;
  tax: string;
  /** Net plus tax. */
  total: string;
}

export interface InvoiceDocument {
  kind: InvoiceKind;
  /** `Invoice` or `Credit note`. */
  title: string;
  /** INV-… for an invoice, CN-… for a credit note. */
  number: string;
  /** The day it was issued, `YYYY-MM-DD` (UTC): the payment's day, or the refund's. */
  date: string;
  /** `Credit note for invoice INV-…` on a credit note; null on an invoice. */
  credits: string | null;
  orderNumber: string;
  currency: string;
  seller: { name: string; addressLines: string[]; taxId: string };
  buyer: { name: string | null; email: string; addressLines: string[]; country: string | null; taxId: string | null };
  /** How the unit prices read: with tax (inclusive) or without (exclusive). */
  pricesNote: string;
  lines: InvoiceDocumentLine[];
  /** The tax per rate, highest rate first: net and tax of the lines at that rate. */
  taxByRate: Array<{ rate: string; net: string; tax: string }>;
  totals: { net: string; tax: string; gross: string };
  reverseChargeNote: string | null;
  /** The same totals in minor units (signed as printed), for whoever checks the sums. */
  totalsMinor: { net: number; tax: number; gross: number };
}

/**
 * An amount in minor units as exact decimal text with its currency's places and thousands
 * separators: 123456 EUR -> `1,234.56`, 500 JPY -> `500`, -450 EUR -> `-4.50`. The currency is
 * printed once per column head, so the PDF's standard fonts need no currency symbols.
 */
export function invoiceAmount(minor: number, currency: string): string {
  const exponent = currencyExponent(currency);
  const digits = String(Math.abs(minor)).padStart(exponent + 1, '0');
  const whole = exponent === 0 ? digits : digits.slice(0, -exponent);
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const text = exponent === 0 ? grouped : `${grouped}.${digits.slice(-exponent)}`;
  return `${minor < 0 ? '-' : ''}${text}`;
}

/** A rate in parts per million as a percentage, exactly: 190000 -> `19%`, 55000 -> `5.5%`, 0 -> `0%`. */
export function ratePercent(ratePpm: number): string {
  const hundredths = PPM / 100;
  const whole = Math.trunc(ratePpm / hundredths);
  const rest = String(ratePpm % hundredths)
    .padStart(String(hundredths - 1).length, '0')
    .replace(/0+$/, '');
  return `${whole}${rest ? `.${rest}` : ''}%`;
}

const day = (at: Date) => at.toISOString().slice(0, 10);

const linesOf = (text: string | null) =>
  (text ?? '')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);

/** The document for an invoiced order (a credit note needs its number and refund date too). */
export function buildInvoiceDocument(source: InvoiceSource): InvoiceDocument {
  const { kind, order, seller } = source;
  const credit = kind === 'creditNote';
  if (credit && (!order.creditNoteNumber || !order.refundedAt))
    throw new RangeError('A credit note needs the order credited: its number and refund date');
  // A credit note states what is credited: every amount negative (`+ 0`: never -0).
  const sign = credit ? -1 : 1;
  const money = (minor: number) => invoiceAmount(sign * minor + 0, order.currency);
  const lines = source.lines.map((line) => ({
    description: line.productName,
    quantity: line.quantity,
    unitPrice: money(line.unitPriceMinor),
    discount: money(line.discountMinor),
    net: money(line.netMinor),
    rate: ratePercent(line.taxRatePpm),
    tax: money(line.taxMinor),
    total: money(line.netMinor + line.taxMinor),
  }));
  const byRate = new Map<number, { net: number; tax: number }>();
  for (const line of source.lines) {
    const sums = byRate.get(line.taxRatePpm) ?? { net: 0, tax: 0 };
    sums.net += line.netMinor;
    sums.tax += line.taxMinor;
    byRate.set(line.taxRatePpm, sums);
  }
  const net = source.lines.reduce((sum, line) => sum + line.netMinor, 0);
  const tax = source.lines.reduce((sum, line) => sum + line.taxMinor, 0);
  return {
    kind,
    title: credit ? 'Credit note' : 'Invoice',
    number: credit ? order.creditNoteNumber! : order.invoiceNumber,
    date: day(credit ? order.refundedAt! : order.paidAt),
    credits: credit ? `Credit note for invoice ${order.invoiceNumber}` : null,
    orderNumber: `ORD-${order.number}`,
    currency: order.currency,
    seller: { name: seller.name, addressLines: linesOf(seller.address), taxId: seller.taxId },
    buyer: {
      name: order.billingName || null,
      email: order.customerEmail,
      addressLines: linesOf(order.billingAddress),
      country: order.billingCountry,
      taxId: order.buyerTaxId || null,
    },
    pricesNote:
      order.taxBehavior === 'inclusive'
        ? 'Unit prices include tax; the net is what is left once the tax is taken out.'
        : 'Unit prices are before tax; the tax is added to the net.',
    lines,
    taxByRate: [...byRate]
      .sort(([a], [b]) => b - a)
      .map(([ratePpm, sums]) => ({ rate: ratePercent(ratePpm), net: money(sums.net), tax: money(sums.tax) })),
    totals: { net: money(net), tax: money(tax), gross: money(net + tax) },
    reverseChargeNote: order.reverseCharge ? REVERSE_CHARGE_NOTE : null,
    totalsMinor: { net: sign * net + 0, tax: sign * tax + 0, gross: sign * (net + tax) + 0 },
  };
}
