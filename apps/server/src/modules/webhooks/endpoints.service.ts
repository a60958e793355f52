/**
 * A store's webhook endpoints: create (the secret shown once), list, read, change, enable and
 * disable, delete, rotate the secret; and findWebhook, the one lookup of an endpoint of the
 * store and mode that every operation on one starts with. What is sent to an endpoint, and its
 * log, is deliveries.service.ts's; the dispatchers are scheduler.ts's.
 */
import { inTransaction } from '../request/transaction.js';
import { type TWebhook, type TWebhookEvent } from '@svc/schemas';
import type { Config } from '../../config.js';
import { seal } from '../../lib/crypto.js';
import { AppError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { parseReceiverUrl, resolveReceiver } from '../../lib/outbound-url.js';
import type { ServiceContext } from '../request/context.js';
import { lockStoreWebhooks } from './endpoints.repo.js';
import { newWebhookSecret, webhookSecretKey } from './signing.js';
import { WebhookSchema, type Webhook } from './webhooks.entities.js';

export const MAX_WEBHOOKS_PER_STORE = 16;
const SECRET_PREFIX_LENGTH = 12;

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

/** The receiver's URL, checked for its form and, in production, that it resolves to public addresses only. */
async function checkedUrl(config: Config, value: string): Promise<string> {
  const url = parseReceiverUrl(value, config.isProduction);
  if (config.isProduction) await resolveReceiver(url, true);
  return url.toString();
}

/** An endpoint of the store and the context's mode; 404 for any other store's or mode's. */
export async function findWebhook(
  ctx: ServiceContext,
  input: { storeId: string; webhookId: string },
): Promise<Webhook> {
  const webhook = await ctx.em.findOne(WebhookSchema, {
    id: input.webhookId,
    store: input.storeId,
    livemode: ctx.livemode,
  });
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
  return inTransaction(ctx, async (tx) => {
    // Serialise creates per store so the limit holds under racing requests.
    await lockStoreWebhooks(tx.em, input.storeId);
    // The limit holds per mode: test endpoints never crowd out live ones.
    if (
      (await tx.em.count(WebhookSchema, { store: input.storeId, livemode: ctx.livemode })) >= MAX_WEBHOOKS_PER_STORE
    ) {
      throw new AppError(
        'webhook_limit_reached',
        `A store has at most ${MAX_WEBHOOKS_PER_STORE} webhooks in each mode.`,
      );
    }
    const now = ctx.clock.now();
    const webhook = tx.em.create(WebhookSchema, {
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
  return toWebhookView(await findWebhook(ctx, input));
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
  const webhook = await findWebhook(ctx, input);
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
  const webhook = await findWebhook(ctx, input);
  await ctx.em.remove(webhook).flush();
}

/** A new secret, shown once; signatures made with the old one stop verifying at once. */
export async function rotateWebhookSecret(
  ctx: ServiceContext,
  input: { storeId: string; webhookId: string },
): Promise<TWebhook & { secret: string }> {
  const webhook = await findWebhook(ctx, input);
  const secret = setSecret(ctx.deps.config, webhook);
  webhook.updatedAt = ctx.clock.now();
  await ctx.em.flush();
  return { ...toWebhookView(webhook), secret };
}
