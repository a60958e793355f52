import { ZGetOrderInput, ZListOrdersQuery, ZMarkDeliveredInput, ZOrderActionInput, ZOrderDetail, ZOrderList, ZUpdateOrderBody } from '@svc/schemas';
import { merchantProcedure, storeProcedure } from '../../trpc/guards.js';
import { router } from '../../trpc/procedures.js';
import {
  cancelStoreOrder,
  markOrderDelivered,
  markOrderPaid,
  refundStoreOrder,
  updateOrder,
} from '../fulfilment/order-actions.service.js';
import { getOrder, listOrders } from './orders.service.js';

const merchant = ['merchant: orders'];
const dashboard = ['dashboard'];

export const ordersRouter = router({
  list: merchantProcedure('order:read')
    .meta({ openapi: { method: 'GET', path: '/merchant/v1/stores/{storeId}/orders', tags: merchant, summary: 'List orders of the store, newest first' }, auth: 'apiKey' })
    .input(ZListOrdersQuery)
    .output(ZOrderList)
    .query(({ ctx, input }) => listOrders(ctx, input)),

  get: merchantProcedure('order:read')
    .meta({ openapi: { method: 'GET', path: '/merchant/v1/stores/{storeId}/orders/{orderId}', tags: merchant, summary: 'Order detail by id or ORD-<n>' }, auth: 'apiKey' })
    .input(ZGetOrderInput)
    .output(ZOrderDetail)
    .query(({ ctx, input }) => getOrder(ctx, input)),

  update: merchantProcedure('order:update')
    .meta({ openapi: { method: 'PATCH', path: '/merchant/v1/stores/{storeId}/orders/{orderId}', tags: merchant, summary: 'Set the seller note or mark the order delivered' }, auth: 'apiKey' })
    .input(ZUpdateOrderBody)
    .output(ZOrderDetail)
    .mutation(({ ctx, input }) => updateOrder(ctx, input)),

  dashboardList: storeProcedure('viewOrders')
    .meta({ openapi: { method: 'GET', path: '/dashboard/stores/{storeId}/orders', tags: dashboard, summary: 'List orders of the store, newest first', protect: false }, auth: 'session' })
    .input(ZListOrdersQuery)
    .output(ZOrderList)
    .query(({ ctx, input }) => listOrders(ctx, input)),

  dashboardGet: storeProcedure('viewOrders')
    .meta({ openapi: { method: 'GET', path: '/dashboard/stores/{storeId}/orders/{orderId}', tags: dashboard, summary: 'Order detail by id or ORD-<n>', protect: false }, auth: 'session' })
    .input(ZGetOrderInput)
    .output(ZOrderDetail)
    .query(({ ctx, input }) => getOrder(ctx, input)),

  dashboardUpdate: storeProcedure('editOrders')
    .meta({ openapi: { method: 'PATCH', path: '/dashboard/stores/{storeId}/orders/{orderId}', tags: dashboard, summary: 'Set the seller note or mark the order delivered', protect: false }, auth: 'session' })
    .input(ZUpdateOrderBody)
    .output(ZOrderDetail)
    .mutation(({ ctx, input }) => updateOrder(ctx, input)),

  markDelivered: storeProcedure('editOrders')
    .meta({ openapi: { method: 'POST', path: '/dashboard/stores/{storeId}/orders/{orderId}/mark-delivered', tags: dashboard, summary: 'Mark delivered, optionally with the manually delivered content', protect: false }, auth: 'session' })
    .input(ZMarkDeliveredInput)
    .output(ZOrderDetail)
    .mutation(({ ctx, input }) => markOrderDelivered(ctx, input)),

  markPaid: storeProcedure('editOrders')
    .meta({ openapi: { method: 'POST', path: '/dashboard/stores/{storeId}/orders/{orderId}/mark-paid', tags: dashboard, summary: 'Settle a manual payment for the full price', protect: false }, auth: 'session' })
    .input(ZOrderActionInput)
    .output(ZOrderDetail)
    .mutation(({ ctx, input }) => markOrderPaid(ctx, input)),

  refund: storeProcedure('editOrders')
    .meta({ openapi: { method: 'POST', path: '/dashboard/stores/{storeId}/orders/{orderId}/refund', tags: dashboard, summary: 'Refund: keys are revoked and leave the delivery', protect: false }, auth: 'session' })
    .input(ZOrderActionInput)
    .output(ZOrderDetail)
    .mutation(({ ctx, input }) => refundStoreOrder(ctx, input)),

  cancel: storeProcedure('editOrders')
    .meta({ openapi: { method: 'POST', path: '/dashboard/stores/{storeId}/orders/{orderId}/cancel', tags: dashboard, summary: 'Cancel an order that was never paid', protect: false }, auth: 'session' })
    .input(ZOrderActionInput)
    .output(ZOrderDetail)
    .mutation(({ ctx, input }) => cancelStoreOrder(ctx, input)),
});
