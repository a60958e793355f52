/**
 * The outgoing events: one payload schema per event type. The outbox writer validates every
 * payload against these before it writes it (a payload that does not match is a bug: it throws),
 * and the OpenAPI document's `webhooks` section describes the same schemas, inside the body the
 * dispatcher sends: `{ id, event, createdAt, storeId, data }`.
 */
import { z } from 'zod';
import { ZProduct } from './catalog.js';
import { ZId, ZTimestamp } from './common.js';
import { queryInt } from './query.js';
import { ZMerchantLicense } from './licenses.js';
import { ZOrderDetail } from './orders.js';
import { WEBHOOK_EVENTS, WEBHOOK_TEST_EVENT, type TWebhookEvent } from './webhooks.js';

const orderPayload = z.strictObject({ order: ZOrderDetail });
const productPayload = z.strictObject({ product: ZProduct });
const licensePayload = z.strictObject({ license: ZMerchantLicense });

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
    data: EVENT_PAYLOADS[type],
  });
}

// ---------------------------------------------------------------------------------------------
// The events API (merchant, scope event:read): the outbox's events of a store, as webhooks carry them.

export const ZStoredEventType = z.enum([...WEBHOOK_EVENTS, WEBHOOK_TEST_EVENT]);

/**
 * One event exactly as a webhook delivery carries it: the same keys in the same order and `data`
 * as stored, so its JSON is byte for byte a delivery's body (re-verify or re-process it). `data`
 * is the event type's payload (see the `webhooks` section); it is passed through as stored.
 */
export const ZStoredEvent = z.object({
  id: z.string().meta({ description: 'The event id (`evt_...`), the same on every delivery attempt' }),
  event: ZStoredEventType,
  createdAt: ZTimestamp,
  storeId: ZId,
  data: z.record(z.string(), z.unknown()).meta({ description: "The event type's payload, as webhooks carry it" }),
});
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
export const ZEventIdInput = z.strictObject({
  storeId: ZId,
  eventId: z
    .string()
    .min(1)
    .max(40)
    .regex(/^evt_[a-z0-9]+$/, 'not an event id'),
});
