/**
 * An order's invoice and credit note as PDFs (docs/decisions.md, "#42 Invoices"). The numbers are
 * given when the order is paid and refunded (orders/invoice-numbers.ts), the seller's details kept
 * with the invoice number; this module only reads the order and its lines, and renders them.
 * Nothing is stored: the same order renders the same document, whatever the store edits later.
 * Who may ask is the caller's to decide (the store's routes find the order in the store and mode;
 * the buyer's route through the buyer's access to the order).
 */
import { AppError } from '../../lib/errors.js';
import { OrderLineSchema, type Order } from '../orders/orders.entities.js';
import { findStoreOrder } from '../orders/order-lookup.js';
import type { ServiceContext } from '../request/context.js';
import { buildInvoiceDocument, type InvoiceDocument, type InvoiceKind } from './invoice-document.js';

export interface InvoicePdf {
  /** `INV-2026-7.pdf`, `CN-2026-2.pdf`. */
  fileName: string;
  pdf: Buffer;
}

const MISSING: Record<InvoiceKind, string> = {
  invoice: 'This order has no invoice: only an order paid while the store charged tax has one.',
  creditNote: 'This order has no credit note: only an invoiced order that was refunded has one.',
};

/** The document of an order already found (and its access decided); 404 `not_found` when it has none. */
export async function orderDocument(
  ctx: ServiceContext,
  input: { order: Order; kind: InvoiceKind },
): Promise<InvoiceDocument> {
  const { order, kind } = input;
  const number = kind === 'invoice' ? order.invoiceNumber : order.creditNoteNumber;
  const seller = order.invoiceSeller;
  if (!number || !order.invoiceNumber || !seller || !order.taxBehavior || !order.paidAt)
    throw new AppError('not_found', MISSING[kind]);
  if (kind === 'creditNote' && !order.refundedAt) throw new AppError('not_found', MISSING[kind]);
  const lines = await ctx.em.find(OrderLineSchema, { order: order.id }, { orderBy: { position: 'asc', id: 'asc' } });
  return buildInvoiceDocument({
    kind,
    // The seller as the store named itself when the invoice was issued (a credit note names its invoice's).
    seller,
    order: {
      number: order.number,
      currency: order.currency,
      customerEmail: order.customerEmail,
      taxBehavior: order.taxBehavior,
      reverseCharge: order.reverseCharge,
      billingName: order.billingName ?? null,
      billingAddress: order.billingAddress ?? null,
      billingCountry: order.billingCountry ?? order.taxCountry ?? null,
      buyerTaxId: order.buyerTaxId ?? null,
      invoiceNumber: order.invoiceNumber,
      creditNoteNumber: order.creditNoteNumber ?? null,
      paidAt: order.paidAt,
      refundedAt: order.refundedAt ?? null,
    },
    lines: lines.map((line) => ({
      productName: line.productName,
      quantity: line.quantity,
      unitPriceMinor: line.unitPriceMinor,
      discountMinor: line.discountMinor,
      netMinor: line.netMinor,
      taxMinor: line.taxMinor,
      taxRatePpm: line.taxRatePpm,
    })),
  });
}

/** The PDF of an order already found (and its access decided); 404 `not_found` when it has none. */
export async function orderDocumentPdf(
  ctx: ServiceContext,
  input: { order: Order; kind: InvoiceKind },
): Promise<InvoicePdf> {
  const document = await orderDocument(ctx, input);
  const issuedAt = input.kind === 'invoice' ? input.order.paidAt! : input.order.refundedAt!;
  // pdfkit and fontkit load with the first PDF asked for, not on every start of every process.
  const { renderInvoicePdf } = await import('./invoice-pdf.js');
  return { fileName: `${document.number}.pdf`, pdf: await renderInvoicePdf(document, issuedAt) };
}

/** The PDF of an order of the store in the context's mode, by id or `ORD-<n>`; 404 for another store's or mode's. */
export async function storeOrderDocumentPdf(
  ctx: ServiceContext,
  input: { storeId: string; orderId: string; kind: InvoiceKind },
): Promise<InvoicePdf> {
  const order = await findStoreOrder(ctx, { storeId: input.storeId, orderId: input.orderId });
  return orderDocumentPdf(ctx, { order, kind: input.kind });
}
