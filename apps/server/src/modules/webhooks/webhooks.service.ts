/**
 * Webhook endpoints of a store: create (the secret shown once), read, change, delete, rotate
 * the secret, the delivery log, and what the API does with deliveries: the test ping (sent
 * while the caller waits), retry and replay (queued for the dispatchers, scheduler.ts).
 * And the housekeeping of the outbox and the log: pruning, and counting the dispatchers' backlog.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { WEBHOOK_TEST_EVENT, type TWebhook, type TWebhookDelivery, type TWebhookEvent } from '@svc/schemas';
import type { Config } from '../../config.js';
import type { AppDeps } from '../../deps.js';
import { cursorScope, decodeCursor, keysetPage } from '../../lib/cursor.js';
import { seal } from '../../lib/crypto.js';
import { AppError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { parseReceiverUrl, resolveReceiver } from '../../lib/outbound-url.js';
import type { ServiceContext } from '../request/context.js';
import { EventSchema } from '../events/events.entities.js';
import { recordEvent } from '../events/outbox.js';
import { notifyDispatchers } from '../events/wake.js';
import { eventBody, recordAttempt, sendAttempt } from './attempt.js';
import {
  countOutcomesByHour,
  deleteFinishedDeliveries,
  deleteFinishedEvents,
  eventsWithLastAttempt,
  insertQueuedAttempts,
  selectDeliveryPage,
  type DeliveryPageRow,
} from './delivery-log.repo.js';
import { lockStoreWebhooks } from './endpoints.repo.js';
import { newWebhookSecret, webhookSecretKey } from './signing.js';
import { WebhookDeliverySchema, WebhookSchema, type Webhook, type WebhookDelivery } from './webhooks.entities.js';

export const MAX_WEBHOOKS_PER_STORE = 16;
const SECRET_PREFIX_LENGTH = 12;
/** Delivery log rows are kept this long (DESIGN §5). */
export const DELIVERY_RETENTION_MS = 30 * 24 * 3_600_000;
/** Outbox events are kept as long as the delivery log, so a replay reaches back as far as the log shows (then longer only while an attempt is left). */
export const EVENT_RETENTION_MS = 30 * 24 * 3_600_000;
/** Rows deleted per statement when pruning: short statements, short locks. */
const PRUNE_BATCH = 5_000;

export function toWebhookView(webhook: Webhook): TWebhook {
  return {
    id: webhook.id,
    storeId: webhook.store.id,
    livemode: webhook.livemode,
    name: webhook.name,
    url: webhook.url,
    secretPrefix: webhook.secretPrefix,
    events: webhook.events as TWebhookEvent[],
    enabled: webhook.enabled,
    failureCount: webhook.failureCount,
    disabledAt: webhook.disabledAt?.toISOString() ?? null,
    disabledReason: webhook.disabledReason ?? null,
    lastDeliveredAt: webhook.lastDeliveredAt?.toISOString() ?? null,
    createdAt: webhook.createdAt.toISOString(),
    updatedAt: webhook.updatedAt.toISOString(),
  };
}

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

/** The receiver's URL, checked for its form and, in production, that it resolves to public addresses only. */
async function checkedUrl(config: Config, value: string): Promise<string> {
  const url = parseReceiverUrl(value, config.isProduction);
  if (config.isProduction) await resolveReceiver(url, true);
  return url.toString();
}

/** An endpoint of the store and mode; 404 for any other store's or mode's. */
export async function findWebhook(
  em: EntityManager,
  storeId: string,
  livemode: boolean,
  webhookId: string,
): Promise<Webhook> {
  const webhook = await em.findOne(WebhookSchema, { id: webhookId, store: storeId, livemode });
  if (!webhook) throw new AppError('not_found', 'Webhook not found.');
  return webhook;
}

function setSecret(config: Config, webhook: Webhook): string {
  const secret = newWebhookSecret();
  webhook.secretEnc = seal(webhookSecretKey(config), secret);
  webhook.secretPrefix = secret.slice(0, SECRET_PREFIX_LENGTH);
  return secret;
}

export async function createWebhook(
  ctx: ServiceContext,
  input: { storeId: string; name: string; url: string; events: TWebhookEvent[] },
): Promise<TWebhook & { secret: string }> {
  const url = await checkedUrl(ctx.deps.config, input.url);
  return ctx.em.transactional(async (em) => {
    // Serialise creates per store so the limit holds under racing requests.
    await lockStoreWebhooks(em, input.storeId);
    // The limit holds per mode: test endpoints never crowd out live ones.
    if ((await em.count(WebhookSchema, { store: input.storeId, livemode: ctx.livemode })) >= MAX_WEBHOOKS_PER_STORE) {
      throw new AppError(
        'webhook_limit_reached',
        `A store has at most ${MAX_WEBHOOKS_PER_STORE} webhooks in each mode.`,
      );
    }
    const now = ctx.clock.now();
    const webhook = em.create(WebhookSchema, {
      id: newId(),
      store: input.storeId,
      livemode: ctx.livemode,
      name: input.name,
      url,
      secretEnc: '',
      secretPrefix: '',
      events: input.events,
      enabled: true,
      failureCount: 0,
      firstFailureAt: null,
      disabledAt: null,
      disabledReason: null,
      lastDeliveredAt: null,
      createdAt: now,
      updatedAt: now,
    });
    const secret = setSecret(ctx.deps.config, webhook);
    return { ...toWebhookView(webhook), secret };
  });
}

export async function listWebhooks(ctx: ServiceContext, storeId: string): Promise<TWebhook[]> {
  const webhooks = await ctx.em.find(
    WebhookSchema,
    { store: storeId, livemode: ctx.livemode },
    { orderBy: { createdAt: 'asc', id: 'asc' } },
  );
  return webhooks.map(toWebhookView);
}

export async function getWebhook(
  ctx: ServiceContext,
  input: { storeId: string; webhookId: string },
): Promise<TWebhook> {
  return toWebhookView(await findWebhook(ctx.em, input.storeId, ctx.livemode, input.webhookId));
}

/** Any subset of name, url, events, enabled. Re-enabling clears the failure count and disabledAt. */
export async function updateWebhook(
  ctx: ServiceContext,
  input: {
    storeId: string;
    webhookId: string;
    name?: string | undefined;
    url?: string | undefined;
    events?: TWebhookEvent[] | undefined;
    enabled?: boolean | undefined;
  },
): Promise<TWebhook> {
  const url = input.url === undefined ? undefined : await checkedUrl(ctx.deps.config, input.url);
  const webhook = await findWebhook(ctx.em, input.storeId, ctx.livemode, input.webhookId);
  const now = ctx.clock.now();
  if (input.name !== undefined) webhook.name = input.name;
  if (url !== undefined) webhook.url = url;
  if (input.events !== undefined) webhook.events = input.events;
  if (input.enabled === true && !webhook.enabled) {
    webhook.enabled = true;
    webhook.disabledAt = null;
    webhook.disabledReason = null;
    webhook.failureCount = 0;
    webhook.firstFailureAt = null;
  } else if (input.enabled === false && webhook.enabled) {
    webhook.enabled = false;
    webhook.disabledAt = now;
    webhook.disabledReason = null;
  }
  webhook.updatedAt = now;
  await ctx.em.flush();
  return toWebhookView(webhook);
}

export async function deleteWebhook(ctx: ServiceContext, input: { storeId: string; webhookId: string }): Promise<void> {
  const webhook = await findWebhook(ctx.em, input.storeId, ctx.livemode, input.webhookId);
  await ctx.em.remove(webhook).flush();
}

/** A new secret, shown once; signatures made with the old one stop verifying at once. */
export async function rotateWebhookSecret(
  ctx: ServiceContext,
  input: { storeId: string; webhookId: string },
): Promise<TWebhook & { secret: string }> {
  const webhook = await findWebhook(ctx.em, input.storeId, ctx.livemode, input.webhookId);
  const secret = setSecret(ctx.deps.config, webhook);
  webhook.updatedAt = ctx.clock.now();
  await ctx.em.flush();
  return { ...toWebhookView(webhook), secret };
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
  const webhook = await findWebhook(ctx.em, input.storeId, ctx.livemode, input.webhookId);
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
  const webhook = await findWebhook(ctx.em, input.storeId, ctx.livemode, input.webhookId);
  if (!webhook.enabled) throw new AppError('webhook_disabled', 'This webhook is disabled; enable it first.');
  return { delivery: toDeliveryView(await sendTestPing(ctx.deps, webhook.id)) };
}

/** Sends the event of one logged attempt again, now, as a new attempt. */
export async function retryWebhookDelivery(
  ctx: ServiceContext,
  input: { storeId: string; webhookId: string; deliveryId: string },
): Promise<{ delivery: TWebhookDelivery }> {
  const webhook = await findWebhook(ctx.em, input.storeId, ctx.livemode, input.webhookId);
  if (!webhook.enabled) throw new AppError('webhook_disabled', 'This webhook is disabled; enable it first.');
  const delivery = await ctx.em.findOne(WebhookDeliverySchema, { id: input.deliveryId, webhook: webhook.id });
  if (!delivery) throw new AppError('not_found', 'Delivery not found.');
  return { delivery: toDeliveryView(await retryDelivery(ctx.deps, delivery.id)) };
}

/** Queues again every event of the range the webhook is subscribed to (optionally only failed ones). */
export async function replayWebhook(
  ctx: ServiceContext,
  input: { storeId: string; webhookId: string; from: string; to: string; status?: 'failed' | undefined },
): Promise<{ queued: number }> {
  const webhook = await findWebhook(ctx.em, input.storeId, ctx.livemode, input.webhookId);
  if (!webhook.enabled) throw new AppError('webhook_disabled', 'This webhook is disabled; enable it first.');
  return {
    queued: await replayRange(ctx.deps, webhook.id, {
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
  deps: AppDeps,
  webhookId: string,
  opts: { timeoutMs?: number } = {},
): Promise<WebhookDelivery> {
  const em = deps.orm.em.fork();
  const hook = await enabledWebhook(em, webhookId, 'The webhook is disabled; enable it before sending a test event.');
  const storeId = hook.store.id;
  const createdAt = deps.clock.now();
  const payload = { webhookId };
  // Kept as an outbox row (already dispatched: nobody subscribes to it) so a manual retry can resend it.
  const eventId = await recordEvent(em, {
    storeId,
    livemode: hook.livemode,
    type: WEBHOOK_TEST_EVENT,
    payload,
    at: createdAt,
    dispatched: true,
  });
  const id = newId();
  const body = eventBody({
    id: eventId,
    type: WEBHOOK_TEST_EVENT,
    createdAt,
    storeId,
    livemode: hook.livemode,
    payload,
  });
  const result = await sendAttempt(deps, opts.timeoutMs ?? deps.config.webhookTimeoutMs, {
    id,
    url: hook.url,
    secretEnc: hook.secretEnc,
    eventId,
    event: WEBHOOK_TEST_EVENT,
    body,
  });
  await recordAttempt(
    deps,
    { id, webhookId, storeId, eventId, event: WEBHOOK_TEST_EVENT, attempt: 1, lease: null, startedAt: createdAt },
    result,
    { retry: false, random: Math.random },
  );
  return deps.orm.em.fork().findOneOrFail(WebhookDeliverySchema, { id });
}

/**
 * Sends a delivery's event again now: a new `queued` attempt (the highest attempt number of that
 * endpoint and event + 1). A disabled endpoint -> webhook_disabled; an unknown delivery -> not_found.
 */
export async function retryDelivery(deps: AppDeps, deliveryId: string): Promise<WebhookDelivery> {
  const em = deps.orm.em.fork();
  const delivery = await em.findOne(WebhookDeliverySchema, { id: deliveryId });
  if (!delivery) throw new AppError('not_found', 'Delivery not found.');
  const webhookId = delivery.webhook.id;
  await enabledWebhook(em, webhookId, 'The webhook is disabled; enable it before sending events again.');
  return queueNextAttempt(deps, {
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
  deps: AppDeps,
  ref: { webhookId: string; storeId: string; eventId: string; event: string },
): Promise<WebhookDelivery> {
  const em = deps.orm.em.fork();
  // A racing retry or scheduled attempt may take the same number: read again and take the next.
  for (let round = 0; round < 5; round++) {
    const last = await em.findOne(
      WebhookDeliverySchema,
      { webhook: ref.webhookId, eventId: ref.eventId },
      { orderBy: { attempt: 'desc' }, fields: ['attempt'] },
    );
    const now = deps.clock.now();
    const [id] = await insertQueuedAttempts(em, [{ ...ref, attempt: (last?.attempt ?? 0) + 1, dueAt: now }], now);
    if (id) {
      notifyDispatchers(deps.orm);
      return deps.orm.em.fork().findOneOrFail(WebhookDeliverySchema, { id });
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
  const webhook = await findWebhook(ctx.em, input.storeId, ctx.livemode, input.webhookId);
  if (!webhook.enabled) throw new AppError('webhook_disabled', 'This webhook is disabled; enable it first.');
  // Only an event of the endpoint's own mode.
  const event = await ctx.em.findOne(
    EventSchema,
    { id: input.eventId, store: input.storeId, livemode: webhook.livemode },
    { fields: ['type'] },
  );
  if (!event) throw new AppError('not_found', 'No event with this id in this store.');
  const delivery = await queueNextAttempt(ctx.deps, {
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
  const webhook = await findWebhook(ctx.em, input.storeId, ctx.livemode, input.webhookId);
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
  deps: AppDeps,
  webhookId: string,
  range: { from: Date; to: Date; status?: 'failed' | undefined },
): Promise<number> {
  const em = deps.orm.em.fork();
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
  const now = deps.clock.now();
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
  if (queued.length > 0) notifyDispatchers(deps.orm);
  return queued.length;
}

/** Attempts queued and due now: the dispatchers' backlog (the partial index on due_at answers it). */
export async function countDueAttempts(deps: AppDeps): Promise<number> {
  return deps.orm.em.fork().count(WebhookDeliverySchema, { status: 'queued', dueAt: { $lte: deps.clock.now() } });
}

/** Runs `deleteBatch` until a batch comes back short; returns how many rows went in all. */
async function deleteInBatches(deleteBatch: (limit: number) => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await deleteBatch(PRUNE_BATCH);
    total += deleted;
    if (deleted < PRUNE_BATCH) return total;
  }
}

/** Deletes delivery log rows past the retention (never an attempt still queued or in flight). */
export async function pruneDeliveries(deps: AppDeps, retentionMs = DELIVERY_RETENTION_MS): Promise<number> {
  const cutoff = new Date(deps.clock.now().getTime() - retentionMs);
  return deleteInBatches((limit) => deleteFinishedDeliveries(deps.orm.em.fork(), cutoff, limit));
}

/**
 * Deletes outbox events past the retention that nothing will send again: dispatched, with no
 * attempt still queued or in flight (a retry of an older attempt keeps its event until it is sent).
 */
export async function pruneEvents(deps: AppDeps, retentionMs = EVENT_RETENTION_MS): Promise<number> {
  const cutoff = new Date(deps.clock.now().getTime() - retentionMs);
  return deleteInBatches((limit) => deleteFinishedEvents(deps.orm.em.fork(), cutoff, limit));
}
