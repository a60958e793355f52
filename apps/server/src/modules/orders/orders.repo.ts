/**
 * The orders module's raw SQL. Everything else about orders goes through the ORM.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { TBillingReason, TOrderStatus, TPlanInterval } from '@svc/schemas';
import { preparedEntity, preparedRows } from '../../db/prepared.js';
import { readOnReplica } from '../../db/replicas.js';
import type { KeysetPosition } from '../../lib/cursor.js';
import { KeysetWhere } from '../../lib/keyset.js';
import { eventInsert, type OutboxEvent } from '../events/outbox.js';
import type { LinePlanFields } from './order-views.js';
import { OrderSchema, type InvoiceSeller, type Order } from './orders.entities.js';

/** The columns a list needs, straight from SQL (no entity hydration on the hot path). */
export interface OrderRow {
  id: string;
  number: string;
  store_id: string;
  livemode: boolean;
  status: TOrderStatus;
  product_name: string;
  price_minor: string;
  paid_minor: string;
  currency: string;
  payment_method: string;
  customer_email: string;
  country: string;
  key_count: number;
  subscription_id: string | null;
  billing_reason: TBillingReason;
  subtotal_minor: string;
  tax_minor: string;
  tax_rate_ppm: number | null;
  tax_country: string | null;
  reverse_charge: boolean;
  invoice_number: string | null;
  credit_note_number: string | null;
  /** MikroORM sets pg to hand timestamps over as text; see `iso`. */
  created_at: Date | string;
  completed_at: Date | string | null;
  updated_at: Date | string;
  created_us: string;
}

const LIST_COLUMNS = `o.id, o.number, o.store_id, o.livemode, o.status, o.product_name, o.price_minor, o.paid_minor, o.currency,
  o.payment_method, o.customer_email, o.country, o.key_count, o.subscription_id, o.billing_reason, o.created_at,
  o.completed_at, o.updated_at, o.subtotal_minor, o.tax_minor, o.tax_rate_ppm, o.tax_country, o.reverse_charge,
  o.invoice_number, o.credit_note_number,
  (extract(epoch from o.created_at) * 1000000)::bigint as created_us`;

export interface OrderPageFilter {
  storeId: string;
  /** The mode read (test mode: docs/architecture.md): every index of a list leads with (store_id, livemode). */
  livemode: boolean;
  status?: TOrderStatus | undefined;
  from?: string | undefined;
  to?: string | undefined;
  customerEmail?: string | undefined;
  /** One subscription's orders: the (subscription_id, number) index. */
  subscriptionId?: string | undefined;
  /** One order, by its number (`ORD-<n>`) or its id: the unique index or the primary key. */
  number?: string | undefined;
  id?: string | undefined;
}

/**
 * The statement of one keyset page (`?` placeholders) and its parameters, as selectOrderPage runs
 * it; also what the orders-paging benchmark EXPLAINs, so the plan it prints is the service's.
 */
export function orderPageStatement(
  filter: OrderPageFilter,
  before: KeysetPosition | undefined,
  limit: number,
): { sql: string; params: unknown[] } {
  const where = new KeysetWhere('o.store_id = ?', filter.storeId);
  where.and('o.livemode = ?', filter.livemode);
  if (filter.customerEmail !== undefined) where.and('o.customer_email = ?', filter.customerEmail);
  if (filter.subscriptionId !== undefined) where.and('o.subscription_id = ?', filter.subscriptionId);
  if (filter.number !== undefined) where.and('o.number = ?', filter.number);
  if (filter.id !== undefined) where.and('o.id = ?', filter.id);
  if (filter.status) where.and('o.status = ?', filter.status);
  if (filter.from) where.and('o.created_at >= ?', new Date(filter.from));
  if (filter.to) where.and('o.created_at <= ?', new Date(filter.to));
  where.before(before, 'o.created_at', 'o.id');
  return {
    sql: `select ${LIST_COLUMNS} from "order" o where ${where.sql} order by o.created_at desc, o.id desc limit ?`,
    params: [...where.params, limit],
  };
}

/**
 * One keyset page of a store's orders, newest first: `(created_at, id) < before`, served by the
 * (store, livemode, [status | customer_email,] created_at, id) indexes, or one order by its number or id (a
 * unique index, the primary key). Hot path (the orders list): a row
 * value comparison the ORM cannot write, and the columns straight into the view, no hydration.
 */
export async function selectOrderPage(
  em: EntityManager,
  filter: OrderPageFilter,
  before: KeysetPosition | undefined,
  limit: number,
): Promise<OrderRow[]> {
  const { sql, params } = orderPageStatement(filter, before, limit);
  // A listing: on a read replica when there is one (db/replicas.ts).
  return readOnReplica(em, sql, params);
}

export interface LineRow {
  order_id: string;
  product_name: string;
  quantity: number;
  unit_price_minor: string;
  plan_id: string | null;
  plan_interval: TPlanInterval | null;
  plan_interval_count: number | null;
  plan_trial_days: number | null;
}

/** The lines of a page of orders. Hot path (the buyer's order list): the columns shown, no hydration. */
export async function linesOf(em: EntityManager, orderIds: string[]): Promise<Map<string, LineRow[]>> {
  const byOrder = new Map<string, LineRow[]>();
  if (orderIds.length === 0) return byOrder;
  const rows = await preparedRows<LineRow>(
    em,
    `select order_id, product_name, quantity, unit_price_minor, plan_id, plan_interval, plan_interval_count, plan_trial_days
     from order_line where order_id = any(?) order by position, id`,
    [orderIds],
  );
  for (const row of rows) {
    const list = byOrder.get(row.order_id) ?? [];
    list.push(row);
    byOrder.set(row.order_id, list);
  }
  return byOrder;
}

/**
 * The lifecycle's `expire` for every stale pending order (order-lifecycle.ts decides the
 * statuses; it is the expiry, so it stamps `expired_at`). A subscription's renewal order is not
 * a checkout: it waits while dunning runs (its subscription ends it, flows/renew-subscription.ts). One UPDATE ... RETURNING: the expiry job must not load thousands of orders to
 * change one column, and must bump `version` itself since the ORM's flush does not run.
 */
export async function expirePendingOrders(
  em: EntityManager,
  change: { from: readonly TOrderStatus[]; to: TOrderStatus; createdBefore: Date; now: Date },
): Promise<Array<{ id: string; couponId: string | null }>> {
  const rows = await em.execute<Array<{ id: string; coupon_id: string | null }>>(
    `update "order" set status = ?, updated_at = ?, expired_at = ?, version = version + 1
     where status in (?) and created_at <= ? and period_start is null returning id, coupon_id`,
    [change.to, change.now, change.now, [...change.from], change.createdBefore],
  );
  return rows.map((row) => ({ id: row.id, couponId: row.coupon_id }));
}

/**
 * The statuses of an order that is paid and not refunded (order-lifecycle.ts PAID_STATUSES, which a
 * test holds equal to this), as SQL literals: the text of the partial index order_store_mode_paid_created_index.
 */
export const PAID_STATUS_SQL = `'paid', 'processing', 'completed'`;

export interface SalesDayRow {
  date: string;
  revenue_minor: string;
  orders: string;
}

/**
 * A store's paid orders in `currency` per UTC day from `firstDay` to `lastDay` (`YYYY-MM-DD`, both
 * included), every day present (zeros without orders). One aggregate over a `generate_series`: the
 * ORM writes no left join onto a series. The status list is literal (the statuses the lifecycle
 * calls paid), so the planner can use the partial index order_store_mode_paid_created_index; a
 * parameter would hide that the query implies its predicate. On a replica when there is one.
 */
export async function selectSalesByDay(
  em: EntityManager,
  filter: { storeId: string; livemode: boolean; currency: string; firstDay: string; lastDay: string },
): Promise<SalesDayRow[]> {
  return readOnReplica(
    em,
    `with sales as (
       select (o.created_at at time zone 'UTC')::date as day, sum(o.price_minor) as revenue_minor, count(*) as orders
       from "order" o
       where o.store_id = ? and o.livemode = ? and o.status in (${PAID_STATUS_SQL}) and o.currency = ?
         and o.created_at >= (?::date)::timestamp at time zone 'UTC'
         and o.created_at < ((?::date) + 1)::timestamp at time zone 'UTC'
       group by 1)
     select to_char(d.day, 'YYYY-MM-DD') as date, coalesce(s.revenue_minor, 0) as revenue_minor, coalesce(s.orders, 0) as orders
     from generate_series(?::date, ?::date, interval '1 day') as d(day)
     left join sales s on s.day = d.day
     order by d.day`,
    [
      filter.storeId,
      filter.livemode,
      filter.currency,
      filter.firstDay,
      filter.lastDay,
      filter.firstDay,
      filter.lastDay,
    ],
  );
}

/** The statuses of an order that was paid, refunded since or not: its address is a buyer's. */
export const BOUGHT_STATUS_SQL = `'paid', 'processing', 'completed', 'refunded'`;

/**
 * A page of the addresses that bought in a store (an order paid, refunded since or not), in byte
 * order after `after`, those starting with `emailPrefix` only when it is given. Index-only on
 * order_store_mode_buyer_index (partial on those statuses, the address in the "C" collation), so
 * a page reads its own addresses' rows and stops: DISTINCT over a keyset the ORM cannot write.
 */
export async function selectBuyerEmails(
  em: EntityManager,
  filter: { storeId: string; livemode: boolean; emailPrefix?: string | undefined },
  after: string | undefined,
  limit: number,
): Promise<string[]> {
  const where = new KeysetWhere('o.store_id = ?', filter.storeId);
  where.and('o.livemode = ?', filter.livemode);
  where.and(`o.status in (${BOUGHT_STATUS_SQL})`);
  where.and(`o.customer_email collate "C" > ?`, after ?? '');
  if (filter.emailPrefix !== undefined) {
    // Every address starting with the prefix sorts from it to it followed by the last code point.
    where.and(`o.customer_email collate "C" >= ?`, filter.emailPrefix);
    where.and(`o.customer_email collate "C" < ?`, `${filter.emailPrefix}\u{10FFFF}`);
  }
  const rows = await readOnReplica<{ email: string }>(
    em,
    `select distinct o.customer_email collate "C" as email from "order" o where ${where.sql} order by 1 limit ?`,
    [...where.params, limit],
  );
  return rows.map((row) => row.email);
}

export interface BuyerStatsRow {
  customer_email: string;
  orders: string;
  spent_minor: string;
  first_order_at: Date | string;
  last_order_at: Date | string;
}

/**
 * What each of a page of addresses bought in a store: their paid, unrefunded orders in the store
 * currency and what those cost, and their first and last order (refunded ones too). Only those
 * addresses: the (store, customer_email, ...) index finds each one's orders. A grouped aggregate
 * over `= any(?)` with FILTER clauses, one statement for the page; statuses literal as in selectSalesByDay.
 */
export async function selectBuyerStats(
  em: EntityManager,
  filter: { storeId: string; livemode: boolean; currency: string; emails: string[] },
): Promise<BuyerStatsRow[]> {
  if (filter.emails.length === 0) return [];
  return readOnReplica(
    em,
    `select o.customer_email,
       count(*) filter (where o.status in (${PAID_STATUS_SQL}) and o.currency = ?) as orders,
       coalesce(sum(o.price_minor) filter (where o.status in (${PAID_STATUS_SQL}) and o.currency = ?), 0) as spent_minor,
       min(o.created_at) as first_order_at, max(o.created_at) as last_order_at
     from "order" o
     where o.store_id = ? and o.livemode = ? and o.customer_email = any(?) and o.status in (${BOUGHT_STATUS_SQL})
     group by o.customer_email`,
    [filter.currency, filter.currency, filter.storeId, filter.livemode, filter.emails],
  );
}

export interface NewOrder {
  id: string;
  store: { id: string };
  livemode: boolean;
  status: TOrderStatus;
  productName: string;
  priceMinor: number;
  subtotalMinor: number;
  discountMinor: number;
  couponId: string | null;
  couponCode: string | null;
  currency: string;
  customerEmail: string;
  country: string;
  buyerIp: string;
  userAgent: string | null;
  customFieldResponses: Array<{ name: string; value: string }>;
  checkoutTokenHash: string;
  subscriptionId: string | null;
  billingReason: TBillingReason;
  /** The subscription period a renewal or change order pays for (null or absent otherwise). */
  periodStart?: Date | null;
  createdAt: Date;
  /** The order's tax (tax/tax.ts workOutTax) and the buyer's billing details. */
  taxBehavior?: 'exclusive' | 'inclusive' | null | undefined;
  taxMinor: number;
  taxRatePpm?: number | null | undefined;
  taxCountry?: string | null | undefined;
  reverseCharge: boolean;
  billingCountry?: string | null | undefined;
  buyerTaxId?: string | null | undefined;
  billingName?: string | null | undefined;
  billingAddress?: string | null | undefined;
  lines: Array<
    {
      id: string;
      productId: string;
      productName: string;
      quantity: number;
      unitPriceMinor: number;
      taxCategory: 'standard' | 'ebook';
      discountMinor: number;
      netMinor: number;
      taxMinor: number;
      taxRatePpm: number;
    } & LinePlanFields
  >;
}

/**
 * The order's public number: the sequence's next value, `ORD-` and the number in the event's
 * payload (order-views.ts `publicOrderNumber`), for the statement that draws it.
 */
const ORDER_ID_IN_PAYLOAD = `jsonb_set(?::jsonb, '{order,orderId}', to_jsonb('ORD-' || (select number from next_number)))`;

/**
 * The order, its lines and the event that announces it, in one statement that also draws the
 * order's number from its sequence: all or nothing, one round trip. Returns the number. Hot path
 * (every checkout): the unit of work's flush took six round trips and most of the CPU of a
 * checkout (docs/decisions.md, "Hot paths"), and drawing the number first took a round trip (and
 * a transaction) of its own. `event` is the order.created event as the caller built it, its
 * payload's `order.orderId` filled in here with the number drawn; the outbox writes it
 * (events/outbox.ts `eventInsert`); the caller arranges the wake-up.
 */
export async function insertNewOrder(em: EntityManager, order: NewOrder, event: OutboxEvent): Promise<number> {
  const lines = order.lines;
  const eventRow = eventInsert(event, ORDER_ID_IN_PAYLOAD);
  // The lines as one array per column (unnest): one statement text whatever their number, so it
  // is prepared once per connection (db/prepared.ts) instead of formatted and planned per order.
  // nextval in a CTE runs once (a volatile CTE is materialised), and the order and its event read it.
  const [row] = await preparedRows<{ number: string }>(
    em,
    `with next_number as (
       select nextval('order_number_seq') as number
     ), new_order as (
       insert into "order" (id, number, store_id, livemode, status, product_name, price_minor, subtotal_minor, discount_minor, coupon_id,
         coupon_code, paid_minor, currency, payment_method, customer_email, country, buyer_ip, user_agent, note, custom_field_responses,
         checkout_token_hash, key_count, subscription_id, billing_reason, period_start, created_at, updated_at, version,
         tax_behavior, tax_minor, tax_rate_ppm, tax_country, reverse_charge, billing_country, buyer_tax_id, billing_name,
         billing_address)
       values (?, (select number from next_number), ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, '', ?, ?, ?, ?, '', ?::jsonb, ?, 0, ?, ?, ?, ?, ?, 1,
         ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ), new_lines as (
       insert into order_line (id, order_id, livemode, product_id, product_name, quantity, unit_price_minor, position,
         plan_id, plan_interval, plan_interval_count, plan_trial_days, tax_category, discount_minor, net_minor, tax_minor,
         tax_rate_ppm)
       select line.id, ?, ?, line.product_id, line.product_name, line.quantity, line.unit_price_minor, line.position - 1,
         line.plan_id, line.plan_interval, line.plan_interval_count, line.plan_trial_days, line.tax_category,
         line.discount_minor, line.net_minor, line.tax_minor, line.tax_rate_ppm
       from unnest(?::text[], ?::text[], ?::text[], ?::int[], ?::bigint[], ?::text[], ?::text[], ?::int[], ?::int[],
           ?::text[], ?::bigint[], ?::bigint[], ?::bigint[], ?::int[])
         with ordinality
         as line(id, product_id, product_name, quantity, unit_price_minor, plan_id, plan_interval, plan_interval_count,
           plan_trial_days, tax_category, discount_minor, net_minor, tax_minor, tax_rate_ppm, position)
     ), new_event as (
       ${eventRow.sql}
     )
     select number from next_number`,
    [
      order.id,
      order.store.id,
      order.livemode,
      order.status,
      order.productName,
      order.priceMinor,
      order.subtotalMinor,
      order.discountMinor,
      order.couponId,
      order.couponCode,
      order.currency,
      order.customerEmail,
      order.country,
      order.buyerIp,
      order.userAgent,
      JSON.stringify(order.customFieldResponses),
      order.checkoutTokenHash,
      order.subscriptionId,
      order.billingReason,
      order.periodStart ?? null,
      order.createdAt,
      order.createdAt,
      order.taxBehavior ?? null,
      order.taxMinor,
      order.taxRatePpm ?? null,
      order.taxCountry ?? null,
      order.reverseCharge,
      order.billingCountry ?? null,
      order.buyerTaxId ?? null,
      order.billingName ?? null,
      order.billingAddress ?? null,
      order.id,
      order.livemode,
      lines.map((line) => line.id),
      lines.map((line) => line.productId),
      lines.map((line) => line.productName),
      lines.map((line) => line.quantity),
      lines.map((line) => line.unitPriceMinor),
      lines.map((line) => line.planId),
      lines.map((line) => line.planInterval),
      lines.map((line) => line.planIntervalCount),
      lines.map((line) => line.planTrialDays),
      lines.map((line) => line.taxCategory),
      lines.map((line) => line.discountMinor),
      lines.map((line) => line.netMinor),
      lines.map((line) => line.taxMinor),
      lines.map((line) => line.taxRatePpm),
      ...eventRow.params,
    ],
  );
  return Number(row!.number);
}

/**
 * A subscription's order for a period and reason, if written: the unique index on (subscription,
 * period start, reason) that makes it one per period. The renewal's hot path, under the
 * subscription's row lock: its id and number, no entity.
 */
export async function selectPeriodOrder(
  em: EntityManager,
  key: { subscriptionId: string; periodStart: Date; billingReason: string },
): Promise<{ id: string; number: number } | undefined> {
  const [row] = await preparedRows<{ id: string; number: string }>(
    em,
    'select id, number from "order" where subscription_id = ? and period_start = ? and billing_reason = ? limit 1',
    [key.subscriptionId, key.periodStart, key.billingReason],
  );
  return row && { id: row.id, number: Number(row.number) };
}

/** What a renewal order repeats of its subscription's first: where it was placed from, the billing details and the line's tax category. */
export interface OrderOrigin {
  country: string;
  buyerIp: string;
  billingCountry: string | null;
  buyerTaxId: string | null;
  billingName: string | null;
  billingAddress: string | null;
  taxCategory: 'standard' | 'ebook';
  /** Its store's tax settings now (`settings.tax`; null when never set): a renewal is taxed as the store is set up at its date. */
  storeTax: Record<string, unknown> | null;
}

/** An order's origin (OrderOrigin), by primary key; its first line's tax category and its store's tax settings, in the one round trip. */
export async function selectOrderOrigin(em: EntityManager, orderId: string): Promise<OrderOrigin | undefined> {
  const [row] = await preparedRows<OrderOrigin>(
    em,
    `select o.country, o.buyer_ip as "buyerIp", o.billing_country as "billingCountry", o.buyer_tax_id as "buyerTaxId",
       o.billing_name as "billingName", o.billing_address as "billingAddress",
       coalesce((select l.tax_category from order_line l where l.order_id = o.id order by l.position limit 1), 'standard')
         as "taxCategory",
       (select s.settings->'tax' from store s where s.id = o.store_id) as "storeTax"
     from "order" o where o.id = ? limit 1`,
    [orderId],
  );
  return row;
}

/**
 * Whether the store has a paid test-mode order (refunded ones count: they were paid): the Home's
 * setup checklist. The status list is literal, that of the partial index order_store_mode_buyer_index,
 * and the ORDER BY is that index's order: without it the planner, seeing a store with many orders,
 * bets on a sequential scan finding a row early and reads every order of a store that has no paid
 * test order (1.1 s on a million orders); with it, one index probe (0.07 ms).
 */
export async function anyPaidTestOrder(em: EntityManager, storeId: string): Promise<boolean> {
  const rows = await preparedRows(
    em,
    `select 1 from "order"
     where store_id = ? and livemode = false and status in ('paid', 'processing', 'completed', 'refunded')
     order by customer_email collate "C" limit 1`,
    [storeId],
  );
  return rows.length > 0;
}

/**
 * The order by id, its row locked for the caller's transaction, as a managed entity. Prepared
 * (db/prepared.ts preparedEntity): every transition of an order takes it first.
 */
export function selectOrderForUpdate(em: EntityManager, id: string): Promise<Order | null> {
  return preparedEntity(em, OrderSchema, 'select * from "order" where id = ? limit 1 for update', [id]);
}

/**
 * The next invoice (`INV`) or credit note (`CN`) number of a store's mode and year. The upsert
 * takes the counter row's lock until the caller's transaction ends: concurrent payments take
 * their numbers one after another, and a transaction that rolls back gives its number back, so
 * the numbers have no gap (a sequence would leave one). The same statement reads the seller as
 * the store's tax settings name it now (the store's name when they name none), for the invoice
 * to keep. Prepared: every taxed payment runs it.
 */
export async function takeDocumentNumber(
  em: EntityManager,
  key: { storeId: string; livemode: boolean; kind: 'INV' | 'CN'; year: number },
): Promise<{ number: number; seller: InvoiceSeller }> {
  const [row] = await preparedRows<{ last: number; name: string; address: string; tax_id: string }>(
    em,
    `with counter as (
       insert into invoice_counter (store_id, livemode, kind, year, last) values (?, ?, ?, ?, 1)
       on conflict (store_id, livemode, kind, year) do update set last = invoice_counter.last + 1
       returning last, store_id)
     select counter.last,
            coalesce(nullif(s.settings->'tax'->>'sellerName', ''), s.name) as name,
            coalesce(s.settings->'tax'->>'sellerAddress', '') as address,
            coalesce(s.settings->'tax'->>'sellerTaxId', '') as tax_id
       from counter join store s on s.id = counter.store_id`,
    [key.storeId, key.livemode, key.kind, key.year],
  );
  return { number: row!.last, seller: { name: row!.name, address: row!.address, taxId: row!.tax_id } };
}
