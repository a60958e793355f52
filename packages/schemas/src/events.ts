/**
 * The outgoing events: one payload schema per event type. The outbox writer validates every
 * payload against these before it writes it (a payload that does not match is a bug: it throws),
 * and the OpenAPI document's `webhooks` section describes the same schemas, inside the body the
 * dispatcher sends: `{ id, event, createdAt, storeId, livemode, data }`.
 */
import { z } from 'zod';
import { ZProduct } from './catalog.js';
import { ZId, ZLivemode, ZTimestamp } from './common.js';
import { queryInt } from './query.js';
import { ZMerchantLicense } from './licenses.js';
import { ZOrderDetail } from './orders.js';
import { ZSubscription } from './subscriptions.js';
import { WEBHOOK_TEST_EVENT, ZEventId, ZEventName, type TWebhookEvent } from './webhooks.js';

const orderPayload = z.strictObject({ order: ZOrderDetail });
const productPayload = z.strictObject({ product: ZProduct });
const licensePayload = z.strictObject({ license: ZMerchantLicense });
const subscriptionPayload = z.strictObject({ subscription: ZSubscription });

/** The `data` of each event type. */
export const EVENT_PAYLOADS = {
  'order.created': orderPayload,
  'order.paid': orderPayload,
  'order.completed': orderPayload,
  'order.refunded': orderPayload,
  'product.created': productPayload,
  'product.updated': productPayload,
  'product.deleted': productPayload,
  'license.activated': licensePayload,
  'license.deactivated': licensePayload,
  'license.disabled': licensePayload,
  'license.enabled': licensePayload,
  'subscription.created': subscriptionPayload,
  'subscription.updated': subscriptionPayload,
  'subscription.renewed': subscriptionPayload,
  'subscription.past_due': subscriptionPayload,
  'subscription.canceled': subscriptionPayload,
  'subscription.uncanceled': subscriptionPayload,
  'subscription.paused': subscriptionPayload,
  'subscription.resumed': subscriptionPayload,
  'subscription.ended': subscriptionPayload,
  'subscription.trial_will_end': subscriptionPayload,
  [WEBHOOK_TEST_EVENT]: z.strictObject({ webhookId: ZId }),
} as const satisfies Record<TWebhookEvent | typeof WEBHOOK_TEST_EVENT, z.ZodType>;

export type TEventType = keyof typeof EVENT_PAYLOADS;

/** The body a webhook endpoint receives for an event of `type` (signed in X-Service-Signature). */
export function eventEnvelope<T extends TEventType>(type: T) {
  return z.strictObject({
    id: z.string().min(1).max(64).meta({ description: 'The event id (`evt_...`), the same on every attempt' }),
    event: z.literal(type),
    createdAt: ZTimestamp,
    storeId: ZId,
    livemode: ZLivemode,
    data: EVENT_PAYLOADS[type],
  });
}

// ---------------------------------------------------------------------------------------------
// The events API (merchant, scope event:read): the outbox's events of a store, as webhooks carry them.

/** Every event name, `webhook.test` included (the events API lists the test pings too). */
export const ZStoredEventType = ZEventName;

/**
 * Every event body, discriminated on `event`: each type's envelope (`eventEnvelope`) with its own
 * `data`. What a webhook endpoint receives and what the events API answers, so the OpenAPI
 * document and the SDK's types (generated from the router) state each event's payload.
 */
export const ZEventBody = z.discriminatedUnion('event', [
  eventEnvelope('order.created'),
  eventEnvelope('order.paid'),
  eventEnvelope('order.completed'),
  eventEnvelope('order.refunded'),
  eventEnvelope('product.created'),
  eventEnvelope('product.updated'),
  eventEnvelope('product.deleted'),
  eventEnvelope('license.activated'),
  eventEnvelope('license.deactivated'),
  eventEnvelope('license.disabled'),
  eventEnvelope('license.enabled'),
  eventEnvelope('subscription.created'),
  eventEnvelope('subscription.updated'),
  eventEnvelope('subscription.renewed'),
  eventEnvelope('subscription.past_due'),
  eventEnvelope('subscription.canceled'),
  eventEnvelope('subscription.uncanceled'),
  eventEnvelope('subscription.paused'),
  eventEnvelope('subscription.resumed'),
  eventEnvelope('subscription.ended'),
  eventEnvelope('subscription.trial_will_end'),
  eventEnvelope(WEBHOOK_TEST_EVENT),
]);
export type TEventBody = z.infer<typeof ZEventBody>;

/**
 * One event exactly as a webhook delivery carries it: the same keys in the same order and `data`
 * as stored, so its JSON is byte for byte a delivery's body (re-process it as one). Checked
 * against ZEventBody, but answered as given: zod merges the two sides of an intersection as
 * `{ ...left, ...right }`, key by key, so with `z.unknown()` (the value as it is) on the left the
 * answer keeps the stored keys' order, where ZEventBody alone would rebuild every object in its
 * schema's order. Its type and its schema are ZEventBody's (`unknown & T` is `T`).
 */
export const ZStoredEvent = z.intersection(z.unknown(), ZEventBody);
export type TStoredEvent = z.infer<typeof ZStoredEvent>;

export const ZListEventsQuery = z
  .strictObject({
    storeId: ZId,
    type: ZStoredEventType.optional(),
    from: z.iso.datetime({ offset: true }).optional(),
    to: z.iso.datetime({ offset: true }).optional(),
    limit: queryInt(z.number().int().min(1).max(100)).optional(),
    cursor: z.string().min(1).max(200).optional(),
  })
  .refine((query) => !query.from || !query.to || Date.parse(query.from) <= Date.parse(query.to), {
    message: '`from` is after `to`',
    path: ['from'],
  });
export type TListEventsQuery = z.infer<typeof ZListEventsQuery>;

export const ZEventList = z.object({
  events: z.array(ZStoredEvent),
  hasMore: z.boolean(),
  nextCursor: z.string().nullable(),
});
export const ZEventIdInput = z.strictObject({ storeId: ZId, eventId: ZEventId });
