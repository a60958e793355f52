/**
 * The outgoing events: one payload schema per event type. The outbox writer validates every
 * payload against these before it writes it (a payload that does not match is a bug: it throws),
 * and the OpenAPI document's `webhooks` section describes the same schemas, inside the body the
 * dispatcher sends: `{ id, event, createdAt, storeId, data }`.
 */
import { z } from 'zod';
import { ZProduct } from './catalog.js';
import { ZId, ZTimestamp } from './common.js';
import { ZMerchantLicense } from './licenses.js';
import { ZOrderDetail } from './orders.js';
import { WEBHOOK_TEST_EVENT, type TWebhookEvent } from './webhooks.js';

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
