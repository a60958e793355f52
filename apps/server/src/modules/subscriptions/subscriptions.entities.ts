/**
 * Subscriptions (docs/decisions.md, Subscriptions). One row per subscription: its billing terms
 * (copied from the plan when it was bought: a plan's new price applies to new subscriptions only),
 * its period, its schedule, and the billing engine's claim on it. Money in minor units of
 * `currency`. subscription-machine.ts is the only writer of the state columns.
 */
import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { CANCELLATION_REASONS, SUBSCRIPTION_INTERVALS, SUBSCRIPTION_STATUSES } from '@svc/schemas';
import { StoreSchema } from '../stores/stores.entities.js';

/** A change waiting for the next renewal (`prorate: false`), as stored. */
export interface StoredTerms {
  planId: string;
  interval: (typeof SUBSCRIPTION_INTERVALS)[number];
  intervalCount: number;
  unitPriceMinor: number;
  quantity: number;
  discountMinor: number;
}

export const SubscriptionSchema = defineEntity({
  name: 'Subscription',
  tableName: 'subscription',
  checks: [
    { name: 'subscription_quantity_check', expression: 'quantity > 0' },
    { name: 'subscription_interval_count_check', expression: 'interval_count > 0' },
    { name: 'subscription_unit_price_minor_check', expression: 'unit_price_minor >= 0' },
    { name: 'subscription_credit_minor_check', expression: 'credit_minor >= 0' },
  ],
  indexes: [
    // Keyset paging of a store's subscriptions, newest first, with and without a status filter,
    // and a buyer's subscriptions (the customer area and the customerEmail filter).
    {
      name: 'subscription_store_mode_created_index',
      expression:
        'create index "subscription_store_mode_created_index" on "subscription" ("store_id", "livemode", "created_at" desc, "id" desc)',
    },
    {
      name: 'subscription_store_mode_status_created_index',
      expression:
        'create index "subscription_store_mode_status_created_index" on "subscription" ("store_id", "livemode", "status", "created_at" desc, "id" desc)',
    },
    {
      name: 'subscription_store_mode_email_created_index',
      expression:
        'create index "subscription_store_mode_email_created_index" on "subscription" ("store_id", "livemode", "customer_email", "created_at" desc, "id" desc)',
    },
    // Home's figures (subscriptions.repo.ts selectSubscriptionFigures): index-only aggregates of a
    // store's paying subscriptions and of those that ended lately, however many the store has.
    {
      name: 'subscription_store_mrr_index',
      expression: `create index "subscription_store_mrr_index" on "subscription" ("store_id", "livemode") include ("currency", "interval", "interval_count", "unit_price_minor", "quantity") where "status" in ('active', 'past_due')`,
    },
    {
      name: 'subscription_store_ended_index',
      expression: `create index "subscription_store_ended_index" on "subscription" ("store_id", "livemode", "ended_at") where "ended_at" is not null`,
    },
    // Home's MRR history (selectMrrBuckets): every subscription that ever paid, with what it earns and when.
    {
      name: 'subscription_store_history_index',
      expression: `create index "subscription_store_history_index" on "subscription" ("store_id", "livemode", "currency") include ("status", "interval", "interval_count", "unit_price_minor", "quantity", "created_at", "trial_end", "ended_at", "paused_at") where "status" not in ('incomplete', 'incomplete_expired')`,
    },
    // The product page's count of live subscriptions per plan (selectPlanSubscriptionCounts).
    {
      name: 'subscription_product_plan_live_index',
      expression: `create index "subscription_product_plan_live_index" on "subscription" ("product_id", "livemode", "plan_id") include ("status") where "status" in ('trialing', 'active', 'past_due')`,
    },
    // The billing engine's queue: live subscriptions by the time their next move falls due.
    // Test subscriptions move by their own clock (advance), never by the wall clock.
    {
      name: 'subscription_due_index',
      expression: `create index "subscription_due_index" on "subscription" ("due_at") where "due_at" is not null and "livemode"`,
    },
  ],
  properties: (p) => ({
    id: p.string().primary().length(32),
    store: p.manyToOne(StoreSchema).ref().foreignKeyName('subscription_store_id_fkey').updateRule('no action'),
    livemode: p.boolean().default(true),
    /** Null once the product is deleted; the subscription keeps its name. */
    productId: p.string().length(32).nullable(),
    productName: p.string().length(200),
    planId: p.string().length(32),
    interval: p.enum([...SUBSCRIPTION_INTERVALS]),
    intervalCount: p.integer(),
    unitPriceMinor: p.bigint('number'),
    quantity: p.integer(),
    /** What a `forever` coupon takes off each payment (0 without one). */
    discountMinor: p.bigint('number').default(0),
    couponId: p.string().length(32).nullable(),
    currency: p.string().length(3),
    status: p.enum([...SUBSCRIPTION_STATUSES]),
    customerEmail: p.string().length(320),
    paymentMethod: p.string().length(50),
    /** The order that started it (its saved payment method is the one renewals charge). */
    firstOrderId: p.string().length(32),
    /** The last order of this subscription (`ORD-<number>` is shown). */
    latestOrderNumber: p.bigint('number').nullable(),
    anchor: p.datetime(),
    currentPeriodStart: p.datetime(),
    currentPeriodEnd: p.datetime(),
    trialEnd: p.datetime().nullable(),
    cancelAtPeriodEnd: p.boolean().default(false),
    pauseAtPeriodEnd: p.boolean().default(false),
    canceledAt: p.datetime().nullable(),
    endedAt: p.datetime().nullable(),
    pausedAt: p.datetime().nullable(),
    resumesAt: p.datetime().nullable(),
    pastDueAt: p.datetime().nullable(),
    retries: p.integer().default(0),
    unpaidFrom: p.datetime().nullable(),
    nextRetryAt: p.datetime().nullable(),
    cancellationReason: p.enum([...CANCELLATION_REASONS]).nullable(),
    /** What the buyer wrote when cancelling from their page; cleared when the cancel is undone. */
    cancellationComment: p.string().length(500).nullable(),
    creditMinor: p.bigint('number').default(0),
    pendingTerms: p.json<StoredTerms>().nullable(),
    noticeFor: p.datetime().nullable(),
    /** A test subscription's clock (null for a live one): its moves run at this time. */
    clockTime: p.datetime().nullable(),
    /** When the next move falls due (subscription-machine.ts nextDue); null when nothing ever will. */
    dueAt: p.datetime().nullable(),
    /** The billing engine's claim: a worker holds the row until then (a crashed worker's claim runs out). */
    leaseUntil: p.datetime().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    version: p.integer().version().default(1),
  }),
});
export type Subscription = InferEntity<typeof SubscriptionSchema>;

/**
 * A live store's MRR as it stood at a month's end (docs/decisions.md, "MRR"), kept the first time
 * Home's history asks for that month once it has ended: the past does not change (a subscription
 * that starts, stops or pauses now does so after every past month's end), so a store's 11 past
 * months are worked out from its subscriptions once, not at every visit. Live mode only (a test
 * subscription's clock may run ahead of the wall). `mrrScaled`: subscriptions.repo.ts MRR_SCALE.
 * Written only by subscription-stats.ts, through the repository.
 */
export const SubscriptionMrrMonthSchema = defineEntity({
  name: 'SubscriptionMrrMonth',
  tableName: 'subscription_mrr_month',
  properties: (p) => ({
    store: p
      .manyToOne(StoreSchema)
      .ref()
      .primary()
      .foreignKeyName('subscription_mrr_month_store_id_fkey')
      .updateRule('no action'),
    currency: p.string().length(3).primary(),
    /** The month's first day (UTC); the figure is at the first instant of the month after. */
    month: p.string().columnType('date').primary(),
    mrrScaled: p.string().columnType('numeric'),
  }),
});
export type SubscriptionMrrMonth = InferEntity<typeof SubscriptionMrrMonthSchema>;
