/**
 * The reads of orders that other modules make (the customer area, the seller's customer list) and
 * the keyset page reader the merchant lists share with them.
 */
import type { TBillingReason, TBuyerOrder, TOrderStatus } from '@svc/schemas';
import { cursorScope, decodeCursor, keysetPage } from '../../lib/cursor.js';
import { AppError } from '../../lib/errors.js';
import { minorToAmount } from '../../lib/money.js';
import { iso } from '../../lib/timestamps.js';
import type { ServiceContext } from '../request/context.js';
import { StoreSchema } from '../stores/stores.entities.js';
import { findStoreOrder } from './order-lookup.js';
import { orderRowTax, publicOrderNumber, toLinePlan, toOrderTax } from './order-views.js';
import {
  linesOf,
  selectOrderPage,
  selectBuyerStats,
  selectBuyerEmails,
  type LineRow,
  type OrderPageFilter,
  type OrderRow,
} from './orders.repo.js';

export const DEFAULT_PAGE_SIZE = 50;

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
export async function pageOrders(
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
    subscriptionId: filter.subscriptionId,
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

export async function storeCurrency(ctx: ServiceContext, storeId: string): Promise<string> {
  const store = await ctx.em.findOne(StoreSchema, { id: storeId }, { fields: ['currency'] });
  if (!store) throw new AppError('not_found', 'Store not found.');
  return store.currency;
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
          subscriptionId: row.subscription_id,
          billingReason: row.billing_reason,
          createdAt: row.created_at,
          completedAt: row.completed_at,
          tax: orderRowTax(row),
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
  subscriptionId: string | null;
  billingReason: TBillingReason;
  createdAt: Date | string;
  completedAt: Date | string | null;
  tax: ReturnType<typeof toOrderTax>;
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
      plan: toLinePlan({
        planId: line.plan_id,
        planInterval: line.plan_interval,
        planIntervalCount: line.plan_interval_count,
        planTrialDays: line.plan_trial_days,
      }),
    })),
    subscriptionId: order.subscriptionId,
    billingReason: order.billingReason,
    ...order.tax,
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
  const order = await findStoreOrder(ctx, { storeId: filter.storeId, orderId: ref });
  if (order.customerEmail !== filter.customerEmail) throw new AppError('not_found', 'Order not found.');
  const lines = (await linesOf(ctx.em, [order.id])).get(order.id) ?? [];
  return toBuyerOrder(
    {
      ...order,
      storeId: order.store.id,
      subscriptionId: order.subscriptionId ?? null,
      completedAt: order.completedAt ?? null,
      tax: toOrderTax(order),
    },
    lines,
  );
}

export interface BuyerStats {
  orders: number;
  spent: number;
  firstOrderAt: Date;
  lastOrderAt: Date;
}

/**
 * What each of these buyers has bought in the store: their paid, unrefunded orders and the sum of
 * their prices in the store currency, and their first and last order (refunded ones too), by
 * e-mail address (addresses that never bought are left out).
 */
export async function buyerStats(
  ctx: ServiceContext,
  storeId: string,
  emails: string[],
): Promise<Map<string, BuyerStats>> {
  const currency = await storeCurrency(ctx, storeId);
  const rows = await selectBuyerStats(ctx.em, { storeId, livemode: ctx.livemode, currency, emails });
  return new Map(
    rows.map((row) => [
      row.customer_email,
      {
        orders: Number(row.orders),
        spent: minorToAmount(Number(row.spent_minor), currency),
        firstOrderAt: new Date(iso(row.first_order_at)),
        lastOrderAt: new Date(iso(row.last_order_at)),
      },
    ]),
  );
}

/** A page of the addresses that bought in the store, in byte order after `after` (orders.repo.ts selectBuyerEmails). */
export function buyerEmails(
  ctx: ServiceContext,
  filter: { storeId: string; emailPrefix?: string | undefined },
  after: string | undefined,
  limit: number,
): Promise<string[]> {
  return selectBuyerEmails(ctx.em, { ...filter, livemode: ctx.livemode }, after, limit);
}
