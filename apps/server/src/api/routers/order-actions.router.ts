/**
 * The order as sellers read it (get, with its lines) and what they do to it: update (note, mark delivered), mark paid and refund on both surfaces, and the
 * dashboard's other actions. The app router merges these into the `orders` namespace.
 */
import {
  ZGetOrderInput,
  ZMarkDeliveredInput,
  ZOrderActionInput,
  ZSellerOrderDetail,
  ZUpdateOrderBody,
} from '@svc/schemas';
import { merchantProcedure, router, type GuardedBuilder } from '../../trpc/procedures.js';
import { ORDER_SURFACES, type OrderSurface } from './orders.router.js';
import {
  cancelStoreOrder,
  markOrderDelivered,
  markOrderPaid,
  refundStoreOrder,
  updateOrder,
} from '../../modules/order-actions/order-actions.service.js';
import { getSellerOrder } from '../../modules/order-actions/seller-order.js';

/** GET one order by cuid or `ORD-<n>`, the same on both surfaces (it reads lines and keys, so it sits here, above the catalog). */
function orderGet({ read, base, tags }: OrderSurface) {
  return read
    .meta({
      openapi: {
        method: 'GET',
        path: `${base}/{orderId}`,
        tags,
        summary: 'Order detail by id or ORD-<n>, with its lines',
      },
      errors: ['not_found'],
    })
    .input(ZGetOrderInput)
    .output(ZSellerOrderDetail)
    .query(({ ctx, input }) => getSellerOrder(ctx, input));
}

function orderUpdate({ edit, base, tags }: OrderSurface) {
  return edit
    .meta({
      openapi: {
        method: 'PATCH',
        path: `${base}/{orderId}`,
        tags,
        summary: 'Set the seller note or mark the order delivered',
      },
      errors: ['not_found', 'order_not_deliverable', 'nothing_to_deliver'],
    })
    .input(ZUpdateOrderBody)
    .output(ZSellerOrderDetail)
    .mutation(({ ctx, input }) => updateOrder(ctx, input));
}

/** A refund, the same on both surfaces; a merchant key needs its own scope (order:refund) for it. 502 when the gateway does not refund. */
function orderRefund(builder: GuardedBuilder, { base, tags }: OrderSurface) {
  return builder
    .meta({
      openapi: {
        method: 'POST',
        path: `${base}/{orderId}/refund`,
        tags,
        summary: 'Refund: the payment goes back at its gateway (Stripe), keys are revoked and leave the delivery',
      },
      // gateway_error: Stripe refused or did not answer; nothing was changed (retry).
      errors: ['not_found', 'order_not_paid', 'gateway_error'],
    })
    .input(ZOrderActionInput)
    .output(ZSellerOrderDetail)
    .mutation(({ ctx, input }) => refundStoreOrder(ctx, input));
}

/** Settling a manual payment, the same on both surfaces (order:update / editOrders). */
function orderMarkPaid({ edit, base, tags }: OrderSurface) {
  return edit
    .meta({
      openapi: {
        method: 'POST',
        path: `${base}/{orderId}/mark-paid`,
        tags,
        summary: 'Settle a manual payment for the full price',
      },
      errors: ['not_found', 'order_not_pending'],
    })
    .input(ZOrderActionInput)
    .output(ZSellerOrderDetail)
    .mutation(({ ctx, input }) => markOrderPaid(ctx, input));
}

const { edit, base, tags } = ORDER_SURFACES.dashboard;

export const orderActionsRouter = router({
  get: orderGet(ORDER_SURFACES.merchant),
  dashboardGet: orderGet(ORDER_SURFACES.dashboard),

  update: orderUpdate(ORDER_SURFACES.merchant),
  dashboardUpdate: orderUpdate(ORDER_SURFACES.dashboard),

  markDelivered: edit
    .meta({
      openapi: {
        method: 'POST',
        path: `${base}/{orderId}/mark-delivered`,
        tags,
        summary: 'Mark delivered, optionally with the manually delivered content',
      },
      errors: ['not_found', 'order_not_deliverable', 'nothing_to_deliver'],
    })
    .input(ZMarkDeliveredInput)
    .output(ZSellerOrderDetail)
    .mutation(({ ctx, input }) => markOrderDelivered(ctx, input)),

  markPaid: orderMarkPaid(ORDER_SURFACES.merchant),
  dashboardMarkPaid: orderMarkPaid(ORDER_SURFACES.dashboard),

  refund: orderRefund(merchantProcedure('order:refund'), ORDER_SURFACES.merchant),
  dashboardRefund: orderRefund(edit, ORDER_SURFACES.dashboard),

  cancel: edit
    .meta({
      openapi: {
        method: 'POST',
        path: `${base}/{orderId}/cancel`,
        tags,
        summary: 'Cancel an order that was never paid',
      },
      errors: ['not_found', 'order_not_pending'],
    })
    .input(ZOrderActionInput)
    .output(ZSellerOrderDetail)
    .mutation(({ ctx, input }) => cancelStoreOrder(ctx, input)),
});
