/** Outgoing webhook endpoints and their delivery log (one row per attempt). */
import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { StoreSchema } from '../stores/stores.entities.js';

export const WebhookSchema = defineEntity({
  name: 'Webhook',
  tableName: 'webhook',
  indexes: [{ name: 'webhook_store_index', properties: ['store', 'livemode', 'createdAt'] }],
  properties: (p) => ({
    id: p.string().primary().length(32),
    store: p.manyToOne(StoreSchema).ref().foreignKeyName('webhook_store_id_fkey').updateRule('no action'),
    /** The mode whose events it receives. */
    livemode: p.boolean().default(true),
    name: p.string().length(100),
    url: p.string().length(2048),
    /** `whsec_...`, sealed with AES-256-GCM under a key derived from APP_ENCRYPTION_KEY. */
    secretEnc: p.text(),
    secretPrefix: p.string().length(16),
    events: p.array(),
    enabled: p.boolean().default(true),
    /** Consecutive failed attempts since the last success. */
    failureCount: p.integer().default(0),
    firstFailureAt: p.datetime().nullable(),
    disabledAt: p.datetime().nullable(),
    /** Why svc disabled it (the retry policy's words); null when it is enabled or a member disabled it. */
    disabledReason: p.string().length(500).nullable(),
    lastDeliveredAt: p.datetime().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  }),
});
export type Webhook = InferEntity<typeof WebhookSchema>;

export const DELIVERY_STATUSES = ['pending', 'success', 'failed', 'queued', 'skipped'] as const;

export const WebhookDeliverySchema = defineEntity({
  name: 'WebhookDelivery',
  tableName: 'webhook_delivery',
  // One row per attempt: a racing insert of the same attempt does nothing.
  uniques: [{ name: 'webhook_delivery_attempt_unique', properties: ['webhook', 'eventId', 'attempt'] }],
  indexes: [
    // Claims: what is due (queued) or was abandoned in flight (pending past its lease).
    {
      name: 'webhook_delivery_due_index',
      expression: `create index "webhook_delivery_due_index" on "webhook_delivery" ("due_at") where "status" in ('queued', 'pending')`,
    },
    // An endpoint's own claims (a freed slot refilled from its backlog): its due attempts in order.
    {
      name: 'webhook_delivery_endpoint_due_index',
      expression: `create index "webhook_delivery_endpoint_due_index" on "webhook_delivery" ("webhook_id", "due_at", "id") where "status" = 'queued'`,
    },
    {
      name: 'webhook_delivery_log_index',
      expression:
        'create index "webhook_delivery_log_index" on "webhook_delivery" ("webhook_id", "created_at" desc, "id" desc)',
    },
    { name: 'webhook_delivery_created_index', properties: ['createdAt'] },
  ],
  properties: (p) => ({
    id: p.string().primary().length(32),
    webhook: p
      .manyToOne(WebhookSchema)
      .ref()
      .foreignKeyName('webhook_delivery_webhook_id_fkey')
      .updateRule('no action')
      .deleteRule('cascade'),
    storeId: p.string().length(32),
    /** Its endpoint's (and event's) mode. */
    livemode: p.boolean().default(true),
    eventId: p.string().length(40),
    event: p.string().length(50),
    attempt: p.integer(),
    status: p.enum([...DELIVERY_STATUSES]),
    dueAt: p.datetime(),
    /** While `pending`: the claim's lease; past it, another dispatcher may take the attempt over. */
    lockedUntil: p.datetime().nullable(),
    /** The headers the attempt was sent with (signatures included); null until it is sent, or when nothing was sent. */
    requestHeaders: p.json<Record<string, string>>().nullable(),
    responseCode: p.integer().nullable(),
    responseBodyPreview: p.string().length(1024).nullable(),
    errorMessage: p.string().length(500).nullable(),
    durationMs: p.integer().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  }),
});
export type WebhookDelivery = InferEntity<typeof WebhookDeliverySchema>;
