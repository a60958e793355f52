/**
 * Orders and their lines. Money is in minor units of the order's currency. The buyer's
 * IP and user-agent are stored for fraud checks and never output.
 */
import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { BILLING_REASONS, ORDER_STATUSES, PLAN_INTERVALS } from '@svc/schemas';
import { StoreSchema } from '../stores/stores.entities.js';

/** The seller an invoice names (its name, postal address and tax id), as they were when it was issued. */
export interface InvoiceSeller {
  name: string;
  address: string;
  taxId: string;
}

export const OrderSchema = defineEntity({
  name: 'Order',
  tableName: 'order',
  checks: [
    { name: 'order_price_minor_check', expression: 'price_minor >= 0' },
    { name: 'order_paid_minor_check', expression: 'paid_minor >= 0' },
    { name: 'order_invoice_seller_check', expression: 'invoice_number is null or invoice_seller is not null' },
  ],
  indexes: [
    // One order per subscription period and reason: however many workers, crashes and retries
    // the billing engine goes through, a period is charged by one order (flows/renew-subscription.ts).
    {
      name: 'order_subscription_period_unique',
      expression:
        'create unique index "order_subscription_period_unique" on "order" ("subscription_id", "period_start", "billing_reason") where "period_start" is not null',
    },
    // A subscription's orders in turn (its timeline, a test clock's advance).
    {
      name: 'order_subscription_number_index',
      expression:
        'create index "order_subscription_number_index" on "order" ("subscription_id", "number") where "subscription_id" is not null',
    },
    // Keyset paging of a store's orders, newest first, with and without a status filter.
    {
      name: 'order_store_mode_created_index',
      expression:
        'create index "order_store_mode_created_index" on "order" ("store_id", "livemode", "created_at" desc, "id" desc)',
    },
    {
      name: 'order_store_mode_status_created_index',
      expression:
        'create index "order_store_mode_status_created_index" on "order" ("store_id", "livemode", "status", "created_at" desc, "id" desc)',
    },
    // The Home figures (orders.dashboardStats): a store's paid orders by day, index-only (price and
    // currency included), without reading the pending, refunded and expired orders between them.
    {
      name: 'order_store_mode_paid_created_index',
      expression: `create index "order_store_mode_paid_created_index" on "order" ("store_id", "livemode", "created_at") include ("price_minor", "currency") where "status" in ('paid', 'processing', 'completed')`,
    },
    // A buyer's orders in a store (customer area).
    {
      name: 'order_store_mode_email_created_index',
      expression:
        'create index "order_store_mode_email_created_index" on "order" ("store_id", "livemode", "customer_email", "created_at" desc, "id" desc)',
    },
    // The seller's Customers list: a store's buyers (an order paid, refunded since or not) by
    // address in byte order, index-only, without reading the pending orders between them.
    {
      name: 'order_store_mode_buyer_index',
      expression: `create index "order_store_mode_buyer_index" on "order" ("store_id", "livemode", "customer_email" collate "C") where "status" in ('paid', 'processing', 'completed', 'refunded')`,
    },
    // An invoice or credit note number names one order of its store and mode (invoices/invoice-numbers.ts).
    {
      name: 'order_store_mode_invoice_unique',
      expression:
        'create unique index "order_store_mode_invoice_unique" on "order" ("store_id", "livemode", "invoice_number") where "invoice_number" is not null',
    },
    {
      name: 'order_store_mode_credit_note_unique',
      expression:
        'create unique index "order_store_mode_credit_note_unique" on "order" ("store_id", "livemode", "credit_note_number") where "credit_note_number" is not null',
    },
    // The tax report: a store's invoiced orders by the day they were paid.
    {
      name: 'order_store_mode_invoiced_paid_index',
      expression:
        'create index "order_store_mode_invoiced_paid_index" on "order" ("store_id", "livemode", "paid_at") where "invoice_number" is not null',
    },
    // The tax report's credit notes: a store's credited orders by the day they were refunded
    // (modules/tax/tax-report.repo.ts), without reading the store's invoices paid before.
    {
      name: 'order_store_mode_credited_refunded_index',
      expression:
        'create index "order_store_mode_credited_refunded_index" on "order" ("store_id", "livemode", "refunded_at") where "credit_note_number" is not null',
    },
    // The expiry job finds stale pending orders without scanning paid ones.
    {
      name: 'order_pending_created_index',
      expression: `create index "order_pending_created_index" on "order" ("created_at") where "status" = 'pending'`,
    },
    // try-assign and restocks look for orders still waiting for keys, oldest first.
    {
      name: 'order_processing_paid_index',
      expression: `create index "order_processing_paid_index" on "order" ("paid_at") where "status" = 'processing'`,
    },
  ],
  properties: (p) => ({
    id: p.string().primary().length(32),
    /** From its own sequence (`order_number_seq`); shown as `ORD-<number>`. */
    number: p.bigint('number').autoincrement().unique(),
    store: p.manyToOne(StoreSchema).ref().foreignKeyName('order_store_id_fkey').updateRule('no action'),
    /** Test mode (docs/architecture.md, Test mode): false for a test-mode row; every row a mode's objects are made of carries it. */
    livemode: p.boolean().default(true),
    status: p.enum([...ORDER_STATUSES]),
    /** Display name: the first line's product, with ` +N more` when there are more lines. */
    productName: p.string().length(300),
    /** What the buyer pays: subtotalMinor less discountMinor. */
    priceMinor: p.bigint('number'),
    subtotalMinor: p.bigint('number').default(0),
    discountMinor: p.bigint('number').default(0),
    couponId: p.string().length(32).nullable(),
    /** The coupon's code as it was when the order took it: what the seller and the API show, whatever became of the coupon since. */
    couponCode: p.string().length(64).nullable(),
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
    /** The subscription the order pays for (the subscriptions module sets it); null for a one-time purchase. */
    subscriptionId: p.string().length(32).nullable(),
    /** Why the order exists: `purchase` (one-time), or a subscription's create, cycle or update payment. */
    billingReason: p.enum([...BILLING_REASONS]).default('purchase'),
    /**
     * The start of the subscription period a renewal (`subscription_cycle`) or change
     * (`subscription_update`) order pays for; null otherwise. With the subscription and the
     * billing reason it names the order once: the billing engine's unique index.
     */
    periodStart: p.datetime().nullable(),
    /**
     * Tax (docs/decisions.md, "#42 Tax"), worked out when the order is placed and again when the
     * buyer's billing details or coupon change while it is pending. `taxBehavior` null: the store's
     * tax was off and nothing here applies. `taxMinor` is in `priceMinor` (inclusive) or added to
     * it (exclusive); the rate in parts per million (null when the lines' rates differ).
     */
    taxBehavior: p.enum(['exclusive', 'inclusive'] as const).nullable(),
    taxMinor: p.bigint('number').default(0),
    taxRatePpm: p.integer().nullable(),
    /** The billing country the tax was worked out for (the evidence's winner); `country` keeps the IP's. */
    taxCountry: p.string().length(2).nullable(),
    reverseCharge: p.boolean().default(false),
    /** What the buyer gave for the invoice: billing country, VAT id (normalised), name and address. */
    billingCountry: p.string().length(2).nullable(),
    buyerTaxId: p.string().length(20).nullable(),
    billingName: p.string().length(200).nullable(),
    billingAddress: p.text().nullable(),
    /** `INV-<year>-<n>`: given in the paying transaction (orders/invoice-numbers.ts). */
    invoiceNumber: p.string().length(24).nullable(),
    /**
     * The seller as the invoice names it, kept when the number is given: a store that later edits
     * its name, address or tax id does not rewrite an invoice it already issued.
     */
    invoiceSeller: p.json<InvoiceSeller>().nullable(),
    /** `CN-<year>-<n>`: given in the refunding transaction of an invoiced order. */
    creditNoteNumber: p.string().length(24).nullable(),
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
    /** When the seller cancelled it (pending -> cancelled); null on orders cancelled before this was kept. */
    cancelledAt: p.datetime().nullable(),
    /** When the checkout lifetime ran out (pending -> expired); likewise. */
    expiredAt: p.datetime().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    version: p.integer().version().default(1),
  }),
});
export type Order = InferEntity<typeof OrderSchema>;

export const OrderLineSchema = defineEntity({
  name: 'OrderLine',
  tableName: 'order_line',
  checks: [
    { name: 'order_line_quantity_check', expression: 'quantity > 0' },
    { name: 'order_line_unit_price_minor_check', expression: 'unit_price_minor >= 0' },
  ],
  indexes: [{ name: 'order_line_product_index', properties: ['productId'] }],
  properties: (p) => ({
    id: p.string().primary().length(32),
    order: p
      .manyToOne(OrderSchema)
      .ref()
      .foreignKeyName('order_line_order_id_fkey')
      .updateRule('no action')
      .deleteRule('cascade')
      .index(),
    /** Its order's mode. */
    livemode: p.boolean().default(true),
    productId: p.string().length(32).nullable(),
    productName: p.string().length(200),
    quantity: p.integer(),
    unitPriceMinor: p.bigint('number'),
    /** The line's place in the cart, from 0. */
    position: p.integer().default(0),
    /** A recurring product's line: the plan bought (catalog's product_plan) and its terms as they were then; null otherwise. */
    planId: p.string().length(32).nullable(),
    planInterval: p.enum([...PLAN_INTERVALS]).nullable(),
    planIntervalCount: p.integer().nullable(),
    planTrialDays: p.integer().nullable(),
    /** The product's tax category at the sale, and the line's tax: its share of the discount, net, tax and rate (ppm). */
    taxCategory: p.enum(['standard', 'ebook'] as const).default('standard'),
    discountMinor: p.bigint('number').default(0),
    netMinor: p.bigint('number').default(0),
    taxMinor: p.bigint('number').default(0),
    taxRatePpm: p.integer().default(0),
  }),
});
export type OrderLine = InferEntity<typeof OrderLineSchema>;

/**
 * The last invoice (`INV`) or credit note (`CN`) number given in a store's mode and year. Its row is
 * locked by the paying (or refunding) transaction that takes the next number, so numbers are given
 * one at a time and a rolled-back transaction gives its number back: gapless.
 */
export const InvoiceCounterSchema = defineEntity({
  name: 'InvoiceCounter',
  tableName: 'invoice_counter',
  properties: (p) => ({
    storeId: p.string().length(32).primary(),
    livemode: p.boolean().primary(),
    kind: p.enum(['INV', 'CN'] as const).primary(),
    year: p.integer().primary(),
    last: p.integer(),
  }),
});
