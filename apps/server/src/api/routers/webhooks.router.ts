/**
 * The webhook API for merchants under /merchant/v1 (Bearer key with webhook scopes, capped by
 * manageSettings) and the dashboard (session with manageSettings), each operation declared once
 * for both (storeResource); and three procedures only the dashboard has.
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
import { router, storeProcedure, storeResource } from '../../trpc/procedures.js';
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

const MERCHANT = '/merchant/v1/stores/{storeId}/webhooks';
const tags = ['merchant: webhooks'];
const dashboard = { tags: ['dashboard: webhooks'] };
const one = `${MERCHANT}/{webhookId}` as const;

const read = storeResource({ scope: 'webhook:read', permission: 'manageSettings' });
const write = storeResource({ scope: 'webhook:write', permission: 'manageSettings' });
/** Deleting a webhook has its own scope (webhook:delete). */
const remove = storeResource({ scope: 'webhook:delete', permission: 'manageSettings' });

/**
 * What only the dashboard's screens ask for (the developer's corner, issue 29): the hourly chart,
 * the deliveries of one event across endpoints, and sending one event to one endpoint.
 */
const settings = storeProcedure('manageSettings');
const DASHBOARD = '/dashboard/stores/{storeId}';

export const webhooksRouter = router({
  list: read
    .meta({
      openapi: { method: 'GET', path: MERCHANT, tags, summary: "The store's webhooks, oldest first" },
      dashboard,
      errors: [],
    })
    .input(ZStoreIdInput)
    .output(ZWebhookList)
    .query(async ({ ctx, input }) => ({ webhooks: await listWebhooks(ctx, input.storeId) })),
  create: write
    .meta({
      openapi: {
        method: 'POST',
        path: MERCHANT,
        tags,
        summary: 'Register a receiver; the signing secret is shown once',
      },
      dashboard,
      successStatus: 201,
      errors: ['url_not_allowed', 'webhook_limit_reached'],
    })
    .input(ZCreateWebhookInput)
    .output(ZWebhookWithSecret)
    .mutation(({ ctx, input }) => createWebhook(ctx, input)),
  get: read
    .meta({ openapi: { method: 'GET', path: one, tags, summary: 'One webhook' }, dashboard, errors: ['not_found'] })
    .input(ZWebhookIdInput)
    .output(ZWebhook)
    .query(({ ctx, input }) => getWebhook(ctx, input)),
  update: write
    .meta({
      openapi: { method: 'PATCH', path: one, tags, summary: 'Change name, url, events or enabled' },
      dashboard,
      errors: ['not_found', 'url_not_allowed'],
    })
    .input(ZUpdateWebhookInput)
    .output(ZWebhook)
    .mutation(({ ctx, input }) => updateWebhook(ctx, input)),
  delete: remove
    .meta({
      openapi: { method: 'DELETE', path: one, tags, summary: 'Delete a webhook' },
      dashboard,
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
      dashboard,
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
      dashboard,
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
      dashboard,
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
      dashboard,
      errors: ['not_found', 'webhook_disabled'],
    })
    .input(ZReplayInput)
    .output(ZReplayResult)
    .mutation(({ ctx, input }) => replayWebhook(ctx, input)),
  deliveries: read
    .meta({
      openapi: { method: 'GET', path: `${one}/deliveries`, tags, summary: 'The delivery log, newest first' },
      dashboard,
      errors: ['not_found'],
    })
    .input(ZDeliveriesQuery)
    .output(ZDeliveryList)
    .query(({ ctx, input }) => listDeliveries(ctx, input)),

  dashboardStats: settings
    .meta({
      openapi: {
        method: 'GET',
        path: `${DASHBOARD}/webhooks/{webhookId}/stats`,
        tags: dashboard.tags,
        summary: "The endpoint's successful and failed attempts in each of the last 24 hours",
      },
      errors: ['not_found'],
    })
    .input(ZWebhookIdInput)
    .output(ZWebhookStats)
    .query(({ ctx, input }) => webhookStats(ctx, input)),
  dashboardEventDeliveries: settings
    .meta({
      openapi: {
        method: 'GET',
        path: `${DASHBOARD}/events/{eventId}/deliveries`,
        tags: dashboard.tags,
        summary: "Every attempt an event made to the store's endpoints, oldest first",
      },
      errors: ['not_found'],
    })
    .input(ZEventDeliveriesInput)
    .output(ZEventDeliveries)
    .query(({ ctx, input }) => listEventDeliveries(ctx, input)),
  dashboardResend: settings
    .meta({
      openapi: {
        method: 'POST',
        path: `${DASHBOARD}/webhooks/{webhookId}/resend`,
        tags: dashboard.tags,
        summary: 'Queue one event of the store for this endpoint now, as its next attempt',
      },
      errors: ['not_found', 'webhook_disabled'],
    })
    .input(ZResendEventInput)
    .output(ZDeliveryResult)
    .mutation(({ ctx, input }) => resendEvent(ctx, input)),
});
