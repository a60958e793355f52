/** The checkout module's raw SQL: writing a new order. */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { TOrderStatus } from '@svc/schemas';
import { preparedRows } from '../../db/prepared.js';
import { eventInsert, type OutboxEvent } from '../events/outbox.js';

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
  currency: string;
  customerEmail: string;
  country: string;
  buyerIp: string;
  userAgent: string | null;
  customFieldResponses: Array<{ name: string; value: string }>;
  checkoutTokenHash: string;
  createdAt: Date;
  lines: Array<{ id: string; productId: string; productName: string; quantity: number; unitPriceMinor: number }>;
}

/**
 * The order's public number: the sequence's next value, `ORD-` and the number in the event's
 * payload (orders.service.ts `publicOrderNumber`), for the statement that draws it.
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
export async function insertOrder(em: EntityManager, order: NewOrder, event: OutboxEvent): Promise<number> {
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
         paid_minor, currency, payment_method, customer_email, country, buyer_ip, user_agent, note, custom_field_responses,
         checkout_token_hash, key_count, created_at, updated_at, version)
       values (?, (select number from next_number), ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, '', ?, ?, ?, ?, '', ?::jsonb, ?, 0, ?, ?, 1)
     ), new_lines as (
       insert into order_line (id, order_id, livemode, product_id, product_name, quantity, unit_price_minor, position)
       select line.id, ?, ?, line.product_id, line.product_name, line.quantity, line.unit_price_minor, line.position - 1
       from unnest(?::text[], ?::text[], ?::text[], ?::int[], ?::bigint[]) with ordinality
         as line(id, product_id, product_name, quantity, unit_price_minor, position)
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
      order.currency,
      order.customerEmail,
      order.country,
      order.buyerIp,
      order.userAgent,
      JSON.stringify(order.customFieldResponses),
      order.checkoutTokenHash,
      order.createdAt,
      order.createdAt,
      order.id,
      order.livemode,
      lines.map((line) => line.id),
      lines.map((line) => line.productId),
      lines.map((line) => line.productName),
      lines.map((line) => line.quantity),
      lines.map((line) => line.unitPriceMinor),
      ...eventRow.params,
    ],
  );
  return Number(row!.number);
}
