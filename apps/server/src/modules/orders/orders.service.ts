/**
 * Order reads: the merchant list (newest first, keyset-paged, filtered) and detail, and
 * the buyer's view. Writes arrive with checkout and fulfilment.
 */
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type {
  TBuyerOrder,
  TDashboardListOrdersQuery,
  TListOrdersQuery,
  TOrder,
  TOrderDetail,
  TOrderList,
  TOrderStatus,
  TOrderTimeline,
  TStoreStats,
} from '@svc/schemas';
import { cursorScope, decodeCursor, keysetPage } from '../../lib/cursor.js';
import { safeEqual, sha256Hex } from '../../lib/crypto.js';
import { AppError } from '../../lib/errors.js';
import { minorToAmount } from '../../lib/money.js';
import type { ServiceContext } from '../request/context.js';
import { StoreSchema } from '../stores/stores.entities.js';
import { OrderSchema, type Order } from './orders.entities.js';
import {
  linesOf,
  selectOrderPage,
  selectSalesByDay,
  selectSpendByEmail,
  type LineRow,
  type OrderPageFilter,
  type OrderRow,
} from './orders.repo.js';
import { iso } from '../../lib/timestamps.js';

export const DEFAULT_PAGE_SIZE = 50;
const ORDER_NUMBER = /^ORD-(\d{1,18})$/;

export function publicOrderNumber(number: number | string): string {
  return `ORD-${number}`;
}

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
    createdAt: iso(row.created_at),
    completedAt: row.completed_at === null ? null : iso(row.completed_at),
    updatedAt: iso(row.updated_at),
  };
}

/** What toOrderDetail reads: an Order entity, or the same fields of an order just inserted with SQL. */
export type OrderDetailFields = Pick<
  Order,
  | 'id'
  | 'number'
  | 'livemode'
  | 'status'
  | 'productName'
  | 'priceMinor'
  | 'paidMinor'
  | 'currency'
  | 'paymentMethod'
  | 'customerEmail'
  | 'country'
  | 'keyCount'
  | 'createdAt'
  | 'completedAt'
  | 'updatedAt'
  | 'note'
  | 'customFieldResponses'
> & { store: { id: string } };

export function toOrderDetail(order: OrderDetailFields): TOrderDetail {
  return {
    id: order.id,
    orderId: publicOrderNumber(order.number),
    storeId: order.store.id,
    livemode: order.livemode,
    status: order.status,
    productName: order.productName,
    price: minorToAmount(order.priceMinor, order.currency),
    paid: minorToAmount(order.paidMinor, order.currency),
    paymentMethod: order.paymentMethod,
    customerEmail: order.customerEmail,
    country: order.country,
    keyCount: order.keyCount,
    createdAt: order.createdAt.toISOString(),
    completedAt: order.completedAt?.toISOString() ?? null,
    updatedAt: order.updatedAt.toISOString(),
    note: order.note,
    customFieldResponses: order.customFieldResponses.map(({ name, value }) => ({ name, value })),
  };
}

interface OrderPage {
  rows: OrderRow[];
  hasMore: boolean;
  nextCursor: string | null;
}

/**
 * One keyset page, newest first: `(created_at, id) < cursor`, served by the (store, [status,]
 * created_at, id) indexes. The cursor is sealed with the list and the whole filter (`from`/`to` as
 * the instants the query reads), so it pages only the list it came from.
 */
async function pageOrders(
  ctx: ServiceContext,
  list: 'orders' | 'customer.orders',
  filter: Omit<OrderPageFilter, 'livemode'>,
  limit: number,
  cursor: string | undefined,
): Promise<OrderPage> {
  const key = ctx.deps.config.encryptionKey;
  const scope = cursorScope(list, {
    storeId: filter.storeId,
    livemode: ctx.livemode,
    customerEmail: filter.customerEmail,
    number: filter.number,
    id: filter.id,
    status: filter.status,
    from: filter.from ? new Date(filter.from) : undefined,
    to: filter.to ? new Date(filter.to) : undefined,
  });
  const rows = await selectOrderPage(
    ctx.em,
    { ...filter, livemode: ctx.livemode },
    cursor ? decodeCursor(key, scope, cursor) : undefined,
    limit + 1,
  );
  const { page, hasMore, nextCursor } = keysetPage(key, scope, rows, limit, (row) => row.created_us);
  return { rows: page, hasMore, nextCursor };
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

/** The order a checkout token opens, or 404 (unknown order) / 403 (wrong token). */
export async function orderForToken(em: EntityManager, orderId: string, token: string): Promise<Order> {
  const order = await em.findOne(OrderSchema, { id: orderId });
  if (!order) throw new AppError('not_found', 'Order not found.');
  if (!order.checkoutTokenHash || !safeEqual(order.checkoutTokenHash, sha256Hex(token))) {
    throw new AppError('store_forbidden', 'This link does not open this order.');
  }
  return order;
}

/** The order with its row locked for the caller's transaction (every transition takes it first). */
export async function lockOrder(em: EntityManager, orderId: string): Promise<Order> {
  const order = await em.findOne(OrderSchema, { id: orderId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
  if (!order) throw new AppError('not_found', 'Order not found.');
  return order;
}

/** An order of the store and mode by cuid or `ORD-<n>`; 404 when it belongs to any other store or mode. */
export async function findStoreOrder(
  em: EntityManager,
  storeId: string,
  livemode: boolean,
  ref: string,
): Promise<Order> {
  const number = ORDER_NUMBER.exec(ref)?.[1];
  const order = await em.findOne(
    OrderSchema,
    number ? { number: Number(number), store: storeId, livemode } : { id: ref, store: storeId, livemode },
  );
  if (!order) throw new AppError('not_found', 'Order not found.');
  return order;
}

/** The buyer's view of a page of their orders in one store. */
export async function listBuyerOrders(
  ctx: ServiceContext,
  filter: { storeId: string; customerEmail: string },
  limit: number,
  cursor: string | undefined,
): Promise<{ orders: TBuyerOrder[]; hasMore: boolean; nextCursor: string | null }> {
  const page = await pageOrders(ctx, 'customer.orders', filter, limit, cursor);
  const lines = await linesOf(
    ctx.em,
    page.rows.map((row) => row.id),
  );
  return {
    orders: page.rows.map((row) =>
      toBuyerOrder(
        {
          id: row.id,
          number: row.number,
          storeId: row.store_id,
          livemode: row.livemode,
          status: row.status,
          productName: row.product_name,
          priceMinor: Number(row.price_minor),
          currency: row.currency,
          createdAt: row.created_at,
          completedAt: row.completed_at,
        },
        lines.get(row.id) ?? [],
      ),
    ),
    hasMore: page.hasMore,
    nextCursor: page.nextCursor,
  };
}

/** What the buyer's view needs, from a list row or an entity. */
interface BuyerOrderFields {
  id: string;
  number: number | string;
  storeId: string;
  livemode: boolean;
  status: TOrderStatus;
  productName: string;
  priceMinor: number;
  currency: string;
  createdAt: Date | string;
  completedAt: Date | string | null;
}

function toBuyerOrder(order: BuyerOrderFields, lines: LineRow[]): TBuyerOrder {
  return {
    id: order.id,
    orderId: publicOrderNumber(order.number),
    storeId: order.storeId,
    livemode: order.livemode,
    status: order.status,
    productName: order.productName,
    price: minorToAmount(order.priceMinor, order.currency),
    currency: order.currency,
    lines: lines.map((line) => ({
      productName: line.product_name,
      quantity: line.quantity,
      unitPrice: minorToAmount(Number(line.unit_price_minor), order.currency),
    })),
    createdAt: iso(order.createdAt),
    completedAt: order.completedAt === null ? null : iso(order.completedAt),
  };
}

/** One order of the buyer in the store, by cuid or `ORD-<n>`; 404 for anyone else's. */
export async function getBuyerOrder(
  ctx: ServiceContext,
  filter: { storeId: string; customerEmail: string },
  ref: string,
): Promise<TBuyerOrder> {
  const order = await findStoreOrder(ctx.em, filter.storeId, ctx.livemode, ref);
  if (order.customerEmail !== filter.customerEmail) throw new AppError('not_found', 'Order not found.');
  const lines = (await linesOf(ctx.em, [order.id])).get(order.id) ?? [];
  return toBuyerOrder({ ...order, storeId: order.store.id, completedAt: order.completedAt ?? null }, lines);
}

/** The days of the Home chart: today and the 29 before it (UTC). */
export const STATS_DAYS = 30;
const DAY_MS = 86_400_000;

/** `YYYY-MM-DD` of the UTC day `at` falls in. */
function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

async function storeCurrency(ctx: ServiceContext, storeId: string): Promise<string> {
  const store = await ctx.em.findOne(StoreSchema, { id: storeId }, { fields: ['currency'] });
  if (!store) throw new AppError('not_found', 'Store not found.');
  return store.currency;
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

/**
 * What each of these buyers has bought in the store: their paid, unrefunded orders and the sum of
 * their prices in the store currency, by e-mail address (addresses without any are left out).
 */
export async function spendByEmail(
  ctx: ServiceContext,
  storeId: string,
  emails: string[],
): Promise<Map<string, { orders: number; spent: number }>> {
  const currency = await storeCurrency(ctx, storeId);
  const rows = await selectSpendByEmail(ctx.em, { storeId, livemode: ctx.livemode, currency, emails });
  return new Map(
    rows.map((row) => [
      row.customer_email,
      { orders: Number(row.orders), spent: minorToAmount(Number(row.spent_minor), currency) },
    ]),
  );
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
  return orderTimeline(await findStoreOrder(ctx.em, input.storeId, ctx.livemode, input.orderId));
}
