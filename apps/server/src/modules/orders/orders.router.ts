/**
 * Orders for merchants (/merchant/v1, Bearer key with order scopes, capped by viewOrders /
 * editOrders) and for the dashboard (session with those permissions): list, read and update are
 * built once for both surfaces; the seller's other actions are dashboard only.
 */
import { ZGetOrderInput, ZListOrdersQuery, ZMarkDeliveredInput, ZOrderActionInput, ZOrderDetail, ZOrderList, ZUpdateOrderBody } from '@svc/schemas';
import { merchantProcedure, router, storeProcedure, type GuardedBuilder } from '../../trpc/procedures.js';
import {
  cancelStoreOrder,
  markOrderDelivered,
  markOrderPaid,
  refundStoreOrder,
  updateOrder,
} from '../fulfilment/order-actions.service.js';
import { getOrder, listOrders } from './orders.service.js';

/** One surface's builders and where its routes live. */
interface OrderSurface {
  read: GuardedBuilder;
  edit: GuardedBuilder;
  base: `/${string}`;
  tags: string[];
}

/** list, get and update, the same on both surfaces. */
function orderRoutes({ read, edit, base, tags }: OrderSurface) {
  return {
    list: read
      .meta({ openapi: { method: 'GET', path: base, tags, summary: 'List orders of the store, newest first' }, errors: [] })
      .input(ZListOrdersQuery)
      .output(ZOrderList)
      .query(({ ctx, input }) => listOrders(ctx, input)),
    get: read
      .meta({ openapi: { method: 'GET', path: `${base}/{orderId}`, tags, summary: 'Order detail by id or ORD-<n>' }, errors: ['not_found'] })
      .input(ZGetOrderInput)
      .output(ZOrderDetail)
      .query(({ ctx, input }) => getOrder(ctx, input)),
    update: edit
      .meta({
        openapi: { method: 'PATCH', path: `${base}/{orderId}`, tags, summary: 'Set the seller note or mark the order delivered' },
        errors: ['not_found', 'order_not_deliverable', 'nothing_to_deliver'],
      })
      .input(ZUpdateOrderBody)
      .output(ZOrderDetail)
      .mutation(({ ctx, input }) => updateOrder(ctx, input)),
  };
}

const merchant = orderRoutes({ read: merchantProcedure('order:read'), edit: merchantProcedure('order:update'), base: '/merchant/v1/stores/{storeId}/orders', tags: ['merchant: orders'] });
const dashboardBase = '/dashboard/stores/{storeId}/orders';
const dashboardTags = ['dashboard'];
const dashboard = orderRoutes({ read: storeProcedure('viewOrders'), edit: storeProcedure('editOrders'), base: dashboardBase, tags: dashboardTags });
const editOrders = () => storeProcedure('editOrders');

export const ordersRouter = router({
  ...merchant,
  dashboardList: dashboard.list,
  dashboardGet: dashboard.get,
  dashboardUpdate: dashboard.update,

  markDelivered: editOrders()
    .meta({
      openapi: { method: 'POST', path: `${dashboardBase}/{orderId}/mark-delivered`, tags: dashboardTags, summary: 'Mark delivered, optionally with the manually delivered content' },
      errors: ['not_found', 'order_not_deliverable', 'nothing_to_deliver'],
    })
    .input(ZMarkDeliveredInput)
    .output(ZOrderDetail)
    .mutation(({ ctx, input }) => markOrderDelivered(ctx, input)),

  markPaid: editOrders()
    .meta({ openapi: { method: 'POST', path: `${dashboardBase}/{orderId}/mark-paid`, tags: dashboardTags, summary: 'Settle a manual payment for the full price' }, errors: ['not_found', 'order_not_pending'] })
    .input(ZOrderActionInput)
    .output(ZOrderDetail)
    .mutation(({ ctx, input }) => markOrderPaid(ctx, input)),

  refund: editOrders()
    .meta({ openapi: { method: 'POST', path: `${dashboardBase}/{orderId}/refund`, tags: dashboardTags, summary: 'Refund: keys are revoked and leave the delivery' }, errors: ['not_found', 'order_not_paid'] })
    .input(ZOrderActionInput)
    .output(ZOrderDetail)
    .mutation(({ ctx, input }) => refundStoreOrder(ctx, input)),

  cancel: editOrders()
    .meta({ openapi: { method: 'POST', path: `${dashboardBase}/{orderId}/cancel`, tags: dashboardTags, summary: 'Cancel an order that was never paid' }, errors: ['not_found', 'order_not_pending'] })
    .input(ZOrderActionInput)
    .output(ZOrderDetail)
    .mutation(({ ctx, input }) => cancelStoreOrder(ctx, input)),
});
