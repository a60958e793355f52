/**
 * Webhook endpoints of a store: create (the secret shown once), read, change, delete,
 * rotate the secret, and the delivery log. Sending is the dispatcher's (dispatcher.ts).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { TWebhook, TWebhookDelivery, TWebhookEvent } from '@svc/schemas';
import type { Config } from '../../config.js';
import { beforePosition, decodeCursor, keysetPage } from '../../lib/cursor.js';
import { deriveKey, seal } from '../../lib/crypto.js';
import { AppError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { parseReceiverUrl, resolveReceiver } from '../../lib/outbound-url.js';
import type { ServiceContext } from '../../trpc/context.js';
import { replayRange, retryDelivery, sendTestPing } from './dispatcher.js';
import { newWebhookSecret } from './signing.js';
import { WebhookDeliverySchema, WebhookSchema, type Webhook, type WebhookDelivery } from './webhooks.entities.js';

export const MAX_WEBHOOKS_PER_STORE = 16;
const SECRET_PREFIX_LENGTH = 12;

export function webhookSecretKey(config: Config): Buffer {
  return deriveKey(config.encryptionKey, 'webhook-secret');
}

export function toWebhookView(webhook: Webhook): TWebhook {
  return {
    id: webhook.id,
    storeId: webhook.store.id,
    name: webhook.name,
    url: webhook.url,
    secretPrefix: webhook.secretPrefix,
    events: webhook.events as TWebhookEvent[],
    enabled: webhook.enabled,
    failureCount: webhook.failureCount,
    disabledAt: webhook.disabledAt?.toISOString() ?? null,
    lastDeliveredAt: webhook.lastDeliveredAt?.toISOString() ?? null,
    createdAt: webhook.createdAt.toISOString(),
    updatedAt: webhook.updatedAt.toISOString(),
  };
}

export function toDeliveryView(delivery: WebhookDelivery): TWebhookDelivery {
  return {
    id: delivery.id,
    webhookId: delivery.webhook.id,
    eventId: delivery.eventId,
    event: delivery.event,
    attempt: delivery.attempt,
    status: delivery.status,
    responseCode: delivery.responseCode ?? null,
    responseBodyPreview: delivery.responseBodyPreview ?? null,
    errorMessage: delivery.errorMessage ?? null,
    durationMs: delivery.durationMs ?? null,
    createdAt: delivery.createdAt.toISOString(),
  };
}

/** The receiver's URL, checked for its form and, in production, that it resolves to public addresses only. */
async function checkedUrl(config: Config, value: string): Promise<string> {
  const url = parseReceiverUrl(value, config.isProduction);
  if (config.isProduction) await resolveReceiver(url, true);
  return url.toString();
}

export async function findWebhook(em: EntityManager, storeId: string, webhookId: string): Promise<Webhook> {
  const webhook = await em.findOne(WebhookSchema, { id: webhookId, store: storeId });
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
    await em.execute('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`webhooks:${input.storeId}`]);
    if ((await em.count(WebhookSchema, { store: input.storeId })) >= MAX_WEBHOOKS_PER_STORE) {
      throw new AppError('webhook_limit_reached', `A store has at most ${MAX_WEBHOOKS_PER_STORE} webhooks.`);
    }
    const now = ctx.clock.now();
    const webhook = em.create(WebhookSchema, {
      id: newId(),
      store: input.storeId,
      name: input.name,
      url,
      secretEnc: '',
      secretPrefix: '',
      events: input.events,
      enabled: true,
      failureCount: 0,
      firstFailureAt: null,
      disabledAt: null,
      lastDeliveredAt: null,
      createdAt: now,
      updatedAt: now,
    });
    const secret = setSecret(ctx.deps.config, webhook);
    return { ...toWebhookView(webhook), secret };
  });
}

export async function listWebhooks(ctx: ServiceContext, storeId: string): Promise<TWebhook[]> {
  const webhooks = await ctx.em.find(WebhookSchema, { store: storeId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
  return webhooks.map(toWebhookView);
}

export async function getWebhook(ctx: ServiceContext, input: { storeId: string; webhookId: string }): Promise<TWebhook> {
  return toWebhookView(await findWebhook(ctx.em, input.storeId, input.webhookId));
}

/** Any subset of name, url, events, enabled. Re-enabling clears the failure count and disabledAt. */
export async function updateWebhook(
  ctx: ServiceContext,
  input: { storeId: string; webhookId: string; name?: string | undefined; url?: string | undefined; events?: TWebhookEvent[] | undefined; enabled?: boolean | undefined },
): Promise<TWebhook> {
  const url = input.url === undefined ? undefined : await checkedUrl(ctx.deps.config, input.url);
  const webhook = await findWebhook(ctx.em, input.storeId, input.webhookId);
  const now = ctx.clock.now();
  if (input.name !== undefined) webhook.name = input.name;
  if (url !== undefined) webhook.url = url;
  if (input.events !== undefined) webhook.events = input.events;
  if (input.enabled === true && !webhook.enabled) {
    webhook.enabled = true;
    webhook.disabledAt = null;
    webhook.failureCount = 0;
    webhook.firstFailureAt = null;
  } else if (input.enabled === false && webhook.enabled) {
    webhook.enabled = false;
    webhook.disabledAt = now;
  }
  webhook.updatedAt = now;
  await ctx.em.flush();
  return toWebhookView(webhook);
}

export async function deleteWebhook(ctx: ServiceContext, input: { storeId: string; webhookId: string }): Promise<void> {
  const webhook = await findWebhook(ctx.em, input.storeId, input.webhookId);
  await ctx.em.remove(webhook).flush();
}

/** A new secret, shown once; signatures made with the old one stop verifying at once. */
export async function rotateWebhookSecret(ctx: ServiceContext, input: { storeId: string; webhookId: string }): Promise<TWebhook & { secret: string }> {
  const webhook = await findWebhook(ctx.em, input.storeId, input.webhookId);
  const secret = setSecret(ctx.deps.config, webhook);
  webhook.updatedAt = ctx.clock.now();
  await ctx.em.flush();
  return { ...toWebhookView(webhook), secret };
}

export async function listDeliveries(
  ctx: ServiceContext,
  input: { storeId: string; webhookId: string; limit?: number | undefined; cursor?: string | undefined; status?: string | undefined; event?: string | undefined },
) {
  const webhook = await findWebhook(ctx.em, input.storeId, input.webhookId);
  const limit = input.limit ?? 50;
  const key = ctx.deps.config.encryptionKey;
  const where = ['d.webhook_id = ?'];
  const params: unknown[] = [webhook.id];
  if (input.status) {
    where.push('d.status = ?');
    params.push(input.status);
  }
  if (input.event) {
    where.push('d.event = ?');
    params.push(input.event);
  }
  if (input.cursor) {
    const before = beforePosition(decodeCursor(key, input.cursor), 'd.created_at', 'd.id');
    where.push(before.sql);
    params.push(...before.params);
  }
  params.push(limit + 1);
  const rows: Array<{ id: string; created_us: string }> = await ctx.em.execute(
    `select d.id, (extract(epoch from d.created_at) * 1000000)::bigint as created_us from webhook_delivery d
     where ${where.join(' and ')} order by d.created_at desc, d.id desc limit ?`,
    params,
  );
  const { page, hasMore, nextCursor } = keysetPage(key, rows, limit, (row) => row.created_us);
  const entities = page.length ? await ctx.em.find(WebhookDeliverySchema, { id: { $in: page.map((r) => r.id) } }) : [];
  const byId = new Map(entities.map((e) => [e.id, e]));
  return { deliveries: page.map((r) => toDeliveryView(byId.get(r.id)!)), hasMore, nextCursor };
}

/** `POST .../test`: one `webhook.test` attempt, made now and answered; a disabled endpoint is 400. */
export async function testWebhook(ctx: ServiceContext, input: { storeId: string; webhookId: string }): Promise<{ delivery: TWebhookDelivery }> {
  const webhook = await findWebhook(ctx.em, input.storeId, input.webhookId);
  if (!webhook.enabled) throw new AppError('webhook_disabled', 'This webhook is disabled; enable it first.');
  return { delivery: toDeliveryView(await sendTestPing(ctx.deps, webhook.id)) };
}

/** Sends the event of one logged attempt again, now, as a new attempt. */
export async function retryWebhookDelivery(ctx: ServiceContext, input: { storeId: string; webhookId: string; deliveryId: string }): Promise<{ delivery: TWebhookDelivery }> {
  const webhook = await findWebhook(ctx.em, input.storeId, input.webhookId);
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
  const webhook = await findWebhook(ctx.em, input.storeId, input.webhookId);
  if (!webhook.enabled) throw new AppError('webhook_disabled', 'This webhook is disabled; enable it first.');
  return { queued: await replayRange(ctx.deps, webhook.id, { from: new Date(input.from), to: new Date(input.to), status: input.status }) };
}
