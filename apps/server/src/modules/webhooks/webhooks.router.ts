/**
 * The webhook API, twice: for merchants under /merchant/v1 (Bearer key with webhook
 * scopes, capped by manageSettings) and for the dashboard (session with manageSettings).
 * Both call the same services.
 */
import {
  ZCreateWebhookInput,
  ZDeliveriesQuery,
  ZDeliveryList,
  ZDeliveryResult,
  ZReplayInput,
  ZReplayResult,
  ZRetryDeliveryInput,
  ZStoreIdInput,
  ZUpdateWebhookInput,
  ZWebhook,
  ZWebhookIdInput,
  ZWebhookList,
  ZWebhookWithSecret,
} from '@svc/schemas';
import { z } from 'zod';
import { merchantProcedure, storeProcedure } from '../../trpc/guards.js';
import { router } from '../../trpc/procedures.js';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listDeliveries,
  listWebhooks,
  replayWebhook,
  retryWebhookDelivery,
  rotateWebhookSecret,
  testWebhook,
  updateWebhook,
} from './webhooks.service.js';

const merchant = ['merchant: webhooks'];
const dashboard = ['dashboard: webhooks'];
const M = '/merchant/v1/stores/{storeId}/webhooks';
const D = '/dashboard/stores/{storeId}/webhooks';
const settings = () => storeProcedure('manageSettings');

export const webhooksRouter = router({
  list: merchantProcedure('webhook:read')
    .meta({ openapi: { method: 'GET', path: M, tags: merchant, summary: "The store's webhooks, oldest first" }, auth: 'apiKey' })
    .input(ZStoreIdInput)
    .output(ZWebhookList)
    .query(async ({ ctx, input }) => ({ webhooks: await listWebhooks(ctx, input.storeId) })),
  create: merchantProcedure('webhook:write')
    .meta({ openapi: { method: 'POST', path: M, tags: merchant, summary: 'Register a receiver; the signing secret is shown once' }, auth: 'apiKey', successStatus: 201 })
    .input(ZCreateWebhookInput)
    .output(ZWebhookWithSecret)
    .mutation(({ ctx, input }) => createWebhook(ctx, input)),
  get: merchantProcedure('webhook:read')
    .meta({ openapi: { method: 'GET', path: `${M}/{webhookId}`, tags: merchant, summary: 'One webhook' }, auth: 'apiKey' })
    .input(ZWebhookIdInput)
    .output(ZWebhook)
    .query(({ ctx, input }) => getWebhook(ctx, input)),
  update: merchantProcedure('webhook:write')
    .meta({ openapi: { method: 'PATCH', path: `${M}/{webhookId}`, tags: merchant, summary: 'Change name, url, events or enabled' }, auth: 'apiKey' })
    .input(ZUpdateWebhookInput)
    .output(ZWebhook)
    .mutation(({ ctx, input }) => updateWebhook(ctx, input)),
  delete: merchantProcedure('webhook:delete')
    .meta({ openapi: { method: 'DELETE', path: `${M}/{webhookId}`, tags: merchant, summary: 'Delete a webhook' }, auth: 'apiKey', successStatus: 204 })
    .input(ZWebhookIdInput)
    .output(z.void())
    .mutation(({ ctx, input }) => deleteWebhook(ctx, input)),
  rotate: merchantProcedure('webhook:write')
    .meta({ openapi: { method: 'POST', path: `${M}/{webhookId}/rotate`, tags: merchant, summary: 'A new signing secret (shown once); the old one stops verifying' }, auth: 'apiKey' })
    .input(ZWebhookIdInput)
    .output(ZWebhookWithSecret)
    .mutation(({ ctx, input }) => rotateWebhookSecret(ctx, input)),
  test: merchantProcedure('webhook:write')
    .meta({ openapi: { method: 'POST', path: `${M}/{webhookId}/test`, tags: merchant, summary: 'Send webhook.test now; answers the attempt (a disabled endpoint is 400)' }, auth: 'apiKey' })
    .input(ZWebhookIdInput)
    .output(ZDeliveryResult)
    .mutation(({ ctx, input }) => testWebhook(ctx, input)),
  retry: merchantProcedure('webhook:write')
    .meta({ openapi: { method: 'POST', path: `${M}/{webhookId}/deliveries/{deliveryId}/retry`, tags: merchant, summary: "Send that attempt's event again now" }, auth: 'apiKey' })
    .input(ZRetryDeliveryInput)
    .output(ZDeliveryResult)
    .mutation(({ ctx, input }) => retryWebhookDelivery(ctx, input)),
  replay: merchantProcedure('webhook:write')
    .meta({ openapi: { method: 'POST', path: `${M}/{webhookId}/replay`, tags: merchant, summary: 'Queue again every subscribed event of a time range (optionally only failed ones)' }, auth: 'apiKey' })
    .input(ZReplayInput)
    .output(ZReplayResult)
    .mutation(({ ctx, input }) => replayWebhook(ctx, input)),
  deliveries: merchantProcedure('webhook:read')
    .meta({ openapi: { method: 'GET', path: `${M}/{webhookId}/deliveries`, tags: merchant, summary: 'The delivery log, newest first' }, auth: 'apiKey' })
    .input(ZDeliveriesQuery)
    .output(ZDeliveryList)
    .query(({ ctx, input }) => listDeliveries(ctx, input)),

  dashboardList: settings()
    .meta({ openapi: { method: 'GET', path: D, tags: dashboard, summary: "The store's webhooks", protect: false }, auth: 'session' })
    .input(ZStoreIdInput)
    .output(ZWebhookList)
    .query(async ({ ctx, input }) => ({ webhooks: await listWebhooks(ctx, input.storeId) })),
  dashboardCreate: settings()
    .meta({ openapi: { method: 'POST', path: D, tags: dashboard, summary: 'Register a receiver', protect: false }, auth: 'session', successStatus: 201 })
    .input(ZCreateWebhookInput)
    .output(ZWebhookWithSecret)
    .mutation(({ ctx, input }) => createWebhook(ctx, input)),
  dashboardGet: settings()
    .meta({ openapi: { method: 'GET', path: `${D}/{webhookId}`, tags: dashboard, summary: 'One webhook', protect: false }, auth: 'session' })
    .input(ZWebhookIdInput)
    .output(ZWebhook)
    .query(({ ctx, input }) => getWebhook(ctx, input)),
  dashboardUpdate: settings()
    .meta({ openapi: { method: 'PATCH', path: `${D}/{webhookId}`, tags: dashboard, summary: 'Change a webhook', protect: false }, auth: 'session' })
    .input(ZUpdateWebhookInput)
    .output(ZWebhook)
    .mutation(({ ctx, input }) => updateWebhook(ctx, input)),
  dashboardDelete: settings()
    .meta({ openapi: { method: 'DELETE', path: `${D}/{webhookId}`, tags: dashboard, summary: 'Delete a webhook', protect: false }, auth: 'session', successStatus: 204 })
    .input(ZWebhookIdInput)
    .output(z.void())
    .mutation(({ ctx, input }) => deleteWebhook(ctx, input)),
  dashboardRotate: settings()
    .meta({ openapi: { method: 'POST', path: `${D}/{webhookId}/rotate`, tags: dashboard, summary: 'A new signing secret', protect: false }, auth: 'session' })
    .input(ZWebhookIdInput)
    .output(ZWebhookWithSecret)
    .mutation(({ ctx, input }) => rotateWebhookSecret(ctx, input)),
  dashboardTest: settings()
    .meta({ openapi: { method: 'POST', path: `${D}/{webhookId}/test`, tags: dashboard, summary: 'Send webhook.test now', protect: false }, auth: 'session' })
    .input(ZWebhookIdInput)
    .output(ZDeliveryResult)
    .mutation(({ ctx, input }) => testWebhook(ctx, input)),
  dashboardRetry: settings()
    .meta({ openapi: { method: 'POST', path: `${D}/{webhookId}/deliveries/{deliveryId}/retry`, tags: dashboard, summary: 'Send an event again now', protect: false }, auth: 'session' })
    .input(ZRetryDeliveryInput)
    .output(ZDeliveryResult)
    .mutation(({ ctx, input }) => retryWebhookDelivery(ctx, input)),
  dashboardReplay: settings()
    .meta({ openapi: { method: 'POST', path: `${D}/{webhookId}/replay`, tags: dashboard, summary: 'Queue a time range again', protect: false }, auth: 'session' })
    .input(ZReplayInput)
    .output(ZReplayResult)
    .mutation(({ ctx, input }) => replayWebhook(ctx, input)),
  dashboardDeliveries: settings()
    .meta({ openapi: { method: 'GET', path: `${D}/{webhookId}/deliveries`, tags: dashboard, summary: 'The delivery log', protect: false }, auth: 'session' })
    .input(ZDeliveriesQuery)
    .output(ZDeliveryList)
    .query(({ ctx, input }) => listDeliveries(ctx, input)),
});
