/**
 * The seller's subscriptions for the merchant API (Bearer key, subscription scopes, capped by
 * viewOrders / editOrders) and the dashboard (session with those permissions), each operation
 * declared once for both (storeResource). Changing the plan, resuming and a test subscription's
 * clock run through the billing flows (flows/renew-subscription.ts, flows/advance-subscription.ts).
 */
import {
  ZAdvanceSubscriptionInput,
  ZAdvanceSubscriptionResult,
  ZCancelSubscriptionInput,
  ZListSubscriptionsQuery,
  ZPauseSubscriptionInput,
  ZPlanSubscriptionCounts,
  ZPreviewSubscriptionUpdateQuery,
  ZProductIdInput,
  ZStoreIdInput,
  ZSubscription,
  ZSubscriptionIdInput,
  ZSubscriptionList,
  ZSubscriptionStats,
  ZSubscriptionUpdatePreview,
  ZUpdateSubscriptionInput,
} from '@svc/schemas';
import { router, storeProcedure, storeResource } from '../../trpc/procedures.js';
import { planSubscriptionCounts, subscriptionStats } from '../../modules/subscriptions/subscription-stats.js';
import {
  getSubscription,
  listSubscriptions,
  pauseSubscription,
} from '../../modules/subscriptions/subscriptions.service.js';
import { advanceSubscription } from '../../flows/advance-subscription.js';
import {
  cancelSubscriptionNow,
  previewSubscriptionUpdate,
  resumeSubscription,
  updateSubscription,
} from '../../flows/renew-subscription.js';

const MERCHANT = '/merchant/v1/stores/{storeId}/subscriptions';
const tags = ['merchant: subscriptions'];
const dashboard = { tags: ['dashboard'] };
const one = `${MERCHANT}/{subscriptionId}` as const;

const read = storeResource({ scope: 'subscription:read', permission: 'viewOrders' });
const write = storeResource({ scope: 'subscription:write', permission: 'editOrders' });
const dashboardRead = storeProcedure('viewOrders');

export const subscriptionsRouter = router({
  /** Home's recurring figures: MRR, active and churned counts (one aggregate) and the 12-month MRR history. */
  dashboardStats: dashboardRead
    .meta({
      openapi: {
        method: 'GET',
        path: '/dashboard/stores/{storeId}/subscription-stats',
        tags: dashboard.tags,
        summary:
          "MRR of the active and past-due subscriptions (the store's currency), their count, those ended in the last 30 days, and the MRR of the last 12 months",
      },
      errors: ['not_found'],
    })
    .input(ZStoreIdInput)
    .output(ZSubscriptionStats)
    .query(({ ctx, input }) => subscriptionStats(ctx, input)),
  /** The product page: each plan's live subscriptions (one grouped statement). */
  dashboardPlanCounts: dashboardRead
    .meta({
      openapi: {
        method: 'GET',
        path: '/dashboard/stores/{storeId}/products/{productId}/plan-subscriptions',
        tags: dashboard.tags,
        summary:
          "The product's plans that have live subscriptions, with the count of active (or past-due) and trialing ones",
      },
      errors: ['not_found'],
    })
    .input(ZProductIdInput)
    .output(ZPlanSubscriptionCounts)
    .query(({ ctx, input }) => planSubscriptionCounts(ctx, input)),
  list: read
    .meta({
      openapi: {
        method: 'GET',
        path: MERCHANT,
        tags,
        summary: 'List subscriptions, newest first (by status, product or customer email)',
      },
      dashboard,
      errors: [],
    })
    .input(ZListSubscriptionsQuery)
    .output(ZSubscriptionList)
    .query(({ ctx, input }) => listSubscriptions(ctx, input)),
  get: read
    .meta({
      openapi: { method: 'GET', path: one, tags, summary: 'A subscription' },
      dashboard,
      errors: ['not_found'],
    })
    .input(ZSubscriptionIdInput)
    .output(ZSubscription)
    .query(({ ctx, input }) => getSubscription(ctx, input)),
  cancel: write
    .meta({
      openapi: {
        method: 'POST',
        path: `${one}/cancel`,
        tags,
        summary: 'Cancel a subscription at the period end (default) or now',
      },
      dashboard,
      errors: ['not_found', 'invalid_transition'],
    })
    .input(ZCancelSubscriptionInput)
    .output(ZSubscription)
    .mutation(({ ctx, input }) => cancelSubscriptionNow(ctx, input)),
  pause: write
    .meta({
      openapi: {
        method: 'POST',
        path: `${one}/pause`,
        tags,
        summary: "Pause a subscription from the current period's end, until resumesAt or a resume",
      },
      dashboard,
      errors: ['not_found', 'invalid_transition'],
    })
    .input(ZPauseSubscriptionInput)
    .output(ZSubscription)
    .mutation(({ ctx, input }) => pauseSubscription(ctx, input)),
  previewUpdate: read
    .meta({
      openapi: {
        method: 'GET',
        path: `${one}/preview-update`,
        tags,
        summary: 'Preview a change of plan or seats: what it would charge now and bill afterwards',
        description:
          "Computed as the PATCH computes it (prorated, its default) at the subscription's own time, without changing anything: `amountDue` is what the PATCH with the same `planId` and `quantity` would charge now on the saved payment method. A change the PATCH would refuse is refused the same way (409 `invalid_transition`, 400).",
      },
      dashboard,
      errors: ['not_found', 'invalid_transition'],
    })
    .input(ZPreviewSubscriptionUpdateQuery)
    .output(ZSubscriptionUpdatePreview)
    .query(({ ctx, input }) => previewSubscriptionUpdate(ctx, input)),
  update: write
    .meta({
      openapi: {
        method: 'PATCH',
        path: one,
        tags,
        summary: 'Change the plan (of the same product) or the seats, prorated now (default) or at the next renewal',
        description:
          'With `prorate` (the default) the change applies now: the unused part of the period is credited and the new terms for the rest are charged on the saved payment method in one `subscription_update` order (a net credit goes to `creditBalance` and is spent on the next renewal); a declined charge changes nothing (402 `payment_failed`). With `prorate: false` it applies at the next renewal (`pendingUpdate`). In a trial it applies at once.',
      },
      dashboard,
      errors: ['not_found', 'invalid_transition', 'payment_failed', 'gateway_error'],
    })
    .input(ZUpdateSubscriptionInput)
    .output(ZSubscription)
    .mutation(({ ctx, input }) => updateSubscription(ctx, input)),
  resume: write
    .meta({
      openapi: {
        method: 'POST',
        path: `${one}/resume`,
        tags,
        summary:
          'Resume a subscription: undo a scheduled cancel or pause, or resume a paused one now (charging its new period)',
      },
      dashboard,
      errors: ['not_found', 'invalid_transition', 'gateway_error'],
    })
    .input(ZSubscriptionIdInput)
    .output(ZSubscription)
    .mutation(({ ctx, input }) => resumeSubscription(ctx, input)),
  advance: write
    .meta({
      openapi: {
        method: 'POST',
        path: `${one}/advance`,
        tags,
        summary: "Advance a test subscription's clock, running everything due on the way",
        description:
          'Test mode only (a live key is 403 `test_key_required`). Moves the clock forward (after its `clockTime`, at most 2 years) and runs, in order, the trial end, renewals charged on the saved test card, dunning retries, notices and their mail, scheduled cancels and pauses and `resumesAt`; answers the subscription, the orders it created and the event types it emitted, once all are recorded.',
      },
      dashboard,
      errors: ['not_found', 'test_key_required', 'gateway_error'],
    })
    .input(ZAdvanceSubscriptionInput)
    .output(ZAdvanceSubscriptionResult)
    .mutation(({ ctx, input }) => advanceSubscription(ctx, input)),
});
