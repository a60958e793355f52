/**
 * One attempt, from its body to what its outcome does, the same for the dispatcher's attempts
 * and the test ping: whether a claimed attempt is still to be sent (skipReason), the body
 * serialised once and signed with the endpoint's secret, sent (sender.ts), its outcome recorded
 * with the endpoint's failure streak (outcomes.repo.ts; the successes of claims together,
 * SuccessWriter), then the retry policy (retry-policy.ts) decides between the next attempt and
 * disabling the endpoint, whose owners are e-mailed once.
 */
import { WEBHOOK_TEST_EVENT } from '@svc/schemas';
import type { AppDeps } from '../../deps.js';
import type { ServiceContext } from '../request/context.js';
import { unseal } from '../../lib/crypto.js';
import { webhookAttempts, webhookLag } from '../../lib/metrics.js';
import { recordMail } from '../mail/outbox.js';
import { StoreMemberSchema } from '../stores/stores.entities.js';
import type { ClaimedAttempt } from './claims.repo.js';
import {
  ENDPOINT_DISABLED,
  recordFailure,
  recordSuccess,
  recordSuccesses,
  type AttemptRef,
  type ClaimedSuccess,
} from './outcomes.repo.js';
import { disableReason, nextAttemptDueAt } from './retry-policy.js';
import { sendToReceiver, type SendResult } from './sender.js';
import { signatureHeaders, webhookSecretKey } from './signing.js';
import { WebhookSchema } from './webhooks.entities.js';

/** What sending and recording an attempt read of the context: each write takes a fresh EntityManager of its own. */
export type DispatchContext = Pick<ServiceContext, 'deps' | 'clock' | 'log'>;

/** The body receivers get: serialised once per attempt, and exactly these bytes are signed. */
export function eventBody(event: {
  id: string;
  type: string;
  createdAt: Date;
  storeId: string;
  livemode: boolean;
  payload: Record<string, unknown>;
}): string {
  return JSON.stringify({
    id: event.id,
    event: event.type,
    createdAt: event.createdAt.toISOString(),
    storeId: event.storeId,
    livemode: event.livemode,
    data: event.payload,
  });
}

/** Endpoint secrets opened so far, by their sealed form (a rotation seals a new one). */
const openedSecrets = new Map<string, string>();
const OPENED_SECRETS_MAX = 1_000;

/**
 * An endpoint's signing secret, unsealed once per process rather than for every attempt (an
 * AES-GCM decryption each time, 3 % of a delivery's CPU). Kept in memory only, like the key it
 * is sealed under; at most OPENED_SECRETS_MAX of them.
 */
function openSecret(deps: AppDeps, sealed: string): string {
  let secret = openedSecrets.get(sealed);
  if (secret === undefined) {
    secret = unseal(webhookSecretKey(deps.config), sealed);
    if (openedSecrets.size >= OPENED_SECRETS_MAX) openedSecrets.clear();
    openedSecrets.set(sealed, secret);
  }
  return secret;
}

/** Signs and sends one attempt; never throws. */
export async function sendAttempt(
  ctx: DispatchContext,
  timeoutMs: number,
  attempt: { id: string; url: string; secretEnc: string; eventId: string; event: string; body: string },
): Promise<SendResult> {
  const { deps } = ctx;
  let secret: string;
  try {
    secret = openSecret(deps, attempt.secretEnc);
  } catch {
    ctx.log.error({ deliveryId: attempt.id }, 'webhook secret cannot be decrypted (APP_ENCRYPTION_KEY changed?)');
    return {
      ok: false,
      statusCode: null,
      bodyPreview: null,
      errorMessage: 'The signing secret cannot be read; rotate it.',
      durationMs: 0,
      retryAfterMs: null,
      requestHeaders: null,
    };
  }
  const now = ctx.clock.now();
  const headers = signatureHeaders(secret, {
    eventId: attempt.eventId,
    event: attempt.event,
    deliveryId: attempt.id,
    timestamp: Math.floor(now.getTime() / 1000),
    body: attempt.body,
  });
  return sendToReceiver(
    { url: attempt.url, headers, body: attempt.body, production: deps.config.isProduction, timeoutMs },
    now,
  );
}

/**
 * Why a claimed attempt is not sent, or null: its endpoint was disabled, or unsubscribed from the
 * event since the attempt was queued (the test event needs no subscription), or the event is gone.
 */
export function skipReason(claimed: ClaimedAttempt): string | null {
  return !claimed.enabled
    ? ENDPOINT_DISABLED
    : claimed.event !== WEBHOOK_TEST_EVENT && !claimed.events.includes(claimed.event)
      ? 'The endpoint is no longer subscribed to this event.'
      : claimed.payload === null || claimed.eventCreatedAt === null
        ? 'The event no longer exists.'
        : null;
}

/** Sends a claimed attempt that skipReason lets through, started at `startedAt` (sendAttempt: never throws). */
export async function sendClaimed(
  ctx: DispatchContext,
  timeoutMs: number,
  claimed: ClaimedAttempt,
  startedAt: Date,
): Promise<SendResult> {
  const createdAt = claimed.eventCreatedAt!;
  // The lag a merchant sees: from the event's commit (its created_at, in the same transaction) to its first send.
  if (claimed.attempt === 1) webhookLag.observe(Math.max(0, startedAt.getTime() - createdAt.getTime()) / 1000);
  const body = eventBody({
    id: claimed.eventId,
    type: claimed.event,
    createdAt,
    storeId: claimed.storeId,
    livemode: claimed.livemode,
    payload: claimed.payload!,
  });
  return sendAttempt(ctx, timeoutMs, { ...claimed, body });
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
export async function recordAttempt(
  ctx: DispatchContext,
  ref: AttemptRef,
  result: SendResult,
  opts: { retry: boolean; random: () => number },
): Promise<RecordOutcome> {
  const { deps } = ctx;
  const now = ctx.clock.now();
  webhookAttempts.inc({ outcome: result.ok ? 'success' : 'failed' });
  if (result.ok) return { recorded: await recordSuccess(deps.orm.em.fork(), ref, result, now), disabledReason: null };

  const thresholds = { days: deps.config.webhookDisableAfterDays, failures: deps.config.webhookDisableAfterFailures };
  const followUp = await recordFailure(deps.orm.em.fork(), ref, result, now, (streak) => {
    // A disabled endpoint (by its owner, or by a racing failure) is neither disabled again nor retried.
    if (!streak.enabled) return { disabledReason: null, nextDueAt: null };
    const reason = disableReason(
      { statusCode: result.statusCode, failureCount: streak.failureCount, firstFailureAt: streak.firstFailureAt },
      now,
      thresholds,
    );
    if (reason) return { disabledReason: reason, nextDueAt: null };
    return {
      disabledReason: null,
      nextDueAt: opts.retry ? nextAttemptDueAt(now, ref.attempt, result.retryAfterMs, opts.random) : null,
    };
  });
  if (!followUp) return { recorded: false, disabledReason: null };
  if (followUp.disabledReason) await emailOwnersAboutDisabling(deps, ref.webhookId, followUp.disabledReason, now);
  return { recorded: true, disabledReason: followUp.disabledReason };
}

/** The most successes one statement writes. */
const SUCCESS_BATCH = 500;

/**
 * The successes of claimed attempts, written together: one statement at a time, and every success
 * that comes in while it runs goes into the next (recordSuccesses). A lone success is written at
 * once; under load a statement carries many. `settled` resolves once every success recorded so
 * far is written (or failed to be).
 */
export class SuccessWriter {
  private queue: Array<{
    success: ClaimedSuccess;
    resolve: (recorded: boolean) => void;
    reject: (error: unknown) => void;
  }> = [];
  private writing = false;
  /** Successes recorded whose write has not settled yet. */
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly deps: AppDeps) {}

  /**
   * Writes a success with the others of the moment. One not written (its claim's lease was lost)
   * or whose write failed is logged: past its lease the attempt is reaped and sent again.
   */
  record(success: ClaimedSuccess): void {
    webhookAttempts.inc({ outcome: 'success' });
    const settled = new Promise<boolean>((resolve, reject) => {
      this.queue.push({ success, resolve, reject });
      this.write();
    })
      .then(
        (recorded) => {
          if (!recorded)
            this.deps.log.warn(
              { deliveryId: success.id },
              'webhook attempt outcome not recorded: its lease was taken over or the endpoint is gone',
            );
        },
        (error: unknown) =>
          this.deps.log.error({ err: error, deliveryId: success.id }, 'webhook attempt could not be recorded'),
      )
      .finally(() => this.pending.delete(settled));
    this.pending.add(settled);
  }

  /** Resolves once every success recorded so far has its outcome written (or failed to). */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  private write(): void {
    if (this.writing || this.queue.length === 0) return;
    const batch = this.queue.splice(0, SUCCESS_BATCH);
    this.writing = true;
    // No entity involved: the root EntityManager's pool, no unit of work forked per statement.
    recordSuccesses(
      this.deps.orm.em,
      batch.map((entry) => entry.success),
      this.deps.clock.now(),
    )
      .then(
        (written) => {
          for (const entry of batch) entry.resolve(written.has(entry.success.id));
        },
        (error: unknown) => {
          for (const entry of batch) entry.reject(error);
        },
      )
      .finally(() => {
        this.writing = false;
        this.write();
      });
  }
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
        await recordMail(
          { em, deps },
          {
            to: member.user.$.email,
            subject: `Webhook endpoint "${webhook.name}" was disabled`,
            text:
              `The webhook endpoint "${webhook.name}" (${webhook.url}) of your store ${webhook.store.$.name} was disabled on ${at.toISOString()}.\n\n` +
              `Reason: ${reason}\n\n` +
              `Events are not sent to it while it is disabled. When the receiver works again, enable the endpoint in the dashboard ` +
              `(or PATCH it with "enabled": true) and replay the events you missed.\n`,
          },
        );
      }
    }
    deps.log.warn({ webhookId, reason, owners }, 'webhook endpoint disabled');
  } catch (error) {
    deps.log.error({ err: error, webhookId }, 'could not e-mail the owners of a disabled webhook endpoint');
  }
}
