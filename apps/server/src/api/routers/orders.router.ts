/**
 * Orders as sellers read them and what they do to them: merchants under /merchant/v1 (Bearer key
 * with order scopes, capped by viewOrders / editOrders) and the dashboard (session with those
 * permissions). An operation both audiences call is declared once (storeResource): read one
 * order, update it, mark it paid, refund it. The lists stay two, as the dashboard's takes `q`;
 * Home's figures, the timeline, mark delivered and cancel are the dashboard's alone.
 */
import {
  ZDashboardListOrdersQuery,
  ZGetOrderInput,
  ZListOrdersQuery,
  ZMarkDeliveredInput,
  ZOrderActionInput,
  ZOrderList,
  ZOrderTimeline,
  ZSellerOrderDetail,
  ZStoreIdInput,
  ZStoreStats,
  ZUpdateOrderBody,
} from '@svc/schemas';
import { merchantProcedure, router, storeProcedure, storeResource } from '../../trpc/procedures.js';
import { getOrderTimeline, listDashboardOrders, listOrders, storeStats } from '../../modules/orders/orders.service.js';
import {
  cancelStoreOrder,
  getSellerOrder,
  markOrderDelivered,
  markOrderPaid,
  refundStoreOrder,
  updateOrder,
} from '../../flows/seller-order-actions.js';

const MERCHANT = '/merchant/v1/stores/{storeId}/orders';
const DASHBOARD = '/dashboard/stores/{storeId}/orders';
const tags = ['merchant: orders'];
const dashboard = { tags: ['dashboard'] };

const read = storeResource({ scope: 'order:read', permission: 'viewOrders' });
const edit = storeResource({ scope: 'order:update', permission: 'editOrders' });
const dashboardRead = storeProcedure('viewOrders');
const dashboardEdit = storeProcedure('editOrders');

export const ordersRouter = router({
  list: merchantProcedure('order:read')
    .meta({
      openapi: { method: 'GET', path: MERCHANT, tags, summary: 'List orders of the store, newest first' },
      errors: [],
    })
    .input(ZListOrdersQuery)
    .output(ZOrderList)
    .query(({ ctx, input }) => listOrders(ctx, input)),

  /** The dashboard's list also takes `q` (one order or one buyer); the merchant list is as the interface fixes it. */
  dashboardList: dashboardRead
    .meta({
      openapi: {
        method: 'GET',
        path: DASHBOARD,
        tags: dashboard.tags,
        summary:
          "List orders of the store, newest first; `q` finds one order (ORD-<n> or id) or one buyer's orders (e-mail)",
      },
      errors: [],
    })
    .input(ZDashboardListOrdersQuery)
    .output(ZOrderList)
    .query(({ ctx, input }) => listDashboardOrders(ctx, input)),

  /** The dashboard's Home: the store's sales today, over 30 days and day by day (one SQL aggregate). */
  dashboardStats: dashboardRead
    .meta({
      openapi: {
        method: 'GET',
        path: '/dashboard/stores/{storeId}/stats',
        tags: dashboard.tags,
        summary: "Revenue and paid orders today, over the last 30 days and per day (UTC days, the store's currency)",
      },
      errors: ['not_found'],
    })
    .input(ZStoreIdInput)
    .output(ZStoreStats)
    .query(({ ctx, input }) => storeStats(ctx, input)),

  /** The order page's timeline: what happened to the order, oldest first, from its own timestamps. */
  dashboardTimeline: dashboardRead
    .meta({
      openapi: {
        method: 'GET',
        path: `${DASHBOARD}/{orderId}/timeline`,
        tags: dashboard.tags,
        summary: 'What happened to the order, oldest first: placed, paid, delivered, completed, refunded, cancelled',
      },
      errors: ['not_found'],
    })
    .input(ZGetOrderInput)
    .output(ZOrderTimeline)
    .query(({ ctx, input }) => getOrderTimeline(ctx, input)),

  get: read
    .meta({
      openapi: {
        method: 'GET',
        path: `${MERCHANT}/{orderId}`,
        tags,
        summary: 'Order detail by id or ORD-<n>, with its lines',
      },
      dashboard,
      errors: ['not_found'],
    })
    .input(ZGetOrderInput)
    .output(ZSellerOrderDetail)
    .query(({ ctx, input }) => getSellerOrder(ctx, input)),

  update: edit
    .meta({
      openapi: {
        method: 'PATCH',
        path: `${MERCHANT}/{orderId}`,
        tags,
        summary: 'Set the seller note or mark the order delivered',
      },
      dashboard,
      errors: ['not_found', 'order_not_deliverable', 'nothing_to_deliver'],
    })
    .input(ZUpdateOrderBody)
    .output(ZSellerOrderDetail)
    .mutation(({ ctx, input }) => updateOrder(ctx, input)),

  markDelivered: dashboardEdit
    .meta({
      openapi: {
        method: 'POST',
        path: `${DASHBOARD}/{orderId}/mark-delivered`,
        tags: dashboard.tags,
        summary: 'Mark delivered, optionally with the manually delivered content',
      },
      errors: ['not_found', 'order_not_deliverable', 'nothing_to_deliver'],
    })
    .input(ZMarkDeliveredInput)
    .output(ZSellerOrderDetail)
    .mutation(({ ctx, input }) => markOrderDelivered(ctx, input)),

  /** Settling a manual payment. */
  markPaid: edit
    .meta({
      openapi: {
        method: 'POST',
        path: `${MERCHANT}/{orderId}/mark-paid`,
        tags,
        summary: 'Settle a manual payment for the full price',
      },
      dashboard,
      errors: ['not_found', 'order_not_pending'],
    })
    .input(ZOrderActionInput)
    .output(ZSellerOrderDetail)
    .mutation(({ ctx, input }) => markOrderPaid(ctx, input)),

  /** A key needs a scope of its own for a refund (order:refund); a member, editOrders. 502 when the gateway does not refund. */
  refund: storeResource({ scope: 'order:refund', permission: 'editOrders' })
    .meta({
      openapi: {
        method: 'POST',
        path: `${MERCHANT}/{orderId}/refund`,
        tags,
        summary: 'Refund: the payment goes back at its gateway (Stripe), keys are revoked and leave the delivery',
      },
      dashboard,
      // gateway_error: Stripe refused or did not answer; nothing was changed (retry).
      errors: ['not_found', 'order_not_paid', 'gateway_error'],
    })
    .input(ZOrderActionInput)
    .output(ZSellerOrderDetail)
    .mutation(({ ctx, input }) => refundStoreOrder(ctx, input)),

  cancel: dashboardEdit
    .meta({
      openapi: {
        method: 'POST',
        path: `${DASHBOARD}/{orderId}/cancel`,
        tags: dashboard.tags,
        summary: 'Cancel an order that was never paid',
      },
      errors: ['not_found', 'order_not_pending'],
    })
    .input(ZOrderActionInput)
    .output(ZSellerOrderDetail)
    .mutation(({ ctx, input }) => cancelStoreOrder(ctx, input)),
});
