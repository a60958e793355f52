/**
 * Invoice and credit note numbers (docs/decisions.md, "#42 Invoices"): `INV-<year>-<n>` for a paid
 * order the store taxed, `CN-<year>-<n>` when such an order is refunded; gapless and unique per
 * store, mode and year. Taken in the transaction that pays (or refunds) the order, under the
 * counter row's lock (orders.repo.ts takeDocumentNumber): a checkout that fails before it commits
 * takes no number, and the unique indexes on the order make a repeat impossible.
 */
import type { ServiceContext } from '../request/context.js';
import type { Order } from './orders.entities.js';
import { takeDocumentNumber } from './orders.repo.js';

/**
 * The paid order's invoice number, once: only an order placed while the store charged tax gets
 * one. The seller's name, address and tax id are kept with it, so the invoice reads the same
 * after the store edits them.
 */
export async function giveInvoiceNumber(ctx: ServiceContext, order: Order, paidAt: Date): Promise<void> {
  if (!order.taxBehavior || order.invoiceNumber) return;
  const year = paidAt.getUTCFullYear();
  const { number, seller } = await takeDocumentNumber(ctx.em, {
    storeId: order.store.id,
    livemode: order.livemode,
    kind: 'INV',
    year,
  });
  order.invoiceNumber = `INV-${year}-${number}`;
  order.invoiceSeller = seller;
}

/**
 * The refunded order's credit note number, once: only an invoiced order gets one. The credit note
 * names the seller its invoice named.
 */
export async function giveCreditNoteNumber(ctx: ServiceContext, order: Order, refundedAt: Date): Promise<void> {
  if (!order.invoiceNumber || order.creditNoteNumber) return;
  const year = refundedAt.getUTCFullYear();
  const { number } = await takeDocumentNumber(ctx.em, {
    storeId: order.store.id,
    livemode: order.livemode,
    kind: 'CN',
    year,
  });
  order.creditNoteNumber = `CN-${year}-${number}`;
}
