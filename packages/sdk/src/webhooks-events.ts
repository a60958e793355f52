/**
 * The events a webhook carries, as types: every body the service sends, discriminated on
 * `event`, and the names and `data` of each. Types only: nothing of this file reaches a bundle.
 */
import type { ApiProcedures } from './generated/api.js';

/**
 * Every event the service sends, discriminated on `event`, each with its own `data`: generated
 * from the server's schemas (the events API's answer, `ZEventBody`), so a webhook body, an
 * `events.get` answer and each event of `events.list` / `events.iterate` are the same type.
 */
type AnyWebhookEvent = ApiProcedures['events.get']['output'];

/** Every event name: `order.created`, ..., `webhook.test`. */
export type WebhookEventName = AnyWebhookEvent['event'];

/**
 * A webhook body, discriminated on `event`: `WebhookEvent` is the union of all of them,
 * `WebhookEvent<'order.paid'>` one of them. `id` is the event id (`evt_...`), the same on every
 * retry (deduplicate on it); `createdAt` is when the event happened, not when it was sent.
 */
export type WebhookEvent<E extends WebhookEventName = WebhookEventName> = Extract<AnyWebhookEvent, { event: E }>;

/** The `data` of each event the service sends. */
export type WebhookEventDataMap = { [E in WebhookEventName]: WebhookEvent<E>['data'] };

export type OrderEvent = WebhookEvent<'order.created' | 'order.paid' | 'order.completed' | 'order.refunded'>;
export type ProductEvent = WebhookEvent<'product.created' | 'product.updated' | 'product.deleted'>;
export type LicenseEvent = WebhookEvent<
  'license.activated' | 'license.deactivated' | 'license.disabled' | 'license.enabled'
>;
export type WebhookTestEvent = WebhookEvent<'webhook.test'>;
