import { ZGetOrderInput, ZListOrdersQuery, ZOrderDetail, ZOrderList } from '@svc/schemas';
import { merchantProcedure, storeProcedure } from '../../trpc/guards.js';
import { router } from '../../trpc/procedures.js';
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
});
