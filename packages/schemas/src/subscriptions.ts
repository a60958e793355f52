/** Subscriptions as merchants, staff and buyers see them (docs/decisions.md, Subscriptions). */
import { z } from 'zod';
import { ZCount, ZId, ZLivemode, ZTimestamp } from './common.js';
import { queryInt } from './query.js';
import { ZBillingReason, ZOrderStatus, ZSellerOrderDetail } from './orders.js';
import { ZWebhookEvent } from './webhooks.js';

/** How often a plan bills: `intervalCount` x `interval`, at most a year. */
export const SUBSCRIPTION_INTERVALS = ['day', 'week', 'month', 'year'] as const;
export const ZSubscriptionInterval = z.enum(SUBSCRIPTION_INTERVALS);
export type TSubscriptionInterval = z.infer<typeof ZSubscriptionInterval>;

export const SUBSCRIPTION_STATUSES = [
  'incomplete',
  'incomplete_expired',
  'trialing',
  'active',
  'past_due',
  'paused',
  'canceled',
] as const;
export const ZSubscriptionStatus = z.enum(SUBSCRIPTION_STATUSES);
export type TSubscriptionStatus = z.infer<typeof ZSubscriptionStatus>;

export const CANCELLATION_REASONS = ['requested_by_customer', 'requested_by_merchant', 'payment_failed'] as const;
export const ZCancellationReason = z.enum(CANCELLATION_REASONS);
export type TCancellationReason = z.infer<typeof ZCancellationReason>;

/** A change made with `prorate: false`, waiting for the next renewal. */
export const ZPendingUpdate = z.object({
  planId: ZId,
  quantity: z.number().int().min(1).max(100),
  /** What each renewal will charge once the change applies. */
  amount: z.number(),
});

export const ZSubscription = z.object({
  id: ZId,
  storeId: ZId,
  livemode: ZLivemode,
  productId: ZId.nullable().meta({ description: 'Null once the product is deleted; the subscription keeps its name' }),
  productName: z.string(),
  planId: ZId,
  interval: ZSubscriptionInterval,
  intervalCount: z.number().int().min(1).max(12),
  quantity: z.number().int().min(1).max(100).meta({ description: 'Seats' }),
  unitPrice: z.number(),
  amount: z.number().meta({
    description:
      'What the next renewal charges: unit price x seats, less a `forever` coupon, before the credit balance',
  }),
  creditBalance: z.number().meta({ description: 'Credit from a prorated downgrade, spent by the next renewals' }),
  currency: z.string(),
  status: ZSubscriptionStatus,
  customerEmail: z.string(),
  paymentMethod: z.string(),
  currentPeriodStart: ZTimestamp,
  currentPeriodEnd: ZTimestamp,
  trialEnd: ZTimestamp.nullable(),
  cancelAtPeriodEnd: z.boolean(),
  canceledAt: ZTimestamp.nullable(),
  endedAt: ZTimestamp.nullable(),
  pauseAtPeriodEnd: z.boolean().meta({
    description:
      'A pause is scheduled: it becomes `paused` at `currentPeriodEnd` (and resumes by itself at `resumesAt`, when set)',
  }),
  pausedAt: ZTimestamp.nullable(),
  resumesAt: ZTimestamp.nullable(),
  pastDueAt: ZTimestamp.nullable(),
  cancellationReason: ZCancellationReason.nullable(),
  cancellationComment: z
    .string()
    .nullable()
    .meta({ description: 'What the buyer wrote when they cancelled from their customer area, if anything' }),
  pendingUpdate: ZPendingUpdate.nullable(),
  latestOrderId: z.string().nullable().meta({ description: '`ORD-<n>` of the last order of this subscription' }),
  clockTime: ZTimestamp.nullable().meta({ description: "A test subscription's clock; null for a live one" }),
  createdAt: ZTimestamp,
  updatedAt: ZTimestamp,
});
export type TSubscription = z.infer<typeof ZSubscription>;

export const ZListSubscriptionsQuery = z.strictObject({
  storeId: ZId,
  status: ZSubscriptionStatus.optional(),
  productId: ZId.optional(),
  customerEmail: z.string().trim().toLowerCase().min(3).max(320).optional(),
  limit: queryInt(z.number().int().min(1).max(100)).optional(),
  cursor: z.string().min(1).max(200).optional(),
});
export type TListSubscriptionsQuery = z.infer<typeof ZListSubscriptionsQuery>;

export const ZSubscriptionList = z.object({
  subscriptions: z.array(ZSubscription),
  hasMore: z.boolean(),
  nextCursor: z.string().nullable(),
});

export const ZSubscriptionIdInput = z.strictObject({ storeId: ZId, subscriptionId: ZId });
export type TSubscriptionIdInput = z.infer<typeof ZSubscriptionIdInput>;

export const ZCancelSubscriptionInput = ZSubscriptionIdInput.extend({
  atPeriodEnd: z.boolean().optional().meta({ description: 'true (default): at the period end; false: now' }),
  reason: ZCancellationReason.exclude(['payment_failed']).optional().meta({
    description: 'Why; `requested_by_merchant` when left out',
  }),
});
export type TCancelSubscriptionInput = z.infer<typeof ZCancelSubscriptionInput>;

export const ZPauseSubscriptionInput = ZSubscriptionIdInput.extend({
  resumesAt: z.iso
    .datetime({ offset: true })
    .optional()
    .meta({ description: 'When it resumes by itself; after the current period end' }),
});
export type TPauseSubscriptionInput = z.infer<typeof ZPauseSubscriptionInput>;

export const ZUpdateSubscriptionInput = ZSubscriptionIdInput.extend({
  planId: ZId.optional(),
  quantity: z.number().int().min(1).max(100).optional(),
  prorate: z.boolean().optional().meta({
    description: 'true (default): now, the unused part credited; false: at the next renewal (`pendingUpdate`)',
  }),
});
export type TUpdateSubscriptionInput = z.infer<typeof ZUpdateSubscriptionInput>;

/**
 * What a change of plan or seats would do, asked before making it (`GET .../preview-update`):
 * computed by the server with the very move the PATCH makes (prorated, the default), at the
 * subscription's own time (a test subscription's clock), so the amount shown is the one charged.
 */
export const ZPreviewSubscriptionUpdateQuery = ZSubscriptionIdInput.extend({
  planId: ZId.optional(),
  quantity: queryInt(z.number().int().min(1).max(100)).optional(),
});
export type TPreviewSubscriptionUpdateQuery = z.infer<typeof ZPreviewSubscriptionUpdateQuery>;

export const ZSubscriptionUpdatePreview = z.object({
  planId: ZId,
  interval: ZSubscriptionInterval,
  intervalCount: z.number().int().min(1).max(12),
  quantity: z.number().int().min(1).max(100).meta({ description: 'Seats' }),
  amountDue: z.number().meta({
    description:
      'Charged now on the saved payment method in one `subscription_update` order: the new terms for the rest of the period (a whole new period when the interval changes) less the unused part of the current one; 0 when nothing is charged (a trial, or a net credit)',
  }),
  creditBalance: z.number().meta({
    description: 'The credit balance after the change (a downgrade adds its net credit; spent by the next renewals)',
  }),
  amount: z.number().meta({ description: 'What each renewal charges after the change' }),
  currency: z.string(),
  currentPeriodEnd: ZTimestamp.meta({
    description: 'The period end after the change (a new period starts now when the interval changes)',
  }),
  nextChargeAt: ZTimestamp.nullable().meta({
    description:
      'When the next renewal charges: the period end (the trial end in a trial); null when it is set to cancel or pause then',
  }),
});
export type TSubscriptionUpdatePreview = z.infer<typeof ZSubscriptionUpdatePreview>;

export const ZAdvanceSubscriptionInput = ZSubscriptionIdInput.extend({
  to: z.iso.datetime({ offset: true }).meta({
    description: "The test clock's new time: after its current `clockTime`, at most 2 years later",
  }),
});
export type TAdvanceSubscriptionInput = z.infer<typeof ZAdvanceSubscriptionInput>;

/** What advancing a test subscription's clock did, once all of it is recorded. */
export const ZAdvanceSubscriptionResult = z.object({
  subscription: ZSubscription,
  orders: z
    .array(ZSellerOrderDetail)
    .meta({ description: 'The orders it created, oldest first, as the orders API shows them' }),
  events: z.array(ZWebhookEvent).meta({ description: 'The event types it emitted, in order' }),
});
export type TAdvanceSubscriptionResult = z.infer<typeof ZAdvanceSubscriptionResult>;

/**
 * Home's recurring figures (docs/decisions.md, "MRR"): monthly recurring revenue of the active and
 * past-due subscriptions of the caller's mode in the store currency (unit price x seats, per month:
 * a yearly plan /12, every `intervalCount` honoured), how many those are, and how many ended in the
 * last 30 days; then the MRR at the end of each of the last 11 months and now.
 */
export const ZSubscriptionStats = z.object({
  currency: z.string().meta({ description: 'The store currency; subscriptions in another currency are not in `mrr`' }),
  mrr: z
    .number()
    .meta({ description: 'Monthly recurring revenue now, in the store currency (exact to its minor unit)' }),
  activeSubscriptions: ZCount.meta({ description: 'Subscriptions that are active or past due' }),
  churned30Days: ZCount.meta({ description: 'Subscriptions that ended (canceled) in the last 30 days' }),
  monthly: z
    .array(
      z.object({
        month: z.string().meta({ description: 'The UTC month, `YYYY-MM`' }),
        mrr: z.number().meta({ description: "The MRR at the month's end (the current month: now)" }),
      }),
    )
    .meta({ description: 'The last 12 UTC months, oldest first, the current month last' }),
});
export type TSubscriptionStats = z.infer<typeof ZSubscriptionStats>;

/** A product's plans with their count of live subscriptions (the product page). */
export const ZPlanSubscriptionCounts = z.object({
  plans: z.array(
    z.object({
      planId: ZId,
      active: ZCount.meta({ description: 'Subscriptions on the plan that are active or past due' }),
      trialing: ZCount.meta({ description: 'Subscriptions on the plan in their trial' }),
    }),
  ),
});
export type TPlanSubscriptionCounts = z.infer<typeof ZPlanSubscriptionCounts>;

/** The buyer's own subscriptions in their customer area (`/api/customer/subscriptions...`). */
export const ZCustomerSubscriptionIdInput = z.strictObject({ subscriptionId: ZId });
export type TCustomerSubscriptionIdInput = z.infer<typeof ZCustomerSubscriptionIdInput>;

export const ZCustomerCancelSubscriptionInput = ZCustomerSubscriptionIdInput.extend({
  comment: z
    .string()
    .trim()
    .max(500, 'Keep the reason under 500 characters.')
    .optional()
    .meta({ description: "Why, in the buyer's words (optional); the seller sees it" }),
});
export type TCustomerCancelSubscriptionInput = z.infer<typeof ZCustomerCancelSubscriptionInput>;

/** One of the subscription's orders, as the buyer's page lists them (each opens its order page). */
export const ZCustomerSubscriptionOrder = z.object({
  id: z.string().meta({ description: 'The order page is `/orders/{id}`' }),
  orderId: z.string().meta({ description: '`ORD-<n>`' }),
  status: ZOrderStatus,
  billingReason: ZBillingReason,
  price: z.number(),
  currency: z.string(),
  createdAt: ZTimestamp,
});

export const ZCustomerSubscription = z.object({
  id: ZId,
  livemode: ZLivemode,
  productName: z.string(),
  interval: ZSubscriptionInterval,
  intervalCount: z.number().int().min(1).max(12),
  quantity: z.number().int().min(1).max(100),
  amount: z.number().meta({ description: 'What the next renewal charges' }),
  currency: z.string(),
  status: ZSubscriptionStatus,
  paymentMethod: z.string(),
  currentPeriodEnd: ZTimestamp,
  nextChargeAt: ZTimestamp.nullable().meta({
    description:
      'When `amount` is next charged: the renewal, a past-due retry, or the end of a pause (`resumesAt`); null when none is scheduled (cancelling, paused with no end, ended)',
  }),
  trialEnd: ZTimestamp.nullable(),
  cancelAtPeriodEnd: z.boolean(),
  endsAt: ZTimestamp.nullable().meta({ description: 'When a scheduled cancel ends it (the period end); else null' }),
  pausesAt: ZTimestamp.nullable().meta({
    description: "When the seller's scheduled pause starts (the period end); else null",
  }),
  endedAt: ZTimestamp.nullable(),
  pastDueAt: ZTimestamp.nullable(),
  orders: z
    .array(ZCustomerSubscriptionOrder)
    .meta({ description: 'Its latest orders, newest first (up to 24): the first payment and each renewal' }),
  createdAt: ZTimestamp,
});
export type TCustomerSubscription = z.infer<typeof ZCustomerSubscription>;

export const ZCustomerSubscriptionList = z.object({ subscriptions: z.array(ZCustomerSubscription) });
export type TCustomerSubscriptionList = z.infer<typeof ZCustomerSubscriptionList>;

/** Where the buyer goes next: the gateway's page for a new card, or the unpaid renewal's checkout. */
export const ZCustomerSubscriptionLink = z.object({
  url: z.string().meta({ description: 'Open it in the browser' }),
});
export type TCustomerSubscriptionLink = z.infer<typeof ZCustomerSubscriptionLink>;
