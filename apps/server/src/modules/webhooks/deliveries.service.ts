/**
 * What a store's webhook endpoints are sent, as the API shows and asks for it: the delivery log
 * (an endpoint's page of attempts, one event's attempts across endpoints, the hourly chart), the
 * test ping (sent while the caller waits), and sending events again (retry an attempt, resend one
 * event, replay a range), queued for the dispatchers (scheduler.ts) and woken at once.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { WEBHOOK_TEST_EVENT, type TWebhookDelivery } from '@svc/schemas';
import { cursorScope, decodeCursor, keysetPage } from '../../lib/cursor.js';
import { AppError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { ServiceContext } from '../request/context.js';
import { EventSchema } from '../events/events.entities.js';
import { recordEvent } from '../events/outbox.js';
import { notifyDispatchers } from '../events/wake.js';
import { eventBody, recordAttempt, sendAttempt } from './attempt.js';
import {
  countOutcomesByHour,
  eventsWithLastAttempt,
  insertQueuedAttempts,
  selectDeliveryPage,
  type DeliveryPageRow,
} from './delivery-log.repo.js';
import { findWebhook } from './endpoints.service.js';
import { WebhookDeliverySchema, WebhookSchema, type Webhook, type WebhookDelivery } from './webhooks.entities.js';

export function toDeliveryView(delivery: WebhookDelivery): TWebhookDelivery {
  return {
    id: delivery.id,
    webhookId: delivery.webhook.id,
    livemode: delivery.livemode,
    eventId: delivery.eventId,
    // Written from the event's type, which the outbox took from the event names only.
    event: delivery.event as TWebhookDelivery['event'],
    attempt: delivery.attempt,
    status: delivery.status,
    requestHeaders: delivery.requestHeaders ?? null,
    responseCode: delivery.responseCode ?? null,
    responseBodyPreview: delivery.responseBodyPreview ?? null,
    errorMessage: delivery.errorMessage ?? null,
    durationMs: delivery.durationMs ?? null,
    createdAt: delivery.createdAt.toISOString(),
  };
}

/** A row of the log's page (selectDeliveryPage) as the API shows it: what toDeliveryView makes of the entity. */
function pageRowView(row: DeliveryPageRow): TWebhookDelivery {
  return {
    id: row.id,
    webhookId: row.webhook_id,
    livemode: row.livemode,
    eventId: row.event_id,
    event: row.event as TWebhookDelivery['event'],
    attempt: row.attempt,
    status: row.status as TWebhookDelivery['status'],
    requestHeaders: row.request_headers,
    responseCode: row.response_code,
    responseBodyPreview: row.response_body_preview,
    errorMessage: row.error_message,
    durationMs: row.duration_ms,
    createdAt: row.created_at.toISOString(),
  };
}

export async function listDeliveries(
  ctx: ServiceContext,
  input: {
    storeId: string;
    webhookId: string;
    limit?: number | undefined;
    cursor?: string | undefined;
    status?: string | undefined;
    event?: string | undefined;
  },
) {
  const webhook = await findWebhook(ctx, input);
  const limit = input.limit ?? 50;
  const key = ctx.deps.config.encryptionKey;
  const filter = { webhookId: webhook.id, status: input.status, event: input.event };
  const scope = cursorScope('webhook.deliveries', { storeId: input.storeId, ...filter });
  const rows = await selectDeliveryPage(
    ctx.em,
    filter,
    input.cursor ? decodeCursor(key, scope, input.cursor) : undefined,
    limit + 1,
  );
  const { page, hasMore, nextCursor } = keysetPage(key, scope, rows, limit, (row) => row.created_us);
  return { deliveries: page.map(pageRowView), hasMore, nextCursor };
}

/** `POST .../test`: one `webhook.test` attempt, made now and answered; a disabled endpoint is 400. */
export async function testWebhook(
  ctx: ServiceContext,
  input: { storeId: string; webhookId: string },
): Promise<{ delivery: TWebhookDelivery }> {
  const webhook = await findWebhook(ctx, input);
  if (!webhook.enabled) throw new AppError('webhook_disabled', 'This webhook is disabled; enable it first.');
  return { delivery: toDeliveryView(await sendTestPing(ctx, { webhookId: webhook.id })) };
}

/** Sends the event of one logged attempt again, now, as a new attempt. */
export async function retryWebhookDelivery(
  ctx: ServiceContext,
  input: { storeId: string; webhookId: string; deliveryId: string },
): Promise<{ delivery: TWebhookDelivery }> {
  const webhook = await findWebhook(ctx, input);
  if (!webhook.enabled) throw new AppError('webhook_disabled', 'This webhook is disabled; enable it first.');
  const delivery = await ctx.em.findOne(WebhookDeliverySchema, { id: input.deliveryId, webhook: webhook.id });
  if (!delivery) throw new AppError('not_found', 'Delivery not found.');
  return { delivery: toDeliveryView(await retryDelivery(ctx, { deliveryId: delivery.id })) };
}

/** Queues again every event of the range the webhook is subscribed to (optionally only failed ones). */
export async function replayWebhook(
  ctx: ServiceContext,
  input: { storeId: string; webhookId: string; from: string; to: string; status?: 'failed' | undefined },
): Promise<{ queued: number }> {
  const webhook = await findWebhook(ctx, input);
  if (!webhook.enabled) throw new AppError('webhook_disabled', 'This webhook is disabled; enable it first.');
  return {
    queued: await replayRange(ctx, {
      webhookId: webhook.id,
      from: new Date(input.from),
      to: new Date(input.to),
      status: input.status,
    }),
  };
}

/** An endpoint events may be sent to now: unknown -> not_found, disabled -> webhook_disabled with `disabledMessage`. */
async function enabledWebhook(em: EntityManager, webhookId: string, disabledMessage: string): Promise<Webhook> {
  const webhook = await em.findOne(WebhookSchema, { id: webhookId });
  if (!webhook) throw new AppError('not_found', 'Webhook not found.');
  if (!webhook.enabled) throw new AppError('webhook_disabled', disabledMessage);
  return webhook;
}

/**
 * The test ping: event `webhook.test` (a fresh event id, data `{ webhookId }`) sent now, while
 * the caller waits, as attempt 1 of its own. It is never retried, and counts for the failure
 * streak like any attempt. A disabled endpoint -> webhook_disabled.
 */
export async function sendTestPing(
  ctx: ServiceContext,
  input: { webhookId: string; timeoutMs?: number },
): Promise<WebhookDelivery> {
  const { deps, em } = ctx;
  const { webhookId } = input;
  const hook = await enabledWebhook(em, webhookId, 'The webhook is disabled; enable it before sending a test event.');
  const storeId = hook.store.id;
  const createdAt = ctx.clock.now();
  const payload = { webhookId };
  // Kept as an outbox row (already dispatched: nobody subscribes to it) so a manual retry can resend it.
  const eventId = await recordEvent(
    { em },
    {
      storeId,
      livemode: hook.livemode,
      type: WEBHOOK_TEST_EVENT,
      payload,
      at: createdAt,
      dispatched: true,
    },
  );
  const id = newId();
  const body = eventBody({
    id: eventId,
    type: WEBHOOK_TEST_EVENT,
    createdAt,
    storeId,
    livemode: hook.livemode,
    payload,
  });
  const result = await sendAttempt(ctx, input.timeoutMs ?? deps.config.webhookTimeoutMs, {
    id,
    url: hook.url,
    secretEnc: hook.secretEnc,
    eventId,
    event: WEBHOOK_TEST_EVENT,
    body,
  });
  await recordAttempt(
    ctx,
    { id, webhookId, storeId, eventId, event: WEBHOOK_TEST_EVENT, attempt: 1, lease: null, startedAt: createdAt },
    result,
    { retry: false, random: Math.random },
  );
  return em.findOneOrFail(WebhookDeliverySchema, { id });
}

/**
 * Sends a delivery's event again now: a new `queued` attempt (the highest attempt number of that
 * endpoint and event + 1). A disabled endpoint -> webhook_disabled; an unknown delivery -> not_found.
 */
export async function retryDelivery(ctx: ServiceContext, input: { deliveryId: string }): Promise<WebhookDelivery> {
  const { em } = ctx;
  const delivery = await em.findOne(WebhookDeliverySchema, { id: input.deliveryId });
  if (!delivery) throw new AppError('not_found', 'Delivery not found.');
  const webhookId = delivery.webhook.id;
  await enabledWebhook(em, webhookId, 'The webhook is disabled; enable it before sending events again.');
  return queueNextAttempt(ctx, {
    webhookId,
    storeId: delivery.storeId,
    eventId: delivery.eventId,
    event: delivery.event,
  });
}

/**
 * A new `queued` attempt of an event to an endpoint, due now: the highest attempt number of that
 * endpoint and event + 1 (1 when it has none), and the dispatchers woken.
 */
async function queueNextAttempt(
  ctx: ServiceContext,
  ref: { webhookId: string; storeId: string; eventId: string; event: string },
): Promise<WebhookDelivery> {
  const { em } = ctx;
  // A racing retry or scheduled attempt may take the same number: read again and take the next.
  for (let round = 0; round < 5; round++) {
    const last = await em.findOne(
      WebhookDeliverySchema,
      { webhook: ref.webhookId, eventId: ref.eventId },
      { orderBy: { attempt: 'desc' }, fields: ['attempt'] },
    );
    const now = ctx.clock.now();
    const [id] = await insertQueuedAttempts(em, [{ ...ref, attempt: (last?.attempt ?? 0) + 1, dueAt: now }], now);
    if (id) {
      notifyDispatchers(ctx.deps.orm);
      return em.findOneOrFail(WebhookDeliverySchema, { id });
    }
  }
  throw new AppError('conflict', 'The event is being sent to this endpoint already.');
}

/**
 * Sends one event of the store to one of its endpoints, now, as that endpoint's next attempt of
 * it: also an event it never received (the endpoint need not subscribe to its type; a member
 * chose to send it). Unknown endpoint or event -> not_found; a disabled endpoint -> webhook_disabled.
 */
export async function resendEvent(
  ctx: ServiceContext,
  input: { storeId: string; webhookId: string; eventId: string },
): Promise<{ delivery: TWebhookDelivery }> {
  const webhook = await findWebhook(ctx, input);
  if (!webhook.enabled) throw new AppError('webhook_disabled', 'This webhook is disabled; enable it first.');
  // Only an event of the endpoint's own mode.
  const event = await ctx.em.findOne(
    EventSchema,
    { id: input.eventId, store: input.storeId, livemode: webhook.livemode },
    { fields: ['type'] },
  );
  if (!event) throw new AppError('not_found', 'No event with this id in this store.');
  const delivery = await queueNextAttempt(ctx, {
    webhookId: webhook.id,
    storeId: input.storeId,
    eventId: event.id,
    event: event.type,
  });
  return { delivery: toDeliveryView(delivery) };
}

/**
 * Every attempt of one event to the store's endpoints, oldest first (an event has a few per
 * endpoint). An event not of this store (or pruned) is not_found.
 */
export async function listEventDeliveries(
  ctx: ServiceContext,
  input: { storeId: string; eventId: string },
): Promise<{ deliveries: TWebhookDelivery[] }> {
  const event = await ctx.em.findOne(
    EventSchema,
    { id: input.eventId, store: input.storeId, livemode: ctx.livemode },
    { fields: ['id'] },
  );
  if (!event) throw new AppError('not_found', 'No event with this id in this store.');
  const webhooks = await ctx.em.find(
    WebhookSchema,
    { store: input.storeId, livemode: ctx.livemode },
    { fields: ['id'] },
  );
  if (webhooks.length === 0) return { deliveries: [] };
  // (webhook_id, event_id, attempt) is the log's unique index: one lookup per endpoint.
  const deliveries = await ctx.em.find(
    WebhookDeliverySchema,
    { webhook: { $in: webhooks.map((w) => w.id) }, eventId: input.eventId },
    { orderBy: { createdAt: 'asc', attempt: 'asc', id: 'asc' }, limit: 500 },
  );
  return { deliveries: deliveries.map(toDeliveryView) };
}

const HOUR_MS = 3_600_000;

/** An endpoint's successes and failures in each of the last 24 hours (the current one last), counted by SQL. */
export async function webhookStats(
  ctx: ServiceContext,
  input: { storeId: string; webhookId: string },
): Promise<{ hours: Array<{ hour: string; success: number; failed: number }> }> {
  const webhook = await findWebhook(ctx, input);
  const currentHour = Math.floor(ctx.clock.now().getTime() / HOUR_MS);
  const first = currentHour - 23;
  const rows = await countOutcomesByHour(ctx.em, webhook.id, new Date(first * HOUR_MS));
  const byHour = new Map(rows.map((row) => [Number(row.hour), row]));
  return {
    hours: Array.from({ length: 24 }, (_, index) => {
      const row = byHour.get(first + index);
      return {
        hour: new Date((first + index) * HOUR_MS).toISOString(),
        success: row?.success ?? 0,
        failed: row?.failed ?? 0,
      };
    }),
  };
}

/**
 * Queues again every event of the endpoint's store created in [from, to] that the endpoint is
 * subscribed to (with `status: 'failed'`: only those whose latest attempt to this endpoint
 * failed). Events with an attempt queued or in flight already are left as they are. Returns how
 * many attempts were queued.
 */
export async function replayRange(
  ctx: ServiceContext,
  range: { webhookId: string; from: Date; to: Date; status?: 'failed' | undefined },
): Promise<number> {
  const { em } = ctx;
  const { webhookId } = range;
  const hook = await enabledWebhook(em, webhookId, 'The webhook is disabled; enable it before replaying events.');
  if (hook.events.length === 0) return 0;
  const storeId = hook.store.id;
  const events = await eventsWithLastAttempt(em, webhookId, storeId, hook.livemode, {
    from: range.from,
    to: range.to,
    types: hook.events,
  });
  const wanted = events.filter((event) => {
    if (event.last_status === 'queued' || event.last_status === 'pending') return false;
    return range.status === 'failed' ? event.last_status === 'failed' : true;
  });
  const now = ctx.clock.now();
  const queued = await insertQueuedAttempts(
    em,
    wanted.map((event) => ({
      webhookId,
      storeId,
      eventId: event.id,
      event: event.type,
      attempt: (event.last_attempt ?? 0) + 1,
      dueAt: now,
    })),
    now,
  );
  if (queued.length > 0) notifyDispatchers(ctx.deps.orm);
  return queued.length;
}
