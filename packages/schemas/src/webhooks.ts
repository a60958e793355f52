/** Outgoing webhooks: endpoints, their delivery log, and the events they carry. */
import { z } from 'zod';
import { ZId, ZSingleLine, ZTimestamp, ZCount, ZLivemode } from './common.js';
import { queryInt } from './query.js';

export const WEBHOOK_EVENTS = [
  'order.created',
  'order.paid',
  'order.completed',
  'order.refunded',
  'product.created',
  'product.updated',
  'product.deleted',
  'license.activated',
  'license.deactivated',
  'license.disabled',
  'license.enabled',
  'subscription.created',
  'subscription.updated',
  'subscription.renewed',
  'subscription.past_due',
  'subscription.canceled',
  'subscription.uncanceled',
  'subscription.paused',
  'subscription.resumed',
  'subscription.ended',
  'subscription.trial_will_end',
] as const;
export const ZWebhookEvent = z.enum(WEBHOOK_EVENTS);
export type TWebhookEvent = z.infer<typeof ZWebhookEvent>;

/** Sent only by the test operation. */
export const WEBHOOK_TEST_EVENT = 'webhook.test';

/** Every event name the service sends: the subscribable ones and the test ping. */
export const ZEventName = z.enum([...WEBHOOK_EVENTS, WEBHOOK_TEST_EVENT]);
export type TEventName = z.infer<typeof ZEventName>;

export const ZWebhook = z.object({
  id: z.string(),
  storeId: z.string(),
  livemode: ZLivemode,
  name: z.string(),
  url: z.string(),
  secretPrefix: z.string(),
  events: z.array(ZWebhookEvent),
  enabled: z.boolean(),
  failureCount: ZCount,
  disabledAt: ZTimestamp.nullable(),
  /** Why svc disabled it after failed deliveries; null when it is enabled or a member disabled it. */
  disabledReason: z.string().nullable(),
  /** Null until the first successful delivery. */
  lastDeliveredAt: ZTimestamp.nullable(),
  createdAt: ZTimestamp,
  updatedAt: ZTimestamp,
});
export type TWebhook = z.infer<typeof ZWebhook>;

/** Create and rotate answers: the only times the signing secret is shown. */
export const ZWebhookWithSecret = ZWebhook.extend({ secret: z.string() });
export const ZWebhookList = z.object({ webhooks: z.array(ZWebhook) });

const ZEvents = z
  .array(ZWebhookEvent)
  .min(1)
  .max(WEBHOOK_EVENTS.length)
  .refine((events) => new Set(events).size === events.length, 'Choose each event once.');

export const ZCreateWebhookInput = z.strictObject({
  storeId: ZId,
  name: ZSingleLine(100),
  url: z.string().min(1).max(2048),
  events: ZEvents,
});

export const ZUpdateWebhookInput = z.strictObject({
  storeId: ZId,
  webhookId: ZId,
  name: ZSingleLine(100).optional(),
  url: z.string().min(1).max(2048).optional(),
  events: ZEvents.optional(),
  enabled: z.boolean().optional(),
});

export const ZWebhookIdInput = z.strictObject({ storeId: ZId, webhookId: ZId });

export const DELIVERY_STATUSES = ['pending', 'success', 'failed', 'queued', 'skipped'] as const;
export const ZDeliveryStatus = z.enum(DELIVERY_STATUSES);

export const ZWebhookDelivery = z.object({
  id: z.string(),
  webhookId: z.string(),
  livemode: ZLivemode,
  eventId: z.string(),
  event: ZEventName,
  attempt: ZCount,
  status: ZDeliveryStatus,
  /**
   * The headers the attempt was sent with, signatures included (each is an HMAC of this body at
   * this time: it tells nothing of the secret). Null while queued or in flight, when nothing was
   * sent (the URL was refused, the secret unreadable), and for attempts logged before they were kept.
   */
  requestHeaders: z.record(z.string(), z.string()).nullable(),
  responseCode: z.number().int().min(100).max(999).nullable(),
  responseBodyPreview: z.string().nullable(),
  errorMessage: z.string().nullable(),
  durationMs: ZCount.nullable(),
  createdAt: ZTimestamp,
});
export type TWebhookDelivery = z.infer<typeof ZWebhookDelivery>;

export const ZDeliveriesQuery = z.strictObject({
  storeId: ZId,
  webhookId: ZId,
  limit: queryInt(z.number().int().min(1).max(100)).optional(),
  cursor: z.string().min(1).max(200).optional(),
  status: ZDeliveryStatus.optional(),
  event: z.string().min(1).max(50).optional(),
});
export const ZDeliveryList = z.object({
  deliveries: z.array(ZWebhookDelivery),
  hasMore: z.boolean(),
  nextCursor: z.string().nullable(),
});
export const ZDeliveryResult = z.object({ delivery: ZWebhookDelivery });
export const ZRetryDeliveryInput = z.strictObject({ storeId: ZId, webhookId: ZId, deliveryId: ZId });
export const ZReplayInput = z
  .strictObject({
    storeId: ZId,
    webhookId: ZId,
    from: z.iso.datetime({ offset: true }),
    to: z.iso.datetime({ offset: true }),
    status: z.enum(['failed']).optional(),
  })
  .refine((input) => Date.parse(input.from) <= Date.parse(input.to), {
    message: '`from` is after `to`',
    path: ['from'],
  });
export const ZReplayResult = z.object({ queued: ZCount });

/** An event id (`evt_<cuid2>`). */
export const ZEventId = z
  .string()
  .min(1)
  .max(40)
  .regex(/^evt_[a-z0-9]+$/, 'not an event id');

/** An endpoint's finished attempts of the last 24 hours, hour by hour (oldest first, 24 buckets). */
export const ZWebhookStats = z.object({
  hours: z.array(z.object({ hour: ZTimestamp, success: ZCount, failed: ZCount })),
});
/** Every attempt one event made to the store's endpoints, oldest first. */
export const ZEventDeliveriesInput = z.strictObject({ storeId: ZId, eventId: ZEventId });
export const ZEventDeliveries = z.object({ deliveries: z.array(ZWebhookDelivery) });
/** Send one event (again) to one endpoint of its store. */
export const ZResendEventInput = z.strictObject({ storeId: ZId, webhookId: ZId, eventId: ZEventId });
