/**
 * Refunding an order (a seller's refund, or a gateway's own): the lifecycle's `refund` moves the
 * order (orders), its keys are revoked (catalog's key store) and its settled payments are marked
 * refunded with the gateway's refund ids (payments). A seller's refund first gives the money back
 * at the gateway (payments/gateways.ts refundAtGateways, no lock held; flows/seller-order-actions.ts).
 */
import { revokeOrderKeys } from '../modules/catalog/key-store.js';
import { transition } from '../modules/orders/order-lifecycle.js';
import { giveCreditNoteNumber } from '../modules/orders/invoice-numbers.js';
import { lockOrder } from '../modules/orders/order-lookup.js';
import type { Order } from '../modules/orders/orders.entities.js';
import type { GatewayRefunds } from '../modules/payments/gateways.js';
import { refundPayments } from '../modules/payments/payments.service.js';
import type { ServiceContext } from '../modules/request/context.js';
import { inTransaction } from '../modules/request/transaction.js';

/**
 * Refund: keys are revoked and leave the delivery; refunding twice is a no-op. `refunds` are the
 * gateway's refund ids for the payments refundAtGateways gave back. Transaction: one, holding the
 * order's row lock; joined when the context holds one (a gateway's notification, settle-payment.ts).
 */
export async function refundOrder(
  ctx: ServiceContext,
  input: { orderId: string; now: Date; refunds?: GatewayRefunds },
): Promise<Order> {
  const { orderId, now } = input;
  const refunds = input.refunds ?? new Map<string, string>();
  return inTransaction(ctx, async (tx) => {
    const order = await lockOrder(tx, orderId);
    if (order.status === 'refunded') {
      // Refunded meanwhile (a concurrent refund, Stripe's own charge.refunded): the gateway's
      // refund id of this call is the same refund, still worth keeping where none is recorded.
      await refundPayments(tx, { orderId, now, refunds, onlyUnrecorded: true });
      return order;
    }
    // Before the transition, so that order.refunded carries the number (a refusal rolls it back).
    await giveCreditNoteNumber(tx, order, now);
    await transition(tx, order, 'refund', now, {
      revokeKeys: revokeOrderKeys,
      refundPayments: (effectCtx, id, at) => refundPayments(effectCtx, { orderId: id, now: at, refunds }),
    });
    return order;
  });
}
