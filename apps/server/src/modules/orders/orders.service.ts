/**
 * Order reads for the seller: the merchant and dashboard lists (newest first, keyset-paged,
 * filtered), the Home figures and an order's timeline. Finding one order is order-lookup.ts's, how
 * it reads order-views.ts's, the buyer's reads order-reads.ts's; an order is written by the flows
 * that place, settle and act on it, its status only by order-lifecycle.ts.
 */
import type {
  TDashboardListOrdersQuery,
  TListOrdersQuery,
  TOrder,
  TOrderList,
  TOrderTimeline,
  TStoreStats,
} from '@svc/schemas';
import { minorToAmount } from '../../lib/money.js';
import { iso } from '../../lib/timestamps.js';
import type { ServiceContext } from '../request/context.js';
import type { Order } from './orders.entities.js';
import { findStoreOrder, ORDER_NUMBER } from './order-lookup.js';
import { DEFAULT_PAGE_SIZE, pageOrders, storeCurrency } from './order-reads.js';
import { orderRowTax, publicOrderNumber } from './order-views.js';
import { selectSalesByDay, type OrderPageFilter, type OrderRow } from './orders.repo.js';

function rowToOrder(row: OrderRow): TOrder {
  return {
    id: row.id,
    orderId: publicOrderNumber(row.number),
    storeId: row.store_id,
    livemode: row.livemode,
    status: row.status,
    productName: row.product_name,
    price: minorToAmount(Number(row.price_minor), row.currency),
    paid: minorToAmount(Number(row.paid_minor), row.currency),
    paymentMethod: row.payment_method,
    customerEmail: row.customer_email,
    country: row.country,
    keyCount: row.key_count,
    subscriptionId: row.subscription_id,
    billingReason: row.billing_reason,
    ...orderRowTax(row),
    createdAt: iso(row.created_at),
    completedAt: row.completed_at === null ? null : iso(row.completed_at),
    updatedAt: iso(row.updated_at),
  };
}

export async function listOrders(ctx: ServiceContext, input: TListOrdersQuery): Promise<TOrderList> {
  const limit = input.limit ?? DEFAULT_PAGE_SIZE;
  const page = await pageOrders(ctx, 'orders', input, limit, input.cursor);
  return { orders: page.rows.map(rowToOrder), limit, hasMore: page.hasMore, nextCursor: page.nextCursor };
}

/**
 * The dashboard's list: the merchant list's filters, and `q`, one order or one buyer matched
 * exactly (each served by an index on a store of any size): `ORD-<n>` is the order's number, text
 * with an `@` the buyer's e-mail (stored lower-cased), anything else an order id. Text that can be
 * none of these matches nothing.
 */
export async function listDashboardOrders(ctx: ServiceContext, input: TDashboardListOrdersQuery): Promise<TOrderList> {
  const { q, ...query } = input;
  if (q === undefined) return listOrders(ctx, query);
  const limit = query.limit ?? DEFAULT_PAGE_SIZE;
  const match = ordersMatching(q.trim());
  if (!match) return { orders: [], limit, hasMore: false, nextCursor: null };
  const page = await pageOrders(ctx, 'orders', { ...query, ...match }, limit, query.cursor);
  return { orders: page.rows.map(rowToOrder), limit, hasMore: page.hasMore, nextCursor: page.nextCursor };
}

function ordersMatching(q: string): Pick<OrderPageFilter, 'number' | 'id' | 'customerEmail'> | undefined {
  const number = ORDER_NUMBER.exec(q.toUpperCase())?.[1];
  if (number) return { number };
  if (q.includes('@')) return { customerEmail: q.toLowerCase() };
  return ORDER_ID.test(q) ? { id: q } : undefined;
}
const ORDER_ID = /^[a-z0-9]{1,32}$/;

/** The days of the Home chart: today and the 29 before it (UTC). */
export const STATS_DAYS = 30;
const DAY_MS = 86_400_000;

/** `YYYY-MM-DD` of the UTC day `at` falls in. */
function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/**
 * The Home figures: revenue and paid orders today, over the last 30 days, and day by day, in UTC
 * days by when each order was placed. Revenue is the price of the orders that are paid and not
 * refunded (paid, processing, completed) in the store currency; one SQL aggregate computes the days.
 */
export async function storeStats(ctx: ServiceContext, input: { storeId: string }): Promise<TStoreStats> {
  const currency = await storeCurrency(ctx, input.storeId);
  const now = ctx.clock.now();
  const rows = await selectSalesByDay(ctx.em, {
    storeId: input.storeId,
    livemode: ctx.livemode,
    currency,
    firstDay: utcDay(new Date(now.getTime() - (STATS_DAYS - 1) * DAY_MS)),
    lastDay: utcDay(now),
  });
  let revenueMinor = 0;
  let orders = 0;
  const daily = rows.map((row) => {
    revenueMinor += Number(row.revenue_minor);
    orders += Number(row.orders);
    return {
      date: row.date,
      revenue: minorToAmount(Number(row.revenue_minor), currency),
      orders: Number(row.orders),
    };
  });
  const today = daily.at(-1) ?? { revenue: 0, orders: 0 };
  return {
    currency,
    today: { revenue: today.revenue, orders: today.orders },
    last30Days: { revenue: minorToAmount(revenueMinor, currency), orders },
    daily,
  };
}

type TimelineEntry = TOrderTimeline['events'][number];

/** The order in which entries of one instant are listed (a settlement pays and completes at once). */
const TIMELINE_ORDER: readonly TimelineEntry['type'][] = [
  'created',
  'paid',
  'delivered',
  'completed',
  'refunded',
  'cancelled',
  'expired',
];

/**
 * What happened to an order, oldest first, from its own timestamps: each transition of the
 * lifecycle stamps the order in the transaction that makes it, so these are exact and never pruned
 * (unlike the outbox's events). The seller's note is one text without a history: it is on the detail.
 */
export function orderTimeline(order: Order): TOrderTimeline {
  const facts: Array<[TimelineEntry['type'], Date | null | undefined, string | undefined]> = [
    ['created', order.createdAt, 'Order placed'],
    ['paid', order.paidAt, order.paymentMethod ? `Paid with ${order.paymentMethod}` : 'Paid'],
    ['delivered', order.deliveredAt, 'Marked delivered'],
    ['completed', order.completedAt, 'Completed'],
    ['refunded', order.refundedAt, 'Refunded'],
    ['cancelled', order.cancelledAt, 'Cancelled by the seller'],
    ['expired', order.expiredAt, 'Not paid in time'],
  ];
  const events = facts
    .filter((fact): fact is [TimelineEntry['type'], Date, string | undefined] => fact[1] instanceof Date)
    .map(([type, at, text]) => ({ type, at, text }))
    .sort((a, b) => a.at.getTime() - b.at.getTime() || TIMELINE_ORDER.indexOf(a.type) - TIMELINE_ORDER.indexOf(b.type))
    .map(({ type, at, text }): TimelineEntry =>
      text === undefined ? { at: at.toISOString(), type } : { at: at.toISOString(), type, text },
    );
  return { orderId: publicOrderNumber(order.number), events };
}

/** GET the timeline of an order of the store, by cuid or `ORD-<n>`. */
export async function getOrderTimeline(
  ctx: ServiceContext,
  input: { storeId: string; orderId: string },
): Promise<TOrderTimeline> {
  return orderTimeline(await findStoreOrder(ctx, input));
}
