/**
 * The buyer's receipt (issue 27): when an order is paid, the buyer is e-mailed what they bought,
 * what it cost and the order's own link. It is recorded in the mail outbox inside the settling
 * transaction (flows/settle-payment.ts), so it commits with the payment and a rollback takes it
 * away, and it is named `receipt:<orderId>`, so no retry, duplicate notification or crash and
 * retry records a second one. What it says is receipt-mail.ts's.
 */
import type { ServiceContext } from '../request/context.js';
import { recordMail } from '../mail/outbox.js';
import { invoiceUrl, orderUrl } from '../orders/order-link.js';
import type { Order } from '../orders/orders.entities.js';
import { linesOf } from '../orders/orders.repo.js';
import { publicOrderNumber } from '../orders/order-views.js';
import { selectStoreMailing } from '../stores/stores.repo.js';
import { storeSettings } from '../stores/store-views.js';
import { receiptMail } from './receipt-mail.js';

/** The outbox's name for an order's receipt: recorded once, whatever calls it again. */
export const receiptDedupeKey = (orderId: string) => `receipt:${orderId}`;

/** The payment a receipt is for: when, and the gateway that settled it (a seller's mark-paid is `manual`). */
export interface ReceiptPayment {
  paidAt: Date;
  gateway: string;
}

/**
 * Records the receipt of `order`, just paid, in the context's transaction (the settling one, with
 * the order's row locked). Nothing when the store turned receipts off or the order has no buyer
 * e-mail. Returns whether a receipt was recorded now.
 */
export async function recordReceipt(
  ctx: ServiceContext,
  input: { order: Order; payment: ReceiptPayment },
): Promise<boolean> {
  const { order, payment } = input;
  const { em, deps } = ctx;
  if (!order.customerEmail) return false;
  // The store's name and settings and the order's lines as rows: no entity to hydrate and then
  // compare at the settlement's flush.
  const store = await selectStoreMailing(em, order.store.id);
  if (!store) throw new Error(`store ${order.store.id} of order ${order.id} not found`);
  const settings = storeSettings(store);
  if (!settings.receiptsEnabled) return false;
  const lines = (await linesOf(em, [order.id])).get(order.id) ?? [];
  const mail = receiptMail({
    storeName: store.name,
    orderNumber: publicOrderNumber(order.number),
    paidAt: payment.paidAt,
    currency: order.currency,
    lines: lines.map((line) => ({
      productName: line.product_name,
      quantity: line.quantity,
      unitPriceMinor: Number(line.unit_price_minor),
    })),
    subtotalMinor: order.subtotalMinor,
    discountMinor: order.discountMinor,
    totalMinor: order.priceMinor,
    paymentMethod: payment.gateway,
    orderUrl: orderUrl(deps.config, order.id),
    // Given in this same transaction, before the receipt (flows/settle-payment.ts).
    invoice: order.invoiceNumber ? { number: order.invoiceNumber, url: invoiceUrl(deps.config, order.id) } : undefined,
    note: settings.receiptNote,
    // A renewal's receipt says the subscription renewed (its first order reads as a purchase).
    renewal: order.billingReason === 'subscription_cycle' && !!order.subscriptionId,
  });
  return recordMail(
    { em, deps },
    {
      to: order.customerEmail,
      ...mail,
      dedupeKey: receiptDedupeKey(order.id),
      // A test order's receipt stays in the development mailbox (test mode: docs/architecture.md).
      livemode: order.livemode,
    },
  );
}
