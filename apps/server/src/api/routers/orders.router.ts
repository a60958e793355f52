/**
 * Orders for merchants (/merchant/v1, Bearer key with order scopes, capped by viewOrders /
 * editOrders) and for the dashboard (session with those permissions): list and read, built once
 * for both surfaces. What sellers do to an order is in order-actions/, merged into this namespace
 * by the app router (those actions sit above fulfilment and payments, which this module is below).
 */
import {
  ZDashboardListOrdersQuery,
  ZGetOrderInput,
  ZListOrdersQuery,
  ZOrderList,
  ZOrderTimeline,
  ZStoreIdInput,
  ZStoreStats,
} from '@svc/schemas';
import {
  merchantProcedure,
  router,
  storeProcedure,
  type GuardedBuilder,
  type ResourceSurface,
} from '../../trpc/procedures.js';
import { getOrderTimeline, listDashboardOrders, listOrders, storeStats } from '../../modules/orders/orders.service.js';

/** One surface's builders and where its routes live; its writes are edits (order:update, editOrders). */
export interface OrderSurface extends Pick<ResourceSurface, 'read' | 'base' | 'tags'> {
  edit: GuardedBuilder;
}

export const ORDER_SURFACES = {
  merchant: {
    read: merchantProcedure('order:read'),
    edit: merchantProcedure('order:update'),
    base: '/merchant/v1/stores/{storeId}/orders',
    tags: ['merchant: orders'],
  },
  dashboard: {
    read: storeProcedure('viewOrders'),
    edit: storeProcedure('editOrders'),
    base: '/dashboard/stores/{storeId}/orders',
    tags: ['dashboard'],
  },
} satisfies Record<string, OrderSurface>;

/** The merchant list (one order, with its lines, is order-actions' `get`). */
function orderReads({ read, base, tags }: OrderSurface) {
  return {
    list: read
      .meta({
        openapi: { method: 'GET', path: base, tags, summary: 'List orders of the store, newest first' },
        errors: [],
      })
      .input(ZListOrdersQuery)
      .output(ZOrderList)
      .query(({ ctx, input }) => listOrders(ctx, input)),
  };
}

const merchant = orderReads(ORDER_SURFACES.merchant);

/** The dashboard's list also takes `q` (one order or one buyer); the merchant list is as the interface fixes it. */
const { read, base, tags } = ORDER_SURFACES.dashboard;
const dashboardList = read
  .meta({
    openapi: {
      method: 'GET',
      path: base,
      tags,
      summary:
        "List orders of the store, newest first; `q` finds one order (ORD-<n> or id) or one buyer's orders (e-mail)",
    },
    errors: [],
  })
  .input(ZDashboardListOrdersQuery)
  .output(ZOrderList)
  .query(({ ctx, input }) => listDashboardOrders(ctx, input));

export const ordersRouter = router({
  ...merchant,
  dashboardList,

  /** The dashboard's Home: the store's sales today, over 30 days and day by day (one SQL aggregate). */
  dashboardStats: ORDER_SURFACES.dashboard.read
    .meta({
      openapi: {
        method: 'GET',
        path: '/dashboard/stores/{storeId}/stats',
        tags: ORDER_SURFACES.dashboard.tags,
        summary: "Revenue and paid orders today, over the last 30 days and per day (UTC days, the store's currency)",
      },
      errors: ['not_found'],
    })
    .input(ZStoreIdInput)
    .output(ZStoreStats)
    .query(({ ctx, input }) => storeStats(ctx, input)),

  /** The order page's timeline: what happened to the order, oldest first, from its own timestamps. */
  dashboardTimeline: ORDER_SURFACES.dashboard.read
    .meta({
      openapi: {
        method: 'GET',
        path: `${ORDER_SURFACES.dashboard.base}/{orderId}/timeline`,
        tags: ORDER_SURFACES.dashboard.tags,
        summary: 'What happened to the order, oldest first: placed, paid, delivered, completed, refunded, cancelled',
      },
      errors: ['not_found'],
    })
    .input(ZGetOrderInput)
    .output(ZOrderTimeline)
    .query(({ ctx, input }) => getOrderTimeline(ctx, input)),
});
