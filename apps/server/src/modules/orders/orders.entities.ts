/**
 * Orders and their lines. Money is in minor units of the order's currency. The buyer's
 * IP and user-agent are stored for fraud checks and never output.
 */
import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { ORDER_STATUSES } from '@svc/schemas';
import { StoreSchema } from '../stores/stores.entities.js';

export const OrderSchema = defineEntity({
  name: 'Order',
  tableName: 'order',
  properties: (p) => ({
    id: p.string().primary().length(32),
    /** From the `order_number_seq` sequence; shown as `ORD-<number>`. */
    number: p.bigint('number').defaultRaw(`nextval('order_number_seq')`).unique(),
    store: p.manyToOne(StoreSchema).ref(),
    status: p.enum([...ORDER_STATUSES]),
    /** Display name: the first line's product, with ` +N more` when there are more lines. */
    productName: p.string().length(300),
    /** What the buyer pays: subtotalMinor less discountMinor. */
    priceMinor: p.bigint('number'),
    subtotalMinor: p.bigint('number').default(0),
    discountMinor: p.bigint('number').default(0),
    couponId: p.string().length(32).nullable(),
    paidMinor: p.bigint('number').default(0),
    currency: p.string().length(3),
    paymentMethod: p.string().length(50).default(''),
    customerEmail: p.string().length(320),
    country: p.string().length(2).default('XX'),
    buyerIp: p.string().length(45).nullable(),
    userAgent: p.string().length(512).nullable(),
    note: p.text().default(''),
    customFieldResponses: p.json<Array<{ name: string; value: string }>>().default('[]'),
    checkoutTokenHash: p.string().length(64).nullable(),
    /** Keys assigned to this order; kept in the same transaction as each assignment. */
    keyCount: p.integer().default(0),
    /** Why a payment notification did not settle (amount or currency mismatch), for the seller to see. */
    paymentFlag: p.string().length(40).nullable(),
    /** What the seller delivered by hand (shown to the buyer once marked delivered). */
    manualDeliveryContent: p.text().default(''),
    paymentProofFileId: p.string().length(32).nullable(),
    refundedAt: p.datetime().nullable(),
    paidAt: p.datetime().nullable(),
    completedAt: p.datetime().nullable(),
    deliveredAt: p.datetime().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    version: p.integer().version().default(1),
  }),
});
export type Order = InferEntity<typeof OrderSchema>;

export const OrderLineSchema = defineEntity({
  name: 'OrderLine',
  tableName: 'order_line',
  properties: (p) => ({
    id: p.string().primary().length(32),
    order: p.manyToOne(OrderSchema).ref().deleteRule('cascade').index(),
    productId: p.string().length(32).nullable(),
    productName: p.string().length(200),
    quantity: p.integer(),
    unitPriceMinor: p.bigint('number'),
    /** The line's place in the cart, from 0. */
    position: p.integer().default(0),
  }),
});
export type OrderLine = InferEntity<typeof OrderLineSchema>;
