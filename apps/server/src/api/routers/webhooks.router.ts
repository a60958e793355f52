/**
 * The webhook API, built once for two surfaces: merchants under /merchant/v1 (Bearer key with
 * webhook scopes, capped by manageSettings) and the dashboard (session with manageSettings).
 * Both call the same services.
 */
import {
  ZCreateWebhookInput,
  ZDeliveriesQuery,
  ZDeliveryList,
  ZDeliveryResult,
  ZEventDeliveries,
  ZEventDeliveriesInput,
  ZReplayInput,
  ZReplayResult,
  ZResendEventInput,
  ZRetryDeliveryInput,
  ZStoreIdInput,
  ZUpdateWebhookInput,
  ZWebhook,
  ZWebhookIdInput,
  ZWebhookList,
  ZWebhookStats,
  ZWebhookWithSecret,
} from '@svc/schemas';
import { z } from 'zod';
import {
  merchantProcedure,
  router,
  storeProcedure,
  type GuardedBuilder,
  type ResourceSurface,
} from '../../trpc/procedures.js';
import {
  listDeliveries,
  listEventDeliveries,
  replayWebhook,
  resendEvent,
  retryWebhookDelivery,
  testWebhook,
  webhookStats,
} from '../../modules/webhooks/deliveries.service.js';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhooks,
  rotateWebhookSecret,
  updateWebhook,
} from '../../modules/webhooks/endpoints.service.js';

/** Deleting a webhook has its own scope (webhook:delete). */
interface WebhookSurface extends ResourceSurface {
  remove: GuardedBuilder;
}

function webhookRoutes({ read, write, remove, base, tags }: WebhookSurface) {
  const one = `${base}/{webhookId}` as const;
  return {
    list: read
      .meta({ openapi: { method: 'GET', path: base, tags, summary: "The store's webhooks, oldest first" }, errors: [] })
      .input(ZStoreIdInput)
      .output(ZWebhookList)
      .query(async ({ ctx, input }) => ({ webhooks: await listWebhooks(ctx, input.storeId) })),
    create: write
      .meta({
        openapi: { method: 'POST', path: base, tags, summary: 'Register a receiver; the signing secret is shown once' },
        successStatus: 201,
        errors: ['url_not_allowed', 'webhook_limit_reached'],
      })
      .input(ZCreateWebhookInput)
      .output(ZWebhookWithSecret)
      .mutation(({ ctx, input }) => createWebhook(ctx, input)),
    get: read
      .meta({ openapi: { method: 'GET', path: one, tags, summary: 'One webhook' }, errors: ['not_found'] })
      .input(ZWebhookIdInput)
      .output(ZWebhook)
      .query(({ ctx, input }) => getWebhook(ctx, input)),
    update: write
      .meta({
        openapi: { method: 'PATCH', path: one, tags, summary: 'Change name, url, events or enabled' },
        errors: ['not_found', 'url_not_allowed'],
      })
      .input(ZUpdateWebhookInput)
      .output(ZWebhook)
      .mutation(({ ctx, input }) => updateWebhook(ctx, input)),
    delete: remove
      .meta({
        openapi: { method: 'DELETE', path: one, tags, summary: 'Delete a webhook' },
        successStatus: 204,
        errors: ['not_found'],
      })
      .input(ZWebhookIdInput)
      .output(z.void())
      .mutation(({ ctx, input }) => deleteWebhook(ctx, input)),
    rotate: write
      .meta({
        openapi: {
          method: 'POST',
          path: `${one}/rotate`,
          tags,
          summary: 'A new signing secret (shown once); the old one stops verifying',
        },
        errors: ['not_found'],
      })
      .input(ZWebhookIdInput)
      .output(ZWebhookWithSecret)
      .mutation(({ ctx, input }) => rotateWebhookSecret(ctx, input)),
    test: write
      .meta({
        openapi: {
          method: 'POST',
          path: `${one}/test`,
          tags,
          summary: 'Send webhook.test now; answers the attempt (a disabled endpoint is 400)',
        },
        errors: ['not_found', 'webhook_disabled'],
      })
      .input(ZWebhookIdInput)
      .output(ZDeliveryResult)
      .mutation(({ ctx, input }) => testWebhook(ctx, input)),
    retry: write
      .meta({
        openapi: {
          method: 'POST',
          path: `${one}/deliveries/{deliveryId}/retry`,
          tags,
          summary: "Send that attempt's event again now",
        },
        errors: ['not_found', 'webhook_disabled'],
      })
      .input(ZRetryDeliveryInput)
      .output(ZDeliveryResult)
      .mutation(({ ctx, input }) => retryWebhookDelivery(ctx, input)),
    replay: write
      .meta({
        openapi: {
          method: 'POST',
          path: `${one}/replay`,
          tags,
          summary: 'Queue again every subscribed event of a time range (optionally only failed ones)',
        },
        errors: ['not_found', 'webhook_disabled'],
      })
      .input(ZReplayInput)
      .output(ZReplayResult)
      .mutation(({ ctx, input }) => replayWebhook(ctx, input)),
    deliveries: read
      .meta({
        openapi: { method: 'GET', path: `${one}/deliveries`, tags, summary: 'The delivery log, newest first' },
        errors: ['not_found'],
      })
      .input(ZDeliveriesQuery)
      .output(ZDeliveryList)
      .query(({ ctx, input }) => listDeliveries(ctx, input)),
  };
}

const merchant = webhookRoutes({
  read: merchantProcedure('webhook:read'),
  write: merchantProcedure('webhook:write'),
  remove: merchantProcedure('webhook:delete'),
  base: '/merchant/v1/stores/{storeId}/webhooks',
  tags: ['merchant: webhooks'],
});
const settings = storeProcedure('manageSettings');
const dashboard = webhookRoutes({
  read: settings,
  write: settings,
  remove: settings,
  base: '/dashboard/stores/{storeId}/webhooks',
  tags: ['dashboard: webhooks'],
});

/**
 * What only the dashboard's screens ask for (the developer's corner, issue 29): the hourly chart,
 * the deliveries of one event across endpoints, and sending one event to one endpoint.
 */
const dashboardBase = '/dashboard/stores/{storeId}';
const dashboardTags = ['dashboard: webhooks'];
const dashboardOnly = {
  stats: settings
    .meta({
      openapi: {
        method: 'GET',
        path: `${dashboardBase}/webhooks/{webhookId}/stats`,
        tags: dashboardTags,
        summary: "The endpoint's successful and failed attempts in each of the last 24 hours",
      },
      errors: ['not_found'],
    })
    .input(ZWebhookIdInput)
    .output(ZWebhookStats)
    .query(({ ctx, input }) => webhookStats(ctx, input)),
  eventDeliveries: settings
    .meta({
      openapi: {
        method: 'GET',
        path: `${dashboardBase}/events/{eventId}/deliveries`,
        tags: dashboardTags,
        summary: "Every attempt an event made to the store's endpoints, oldest first",
      },
      errors: ['not_found'],
    })
    .input(ZEventDeliveriesInput)
    .output(ZEventDeliveries)
    .query(({ ctx, input }) => listEventDeliveries(ctx, input)),
  resend: settings
    .meta({
      openapi: {
        method: 'POST',
        path: `${dashboardBase}/webhooks/{webhookId}/resend`,
        tags: dashboardTags,
        summary: 'Queue one event of the store for this endpoint now, as its next attempt',
      },
      errors: ['not_found', 'webhook_disabled'],
    })
    .input(ZResendEventInput)
    .output(ZDeliveryResult)
    .mutation(({ ctx, input }) => resendEvent(ctx, input)),
};

export const webhooksRouter = router({
  ...merchant,
  dashboardList: dashboard.list,
  dashboardCreate: dashboard.create,
  dashboardGet: dashboard.get,
  dashboardUpdate: dashboard.update,
  dashboardDelete: dashboard.delete,
  dashboardRotate: dashboard.rotate,
  dashboardTest: dashboard.test,
  dashboardRetry: dashboard.retry,
  dashboardReplay: dashboard.replay,
  dashboardDeliveries: dashboard.deliveries,
  dashboardStats: dashboardOnly.stats,
  dashboardEventDeliveries: dashboardOnly.eventDeliveries,
  dashboardResend: dashboardOnly.resend,
});
