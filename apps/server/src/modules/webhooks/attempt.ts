/**
 * One attempt, from its body to what its outcome does, the same for the dispatcher's attempts
 * and the test ping: the body serialised once and signed with the endpoint's secret, sent
 * (sender.ts), its outcome recorded with the endpoint's failure streak (delivery-log.repo.ts),
 * then the retry policy (retry-policy.ts) decides between the next attempt and disabling the
 * endpoint, whose owners are e-mailed once.
 */
import type { AppDeps } from '../../deps.js';
import { unseal } from '../../lib/crypto.js';
import { webhookAttempts } from '../../lib/metrics.js';
import { StoreMemberSchema } from '../stores/stores.entities.js';
import { recordFailure, recordSuccess, type AttemptRef } from './delivery-log.repo.js';
import { disableReason, nextAttemptDueAt } from './retry-policy.js';
import { sendToReceiver, type SendResult } from './sender.js';
import { signatureHeaders, webhookSecretKey } from './signing.js';
import { WebhookSchema } from './webhooks.entities.js';

/** The body receivers get: serialised once per attempt, and exactly these bytes are signed. */
export function eventBody(event: { id: string; type: string; createdAt: Date; storeId: string; payload: Record<string, unknown> }): string {
  return JSON.stringify({ id: event.id, event: event.type, createdAt: event.createdAt.toISOString(), storeId: event.storeId, data: event.payload });
}

/** Signs and sends one attempt; never throws. */
export async function sendAttempt(
  deps: AppDeps,
  timeoutMs: number,
  attempt: { id: string; url: string; secretEnc: string; eventId: string; event: string; body: string },
): Promise<SendResult> {
  let secret: string;
  try {
    secret = unseal(webhookSecretKey(deps.config), attempt.secretEnc);
  } catch {
    deps.log.error({ deliveryId: attempt.id }, 'webhook secret cannot be decrypted (APP_ENCRYPTION_KEY changed?)');
    return { ok: false, statusCode: null, bodyPreview: null, errorMessage: 'The signing secret cannot be read; rotate it.', durationMs: 0, retryAfterMs: null };
  }
  const now = deps.clock.now();
  const headers = signatureHeaders(secret, {
    eventId: attempt.eventId,
    event: attempt.event,
    deliveryId: attempt.id,
    timestamp: Math.floor(now.getTime() / 1000),
    body: attempt.body,
  });
  return sendToReceiver({ url: attempt.url, headers, body: attempt.body, production: deps.config.isProduction, timeoutMs }, now);
}

export interface RecordOutcome {
  /** False when the lease was lost (another dispatcher took the attempt over) or the endpoint is gone. */
  recorded: boolean;
  /** Set when this outcome disabled the endpoint. */
  disabledReason: string | null;
}

/**
 * Writes an attempt's outcome and what follows from it: the endpoint's failure streak, the next
 * attempt (unless `retry` is off or it was the last), and disabling the endpoint as the retry
 * policy says. The owners are e-mailed after the commit, once: only the transaction that flips
 * `enabled` sends.
 */
export async function recordAttempt(deps: AppDeps, ref: AttemptRef, result: SendResult, opts: { retry: boolean; random: () => number }): Promise<RecordOutcome> {
  const now = deps.clock.now();
  webhookAttempts.inc({ outcome: result.ok ? 'success' : 'failed' });
  if (result.ok) return { recorded: await recordSuccess(deps.orm.em.fork(), ref, result, now), disabledReason: null };

  const thresholds = { days: deps.config.webhookDisableAfterDays, failures: deps.config.webhookDisableAfterFailures };
  const followUp = await recordFailure(deps.orm.em.fork(), ref, result, now, (streak) => {
    // A disabled endpoint (by its owner, or by a racing failure) is neither disabled again nor retried.
    if (!streak.enabled) return { disabledReason: null, nextDueAt: null };
    const reason = disableReason({ statusCode: result.statusCode, failureCount: streak.failureCount, firstFailureAt: streak.firstFailureAt }, now, thresholds);
    if (reason) return { disabledReason: reason, nextDueAt: null };
    return { disabledReason: null, nextDueAt: opts.retry ? nextAttemptDueAt(now, ref.attempt, result.retryAfterMs, opts.random) : null };
  });
  if (!followUp) return { recorded: false, disabledReason: null };
  if (followUp.disabledReason) await emailOwnersAboutDisabling(deps, ref.webhookId, followUp.disabledReason, now);
  return { recorded: true, disabledReason: followUp.disabledReason };
}

async function emailOwnersAboutDisabling(deps: AppDeps, webhookId: string, reason: string, at: Date): Promise<void> {
  try {
    const em = deps.orm.em.fork();
    const webhook = await em.findOne(WebhookSchema, { id: webhookId }, { populate: ['store'] });
    let owners = 0;
    if (webhook) {
      const members = await em.find(StoreMemberSchema, { store: webhook.store, role: 'owner' }, { populate: ['user'] });
      owners = members.length;
      for (const member of members) {
        await deps.mailer.send({
          to: member.user.$.email,
          subject: `Webhook endpoint "${webhook.name}" was disabled`,
          text:
            `The webhook endpoint "${webhook.name}" (${webhook.url}) of your store ${webhook.store.$.name} was disabled on ${at.toISOString()}.\n\n` +
            `Reason: ${reason}\n\n` +
            `Events are not sent to it while it is disabled. When the receiver works again, enable the endpoint in the dashboard ` +
            `(or PATCH it with "enabled": true) and replay the events you missed.\n`,
        });
      }
    }
    deps.log.warn({ webhookId, reason, owners }, 'webhook endpoint disabled');
  } catch (error) {
    deps.log.error({ err: error, webhookId }, 'could not e-mail the owners of a disabled webhook endpoint');
  }
}
