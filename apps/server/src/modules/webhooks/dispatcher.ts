/**
 * The webhook delivery engine. It owns the life of an attempt after the change that caused
 * it committed:
 *  - fan-out: an outbox event (`event.dispatched_at is null`) becomes one `queued` attempt per
 *    enabled endpoint of its store subscribed to its type, in the transaction that marks the
 *    event dispatched, so a crash at any point loses nothing and repeats nothing;
 *  - claim: due attempts (and attempts abandoned in flight past their lease) become `pending`
 *    with a lease in one `FOR UPDATE SKIP LOCKED` statement, so any number of dispatchers can
 *    share the table and none sends an attempt another one holds;
 *  - send and record: signed POST (sender.ts), then `success` / `failed` / `skipped`, the
 *    endpoint's failure streak, the next attempt on the retry schedule, and the automatic
 *    disabling of an endpoint that keeps failing (its owners are e-mailed once).
 * Wake-ups: a commit that wrote events wakes the dispatchers of this process at once and the
 * others through Redis pub/sub; polling covers a lost message and the no-Redis case.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppDeps } from '../../deps.js';
import { deriveKey, unseal } from '../../lib/crypto.js';
import { AppError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { webhookAttempts, webhookLag } from '../../lib/metrics.js';
import { recordEvent } from '../events/outbox.js';
import { notifyDispatchers, wakeChannel, wakeHubFor } from '../events/wake.js';
import { sendToReceiver, type SendResult } from './sender.js';
import { signatureHeaders } from './signing.js';
import { WebhookDeliverySchema, type WebhookDelivery } from './webhooks.entities.js';

/** Delay before attempt n + 1 after attempt n failed (DESIGN §5): 8 attempts in all. */
export const RETRY_DELAYS_MS = [5_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 5 * 3_600_000, 10 * 3_600_000, 10 * 3_600_000] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
/** Jitter on every retry delay: +/- this fraction. */
export const RETRY_JITTER = 0.1;
/** A receiver's Retry-After is honoured up to this far ahead. */
const MAX_RETRY_AFTER_MS = 24 * 3_600_000;
/** Delivery log rows are kept this long (DESIGN §5). */
export const DELIVERY_RETENTION_MS = 30 * 24 * 3_600_000;
export const TEST_EVENT = 'webhook.test';
const DAY_MS = 24 * 3_600_000;
/** An endpoint's last_delivered_at is kept to this resolution (its row is not rewritten more often). */
const LAST_DELIVERED_RESOLUTION_MS = 1_000;
/** A waiting attempt starts only with at least its timeout and this much of its lease left (at most half the slack). */
const LEASE_MARGIN_MS = 5_000;
/**
 * Only endpoints that answer this fast (moving average) are claimed ahead: a slow or hanging
 * endpoint's backlog stays in the table for any dispatcher with a free slot, instead of waiting
 * behind this one's attempts in flight. An endpoint not heard from yet counts as slow.
 */
const FAST_ENDPOINT_MS = 1_000;
/** The log's word for an attempt whose dispatcher died holding it (see reapAbandoned). */
export const ABANDONED_MESSAGE = 'Abandoned: the sending dispatcher stopped before recording an answer; sent again as the next attempt.';

export interface DispatcherOptions {
  /** Look for work this often without a wake-up (default WEBHOOK_POLL_MS). */
  pollMs?: number;
  /** Events fanned out per transaction. */
  batchSize?: number;
  /** Attempts in flight in this dispatcher. */
  concurrency?: number;
  /** Attempts in flight to one endpoint in this dispatcher. */
  perEndpoint?: number;
  /**
   * Attempts claimed ahead per endpoint slot (default WEBHOOK_PREFETCH): claimed attempts wait
   * here, leased, and start the moment a slot frees, so sending does not wait for a claim.
   */
  prefetch?: number;
  /** How long a claim holds an attempt; past it the attempt is abandoned and sent again (default WEBHOOK_LEASE_MS). */
  leaseMs?: number;
  /** Per-attempt budget (default WEBHOOK_TIMEOUT_MS). */
  timeoutMs?: number;
  /** Source of the retry jitter, in [0, 1). */
  random?: () => number;
  /** Cross-process wake-ups; without it this dispatcher polls (and still hears its own process). */
  redis?: RedisWakeClient | undefined;
}

/** The part of a node-redis client the wake-ups use: it publishes, and a duplicate subscribes. */
export interface RedisWakeClient {
  publish(channel: string, message: string): Promise<unknown>;
  duplicate(): RedisWakeSubscriber;
}
export interface RedisWakeSubscriber {
  connect(): Promise<unknown>;
  subscribe(channel: string, listener: (message: string, channel: string) => unknown): Promise<unknown>;
  close(): Promise<unknown>;
  destroy(): void;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

export interface DispatchCounts {
  /** Events turned into attempts. */
  events: number;
  /** Attempts the fan-out queued. */
  queued: number;
  /** Attempts this dispatcher claimed. */
  claimed: number;
  succeeded: number;
  failed: number;
  skipped: number;
}

/** A timestamp from a raw query (MikroORM leaves them as text) as a Date. */
const toDate = (value: string | Date): Date => (value instanceof Date ? value : new Date(value));

const zeroCounts = (): DispatchCounts => ({ events: 0, queued: 0, claimed: 0, succeeded: 0, failed: 0, skipped: 0 });

/** One attempt as a claim returns it, with what sending needs. */
interface ClaimedAttempt {
  id: string;
  webhook_id: string;
  store_id: string;
  event_id: string;
  event: string;
  attempt: number;
  url: string;
  secret_enc: string;
  enabled: boolean;
  events: string[];
  payload: Record<string, unknown> | null;
  /** Raw query results carry timestamps as PostgreSQL text (`2026-01-01 00:00:00+00`). */
  event_created_at: string | null;
}

/** Where an attempt's outcome is written: the claimed row (guarded by its lease) or a new row (a test ping). */
interface AttemptRef {
  id: string;
  webhookId: string;
  storeId: string;
  eventId: string;
  event: string;
  attempt: number;
  /** The claim's lease; null: the row does not exist yet and is inserted with the outcome. */
  lease: Date | null;
  startedAt: Date;
}

type Listener = () => void;

// ---------------------------------------------------------------------------------------------
// Attempt bookkeeping shared by the dispatcher and the test ping

/** The delay before the attempt after `attempt`, with jitter; null after the last attempt. */
export function retryDelayMs(attempt: number, random: () => number = Math.random): number | null {
  const base = RETRY_DELAYS_MS[attempt - 1];
  if (base === undefined) return null;
  return Math.round(base * (1 - RETRY_JITTER + 2 * RETRY_JITTER * random()));
}

function secretKey(deps: AppDeps): Buffer {
  return deriveKey(deps.config.encryptionKey, 'webhook-secret');
}

/** The body receivers get: serialised once per attempt, and exactly these bytes are signed. */
export function eventBody(event: { id: string; type: string; createdAt: Date; storeId: string; payload: Record<string, unknown> }): string {
  return JSON.stringify({ id: event.id, event: event.type, createdAt: event.createdAt.toISOString(), storeId: event.storeId, data: event.payload });
}

/** Signs and sends one attempt; never throws. */
async function sendAttempt(
  deps: AppDeps,
  timeoutMs: number,
  attempt: { id: string; url: string; secretEnc: string; eventId: string; event: string; body: string },
): Promise<SendResult> {
  let secret: string;
  try {
    secret = unseal(secretKey(deps), attempt.secretEnc);
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

interface RecordOutcome {
  /** False when the lease was lost (another dispatcher took the attempt over) or the endpoint is gone. */
  recorded: boolean;
  /** Set when this outcome disabled the endpoint. */
  disabledReason: string | null;
}

/**
 * Writes an attempt's outcome and what follows from it: the endpoint's failure streak, the next
 * attempt (unless `retry` is off or it was the last), and disabling the endpoint on 410 Gone or
 * when it has failed for WEBHOOK_DISABLE_AFTER_DAYS with at least WEBHOOK_DISABLE_AFTER_FAILURES
 * consecutive failures. The owners are e-mailed after the commit, once: only the transaction
 * that flips `enabled` sends.
 */
async function recordAttempt(deps: AppDeps, ref: AttemptRef, result: SendResult, opts: { retry: boolean; random: () => number }): Promise<RecordOutcome> {
  const now = deps.clock.now();
  const status = result.ok ? 'success' : 'failed';
  webhookAttempts.inc({ outcome: status });
  const outcome = [status, result.statusCode, result.bodyPreview, result.errorMessage, result.durationMs] as const;
  const write =
    ref.lease === null
      ? {
          sql: `insert into webhook_delivery (id, webhook_id, store_id, event_id, event, attempt, due_at, created_at, updated_at,
                  status, response_code, response_body_preview, error_message, duration_ms)
                values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) returning webhook_id`,
          params: [ref.id, ref.webhookId, ref.storeId, ref.eventId, ref.event, ref.attempt, ref.startedAt, ref.startedAt, now, ...outcome],
        }
      : {
          sql: `update webhook_delivery set status = ?, response_code = ?, response_body_preview = ?, error_message = ?, duration_ms = ?,
                  locked_until = null, updated_at = ?
                where id = ? and status = 'pending' and locked_until = ? returning webhook_id`,
          params: [...outcome, now, ref.id, ref.lease],
        };

  if (result.ok) {
    // One statement: the attempt, and the end of the endpoint's failure streak. The endpoint's row
    // is rewritten only when that changes something or its last_delivered_at is a second old: a
    // busy endpoint's row is not rewritten for every delivery (it was the hottest row of a run).
    const rows = await deps.orm.em.fork().execute<Array<{ recorded: number }>>(
      `with d as (${write.sql}),
       w as (
         update webhook w set failure_count = 0, first_failure_at = null, last_delivered_at = ? from d
         where w.id = d.webhook_id
           and (w.failure_count <> 0 or w.first_failure_at is not null or w.last_delivered_at is null or w.last_delivered_at < ?)
         returning w.id
       )
       select (select count(*) from d)::int as recorded`,
      [...write.params, now, new Date(now.getTime() - LAST_DELIVERED_RESOLUTION_MS)],
    );
    return { recorded: (rows[0]?.recorded ?? 0) > 0, disabledReason: null };
  }

  const outcomeOfFailure = await deps.orm.em.fork().transactional(async (em): Promise<RecordOutcome> => {
    const written: unknown[] = await em.execute(write.sql, write.params);
    if (written.length === 0) return { recorded: false, disabledReason: null };
    const [hook] = await em.execute<Array<{ failure_count: number; first_failure_at: string; enabled: boolean }>>(
      `update webhook set failure_count = failure_count + 1, first_failure_at = coalesce(first_failure_at, ?)
       where id = ? returning failure_count, first_failure_at, enabled`,
      [now, ref.webhookId],
    );
    if (!hook) return { recorded: false, disabledReason: null };
    const { webhookDisableAfterDays: days, webhookDisableAfterFailures: failures } = deps.config;
    let reason: string | null = null;
    if (result.statusCode === 410) {
      reason = 'The receiver answered 410 Gone.';
    } else if (hook.failure_count >= failures && now.getTime() - toDate(hook.first_failure_at).getTime() >= days * DAY_MS) {
      reason = `No successful delivery for ${days} days and ${hook.failure_count} failed attempts in a row.`;
    }
    if (hook.enabled && reason) {
      await em.execute(`update webhook set enabled = false, disabled_at = ?, updated_at = ? where id = ?`, [now, now, ref.webhookId]);
      await em.execute(
        `update webhook_delivery set status = 'skipped', error_message = 'Endpoint disabled.', updated_at = ?
         where webhook_id = ? and status = 'queued'`,
        [now, ref.webhookId],
      );
      return { recorded: true, disabledReason: reason };
    }
    const delay = opts.retry && hook.enabled ? retryDelayMs(ref.attempt, opts.random) : null;
    if (delay !== null) {
      const retryAfter = result.retryAfterMs === null ? 0 : Math.min(result.retryAfterMs, MAX_RETRY_AFTER_MS);
      const dueAt = new Date(now.getTime() + Math.max(delay, retryAfter));
      await em.execute(
        `insert into webhook_delivery (id, webhook_id, store_id, event_id, event, attempt, status, due_at, created_at, updated_at)
         values (?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?) on conflict (webhook_id, event_id, attempt) do nothing`,
        [newId(), ref.webhookId, ref.storeId, ref.eventId, ref.event, ref.attempt + 1, dueAt, now, now],
      );
    }
    return { recorded: true, disabledReason: null };
  });
  if (outcomeOfFailure.disabledReason) await emailOwnersAboutDisabling(deps, ref.webhookId, outcomeOfFailure.disabledReason, now);
  return outcomeOfFailure;
}

async function emailOwnersAboutDisabling(deps: AppDeps, webhookId: string, reason: string, at: Date): Promise<void> {
  try {
    const owners = await deps.orm.em.fork().execute<Array<{ email: string; name: string; url: string; store_name: string; store_id: string }>>(
      `select u.email, w.name, w.url, s.name as store_name, s.id as store_id
       from webhook w join store s on s.id = w.store_id
       join store_member m on m.store_id = s.id and m.role = 'owner' join "user" u on u.id = m.user_id
       where w.id = ?`,
      [webhookId],
    );
    for (const owner of owners) {
      await deps.mailer.send({
        to: owner.email,
        subject: `Webhook endpoint "${owner.name}" was disabled`,
        text:
          `The webhook endpoint "${owner.name}" (${owner.url}) of your store ${owner.store_name} was disabled on ${at.toISOString()}.\n\n` +
          `Reason: ${reason}\n\n` +
          `Events are not sent to it while it is disabled. When the receiver works again, enable the endpoint in the dashboard ` +
          `(or PATCH it with "enabled": true) and replay the events you missed.\n`,
      });
    }
    deps.log.warn({ webhookId, reason, owners: owners.length }, 'webhook endpoint disabled');
  } catch (error) {
    deps.log.error({ err: error, webhookId }, 'could not e-mail the owners of a disabled webhook endpoint');
  }
}

// ---------------------------------------------------------------------------------------------
// The dispatcher

export class Dispatcher {
  private readonly pollMs: number;
  private readonly batchSize: number;
  private readonly concurrency: number;
  private readonly perEndpoint: number;
  private readonly minClaim: number;
  /** Held (in flight + waiting) per endpoint, and in all. */
  private readonly holdPerEndpoint: number;
  /** Lease a waiting attempt must have left beyond its timeout to start (a fresh claim always has). */
  private readonly leaseMarginMs: number;
  private readonly maxHeld: number;
  private readonly leaseMs: number;
  private readonly timeoutMs: number;
  private readonly random: () => number;
  private readonly redis: RedisWakeClient | undefined;

  private readonly inFlight = new Map<string, Promise<void>>();
  /** In-flight attempts per endpoint. */
  private readonly busy = new Map<string, number>();
  /** Claimed attempts not started yet, per endpoint, in claim order. */
  private readonly waiting = new Map<string, Array<ClaimedAttempt & { lease: Date }>>();
  private waitingCount = 0;
  /** Moving average of attempt durations per endpoint, ms. */
  private readonly speed = new Map<string, number>();
  private readonly counts = zeroCounts();
  private claiming: Promise<number> | undefined;
  /** fill() was asked for while a claim ran: claim again when it is done. */
  private claimAgain = false;
  private loop: Promise<void> | undefined;
  private running = false;
  private stopping = false;
  /** Set by wake(): fan out (and claim) at the next turn of the loop. */
  private wakeWanted = false;
  /** The last claim found work, so a freed slot is worth another claim. */
  private moreMayBeDue = false;
  private signal: (() => void) | undefined;
  private kicked = false;
  private readonly onWake = () => this.wake();
  private subscriber: RedisWakeSubscriber | undefined;
  private readonly publish: Listener;

  constructor(
    private readonly deps: AppDeps,
    options: DispatcherOptions = {},
  ) {
    this.pollMs = options.pollMs ?? deps.config.webhookPollMs;
    this.batchSize = options.batchSize ?? 200;
    this.concurrency = options.concurrency ?? 32;
    this.perEndpoint = options.perEndpoint ?? 4;
    const prefetch = Math.max(0, options.prefetch ?? deps.config.webhookPrefetch);
    this.holdPerEndpoint = this.perEndpoint * (1 + prefetch);
    this.maxHeld = this.concurrency * (1 + Math.min(prefetch, 3));
    this.minClaim = Math.max(1, Math.floor(this.maxHeld / 8));
    this.leaseMs = options.leaseMs ?? deps.config.webhookLeaseMs;
    this.timeoutMs = options.timeoutMs ?? deps.config.webhookTimeoutMs;
    this.leaseMarginMs = Math.max(0, Math.min(LEASE_MARGIN_MS, (this.leaseMs - this.timeoutMs) / 2));
    this.random = options.random ?? Math.random;
    this.redis = options.redis;
    const channel = wakeChannel(deps.config.redisKeyPrefix);
    // One message in flight at a time: commits that land meanwhile share the next one.
    let publishing = false;
    let again = false;
    this.publish = () => {
      if (!this.redis) return;
      if (publishing) {
        again = true;
        return;
      }
      publishing = true;
      this.redis
        .publish(channel, '1')
        .catch((error: unknown) => deps.log.debug({ err: error }, 'webhook wake-up not published'))
        .finally(() => {
          publishing = false;
          if (again) {
            again = false;
            this.publish();
          }
        });
    };
  }

  /** Runs until stop(): wake-ups, polling, and sends pipelined up to the concurrency. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopping = false;
    const hub = wakeHubFor(this.deps.orm);
    hub.listeners.add(this.onWake);
    if (this.redis) {
      hub.publishers.add(this.publish);
      this.subscribe(this.redis);
    }
    this.wakeWanted = true;
    this.loop = this.run();
  }

  /** Stops claiming and waits for the attempts in flight to be sent and recorded. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.running = false;
    const hub = wakeHubFor(this.deps.orm);
    hub?.listeners.delete(this.onWake);
    hub?.publishers.delete(this.publish);
    this.kick();
    await this.loop;
    await this.claiming;
    await this.releaseWaiting();
    await Promise.allSettled([...this.inFlight.values()]);
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    if (subscriber) await subscriber.close().catch(() => subscriber.destroy());
  }

  /** Work is due now (an event committed, a retry was queued). */
  wake(): void {
    this.wakeWanted = true;
    this.kick();
  }

  /**
   * One full pass: fans out every undispatched event, then claims and sends until nothing due
   * is left and nothing is in flight. Returns what this pass did.
   */
  async runOnce(): Promise<DispatchCounts> {
    const before = { ...this.counts };
    await this.fanOutAll();
    await this.reapAbandoned();
    for (;;) {
      const claimed = await this.fill();
      this.pump();
      if (claimed === 0 && this.inFlight.size === 0 && this.waitingCount === 0) break;
      if (this.inFlight.size > 0) await Promise.race(this.inFlight.values());
    }
    const after = this.counts;
    return {
      events: after.events - before.events,
      queued: after.queued - before.queued,
      claimed: after.claimed - before.claimed,
      succeeded: after.succeeded - before.succeeded,
      failed: after.failed - before.failed,
      skipped: after.skipped - before.skipped,
    };
  }

  private subscribe(redis: RedisWakeClient): void {
    const subscriber = redis.duplicate();
    this.subscriber = subscriber;
    subscriber.on('error', (error) => this.deps.log.debug({ err: error }, 'webhook wake-up subscriber error'));
    const channel = wakeChannel(this.deps.config.redisKeyPrefix);
    // Reconnects resubscribe by themselves; until the first connect, polling serves.
    subscriber
      .connect()
      .then(() => (this.subscriber === subscriber ? subscriber.subscribe(channel, this.onWake) : undefined))
      .catch((error: unknown) => this.deps.log.warn({ err: error }, 'webhook wake-ups not subscribed; polling only'));
  }

  /** Wakes the loop (or keeps it from sleeping when it is busy with a pass). */
  private kick(): void {
    this.kicked = true;
    this.signal?.();
  }

  private async run(): Promise<void> {
    let lastFanOut = 0;
    let lastReap = -Infinity;
    let failures = 0;
    while (this.running) {
      this.kicked = false;
      const fanOutDue = this.wakeWanted || performance.now() - lastFanOut >= this.pollMs;
      try {
        if (fanOutDue) {
          this.wakeWanted = false;
          lastFanOut = performance.now();
          await this.fanOutAll();
          // Abandoned attempts are at least a lease old: looking once per poll interval is enough.
          if (lastFanOut - lastReap >= this.pollMs) {
            lastReap = lastFanOut;
            await this.reapAbandoned();
          }
          await this.fill();
        } else if (this.moreMayBeDue) {
          await this.fill();
        }
        failures = 0;
      } catch (error) {
        failures++;
        this.deps.log.error({ err: error }, 'webhook dispatcher pass failed');
      }
      if (!this.running) break;
      if (this.kicked && failures === 0) continue;
      const wait = failures > 0 ? Math.min(this.pollMs * 2 ** failures, 30_000) : Math.max(0, this.pollMs - (performance.now() - lastFanOut));
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        this.signal = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.signal = undefined;
    }
  }

  /** Turns undispatched events into queued attempts, a batch per transaction, until none is left. */
  private async fanOutAll(): Promise<void> {
    for (;;) {
      const events = await this.fanOutBatch();
      if (events < this.batchSize) return;
    }
  }

  private async fanOutBatch(): Promise<number> {
    const now = this.deps.clock.now();
    const { events, queued } = await this.deps.orm.em.fork().transactional(async (em) => {
      const events = await em.execute<Array<{ id: string; store_id: string; type: string }>>(
        `select id, store_id, type from event where dispatched_at is null order by created_at limit ? for update skip locked`,
        [this.batchSize],
      );
      if (events.length === 0) return { events: 0, queued: 0 };
      const storeIds = [...new Set(events.map((e) => e.store_id))];
      const hooks = await em.execute<Array<{ id: string; store_id: string; events: string[] }>>(
        `select id, store_id, events from webhook where enabled and store_id in (?)`,
        [storeIds],
      );
      const rows: unknown[][] = [];
      for (const event of events) {
        for (const hook of hooks) {
          if (hook.store_id === event.store_id && hook.events.includes(event.type)) {
            rows.push([newId(), hook.id, event.store_id, event.id, event.type, now, now, now]);
          }
        }
      }
      for (let start = 0; start < rows.length; start += 500) {
        const chunk = rows.slice(start, start + 500);
        await em.execute(
          `insert into webhook_delivery (id, webhook_id, store_id, event_id, event, attempt, status, due_at, created_at, updated_at)
           values ${chunk.map(() => `(?, ?, ?, ?, ?, 1, 'queued', ?, ?, ?)`).join(', ')}
           on conflict (webhook_id, event_id, attempt) do nothing`,
          chunk.flat(),
        );
      }
      await em.execute(`update event set dispatched_at = ? where id in (?)`, [now, events.map((e) => e.id)]);
      return { events: events.length, queued: rows.length };
    });
    this.counts.events += events;
    this.counts.queued += queued;
    return events;
  }

  /**
   * Attempts still `pending` past their lease: the dispatcher that claimed them died (or stalled)
   * before recording an outcome. Each is recorded as failed ("abandoned") and its event is queued
   * again, due now, as the next attempt, so the log shows both tries and nothing stays pending.
   * The endpoint's failure streak is left alone: the receiver did not fail.
   */
  private async reapAbandoned(): Promise<number> {
    const now = this.deps.clock.now();
    return this.deps.orm.em.fork().transactional(async (em) => {
      const abandoned = await em.execute<Array<{ webhook_id: string; store_id: string; event_id: string; event: string; attempt: number }>>(
        `update webhook_delivery d set status = 'failed', error_message = ?, locked_until = null, updated_at = ?
         where d.id in (
           select id from webhook_delivery where status = 'pending' and locked_until < ? order by locked_until limit 500 for update skip locked
         )
         returning d.webhook_id, d.store_id, d.event_id, d.event, d.attempt`,
        [ABANDONED_MESSAGE, now, now],
      );
      if (abandoned.length === 0) return 0;
      await em.execute(
        `insert into webhook_delivery (id, webhook_id, store_id, event_id, event, attempt, status, due_at, created_at, updated_at)
         values ${abandoned.map(() => `(?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?)`).join(', ')}
         on conflict (webhook_id, event_id, attempt) do nothing`,
        abandoned.flatMap((row) => [newId(), row.webhook_id, row.store_id, row.event_id, row.event, row.attempt + 1, now, now, now]),
      );
      this.deps.log.warn({ attempts: abandoned.length }, 'webhook attempts abandoned past their lease; queued again');
      return abandoned.length;
    });
  }

  /** Claims while there is room and work; one claim at a time. Returns how many it claimed. */
  private fill(): Promise<number> {
    if (this.claiming) {
      // Work may have come due after that claim read the table (a wake-up mid-claim): claim again after it.
      this.claimAgain = true;
      return this.claiming;
    }
    const claiming = (async () => {
      let total = 0;
      while (!this.stopping) {
        const held = this.inFlight.size + this.waitingCount;
        const room = this.maxHeld - held;
        // Claims come in batches: a few freed places among many held ones wait for more.
        if (room <= 0 || (room < this.minClaim && held > 0)) break;
        const claimed = await this.claim(room);
        total += claimed.length;
        this.moreMayBeDue = claimed.length > 0;
        for (const attempt of claimed) this.hold(attempt);
        this.pump();
        if (claimed.length < room) break;
      }
      return total;
    })();
    this.claiming = claiming;
    // Cleared once settled (also when the body above finished without waiting for anything).
    const settled = () => {
      if (this.claiming !== claiming) return;
      this.claiming = undefined;
      if (this.claimAgain) {
        this.claimAgain = false;
        this.moreMayBeDue = true;
        if (this.running) this.kick();
      }
    };
    void claiming.then(settled, settled);
    return claiming;
  }

  private held(webhookId: string): number {
    return (this.busy.get(webhookId) ?? 0) + (this.waiting.get(webhookId)?.length ?? 0);
  }

  /** How many attempts of this endpoint this dispatcher may hold: in flight, plus ahead when it is fast. */
  private holdLimit(webhookId: string): number {
    return (this.speed.get(webhookId) ?? Infinity) <= FAST_ENDPOINT_MS ? this.holdPerEndpoint : this.perEndpoint;
  }

  private recordSpeed(webhookId: string, durationMs: number): void {
    const previous = this.speed.get(webhookId);
    if (previous === undefined && this.speed.size >= 10_000) this.speed.clear();
    this.speed.set(webhookId, previous === undefined ? durationMs : previous * 0.7 + durationMs * 0.3);
  }

  private hold(attempt: ClaimedAttempt & { lease: Date }): void {
    const queue = this.waiting.get(attempt.webhook_id);
    if (queue) queue.push(attempt);
    else this.waiting.set(attempt.webhook_id, [attempt]);
    this.waitingCount++;
  }

  /**
   * Starts waiting attempts while there are free slots, taking endpoints in turn. An attempt
   * whose lease would run out before it could finish is given back instead of sent (another
   * dispatcher, or this one, claims it again): a send must never outlive its lease.
   */
  private pump(): void {
    if (this.stopping) return;
    const now = this.deps.clock.now().getTime();
    const expiring: Array<ClaimedAttempt & { lease: Date }> = [];
    let started = true;
    while (started && this.inFlight.size < this.concurrency && this.waitingCount > 0) {
      started = false;
      for (const [webhookId, queue] of this.waiting) {
        if (this.inFlight.size >= this.concurrency) break;
        if ((this.busy.get(webhookId) ?? 0) >= this.perEndpoint) continue;
        const attempt = queue.shift()!;
        this.waitingCount--;
        if (queue.length === 0) this.waiting.delete(webhookId);
        if (attempt.lease.getTime() - now < this.timeoutMs + this.leaseMarginMs) expiring.push(attempt);
        else this.launch(attempt);
        started = true;
      }
    }
    if (expiring.length > 0) void this.giveBack(expiring);
  }

  /** Claimed attempts not sent: back to `queued` (if still ours), due as they were. */
  private async giveBack(attempts: Array<ClaimedAttempt & { lease: Date }>): Promise<void> {
    if (attempts.length === 0) return;
    try {
      await this.deps.orm.em.fork().execute(
        `update webhook_delivery d set status = 'queued', locked_until = null, updated_at = ?
         from (values ${attempts.map(() => '(?, ?::timestamptz)').join(', ')}) as mine(id, lease)
         where d.id = mine.id and d.status = 'pending' and d.locked_until = mine.lease`,
        [this.deps.clock.now(), ...attempts.flatMap((a) => [a.id, a.lease])],
      );
      this.kick();
    } catch (error) {
      // Left pending: reaped as abandoned once the lease ran out.
      this.deps.log.warn({ err: error, attempts: attempts.length }, 'claimed webhook attempts not given back');
    }
  }

  private async releaseWaiting(): Promise<void> {
    const all = [...this.waiting.values()].flat();
    this.waiting.clear();
    this.waitingCount = 0;
    await this.giveBack(all);
  }

  /** The endpoint was disabled: its waiting attempts are skipped, not sent. */
  private async dropWaiting(webhookId: string): Promise<void> {
    const queue = this.waiting.get(webhookId) ?? [];
    this.waiting.delete(webhookId);
    this.waitingCount -= queue.length;
    for (const attempt of queue) {
      await this.deps.orm.em.fork().execute(
        `update webhook_delivery set status = 'skipped', error_message = 'Endpoint disabled.', locked_until = null, updated_at = ?
         where id = ? and status = 'pending' and locked_until = ?`,
        [this.deps.clock.now(), attempt.id, attempt.lease],
      );
      this.counts.skipped++;
      webhookAttempts.inc({ outcome: 'skipped' });
    }
  }

  /**
   * Takes up to `room` due `queued` attempts (abandoned ones were queued again by
   * reapAbandoned). At most `perEndpoint` in flight per endpoint here; rows another dispatcher
   * is claiming at the same moment are skipped, not waited for.
   */
  private async claim(room: number): Promise<Array<ClaimedAttempt & { lease: Date }>> {
    const now = this.deps.clock.now();
    const lease = new Date(now.getTime() + this.leaseMs);
    // Each endpoint's slots start after what this dispatcher holds of it, and after the places a
    // slow (or unknown) endpoint may not use: the claim caps every endpoint at its hold limit.
    const endpoints = new Set([...this.busy.keys(), ...this.waiting.keys(), ...this.speed.keys()]);
    const offsets = Object.fromEntries([...endpoints].map((id) => [id, this.held(id) + this.holdPerEndpoint - this.holdLimit(id)]));
    const busy = JSON.stringify(offsets);
    // Endpoints holding all they may are left out of the scan, so a backlog at a slow endpoint
    // does not fill the window and hold up the others.
    const saturated = JSON.stringify([...endpoints].filter((id) => this.held(id) >= this.holdLimit(id)));
    const rows = await this.deps.orm.em.fork().execute<ClaimedAttempt[]>(
      `with candidates as (
         select id, webhook_id, event_id, due_at from webhook_delivery
         where status = 'queued' and due_at <= ?
           and webhook_id <> all (select jsonb_array_elements_text(?::jsonb))
         order by due_at limit ?
         for update skip locked
       ), ranked as (
         select c.*, row_number() over (partition by c.webhook_id order by c.due_at, c.id) + coalesce(b.value::int, ?) as slot
         from candidates c left join jsonb_each_text(?::jsonb) b on b.key = c.webhook_id
       ), chosen as (
         select * from ranked where slot <= ? order by due_at, id limit ?
       )
       update webhook_delivery d set status = 'pending', locked_until = ?, updated_at = ?
       from chosen c join webhook w on w.id = c.webhook_id left join event e on e.id = c.event_id
       where d.id = c.id
       returning d.id, d.webhook_id, d.store_id, d.event_id, d.event, d.attempt, w.url, w.secret_enc, w.enabled, w.events,
         e.payload, e.created_at as event_created_at`,
      [now, saturated, Math.min(Math.max(room * 2, 32), 512), this.holdPerEndpoint - this.perEndpoint, busy, this.holdPerEndpoint, room, lease, now],
    );
    this.counts.claimed += rows.length;
    return rows.map((row) => Object.assign(row, { lease }));
  }

  private launch(claimed: ClaimedAttempt): void {
    this.busy.set(claimed.webhook_id, (this.busy.get(claimed.webhook_id) ?? 0) + 1);
    const work = this.deliver(claimed as ClaimedAttempt & { lease: Date })
      .catch((error: unknown) => this.deps.log.error({ err: error, deliveryId: claimed.id }, 'webhook attempt could not be recorded'))
      .finally(() => {
        const left = (this.busy.get(claimed.webhook_id) ?? 1) - 1;
        if (left > 0) this.busy.set(claimed.webhook_id, left);
        else this.busy.delete(claimed.webhook_id);
        this.inFlight.delete(claimed.id);
        // A freed slot: the next waiting attempt starts at once. Claim again when what is held
        // ran low and the last claim found work, or when this endpoint had all it may hold (its
        // backlog was left out of the last claim); the loop only, runOnce claims by itself.
        this.pump();
        const low = this.inFlight.size + this.waitingCount <= this.maxHeld - this.minClaim;
        const wasFull = this.held(claimed.webhook_id) + 1 >= this.holdLimit(claimed.webhook_id);
        if (this.running && ((this.moreMayBeDue && low) || wasFull)) this.kick();
      });
    this.inFlight.set(claimed.id, work);
  }

  private async deliver(claimed: ClaimedAttempt & { lease: Date }): Promise<void> {
    const skipReason = !claimed.enabled
      ? 'Endpoint disabled.'
      : claimed.event !== TEST_EVENT && !claimed.events.includes(claimed.event)
        ? 'The endpoint is no longer subscribed to this event.'
        : claimed.payload === null || claimed.event_created_at === null
          ? 'The event no longer exists.'
          : null;
    if (skipReason) {
      await this.deps.orm.em.fork().execute(
        `update webhook_delivery set status = 'skipped', error_message = ?, locked_until = null, updated_at = ?
         where id = ? and status = 'pending' and locked_until = ?`,
        [skipReason, this.deps.clock.now(), claimed.id, claimed.lease],
      );
      this.counts.skipped++;
      webhookAttempts.inc({ outcome: 'skipped' });
      return;
    }
    const startedAt = this.deps.clock.now();
    // The lag a merchant sees: from the event's commit (its created_at, in the same transaction) to its first send.
    if (claimed.attempt === 1) webhookLag.observe(Math.max(0, startedAt.getTime() - toDate(claimed.event_created_at!).getTime()) / 1000);
    const body = eventBody({ id: claimed.event_id, type: claimed.event, createdAt: toDate(claimed.event_created_at!), storeId: claimed.store_id, payload: claimed.payload! });
    const result = await sendAttempt(this.deps, this.timeoutMs, {
      id: claimed.id,
      url: claimed.url,
      secretEnc: claimed.secret_enc,
      eventId: claimed.event_id,
      event: claimed.event,
      body,
    });
    const ref: AttemptRef = {
      id: claimed.id,
      webhookId: claimed.webhook_id,
      storeId: claimed.store_id,
      eventId: claimed.event_id,
      event: claimed.event,
      attempt: claimed.attempt,
      lease: claimed.lease,
      startedAt,
    };
    // The test event is sent only by sendTestPing and a manual retry: never retried by itself.
    this.recordSpeed(claimed.webhook_id, result.durationMs);
    const { recorded, disabledReason } = await recordAttempt(this.deps, ref, result, { retry: claimed.event !== TEST_EVENT, random: this.random });
    if (disabledReason) await this.dropWaiting(claimed.webhook_id);
    if (!recorded) this.deps.log.warn({ deliveryId: claimed.id }, 'webhook attempt outcome not recorded: its lease was taken over or the endpoint is gone');
    if (result.ok) this.counts.succeeded++;
    else this.counts.failed++;
  }
}

// ---------------------------------------------------------------------------------------------
// Operations the webhook API calls

async function loadWebhook(em: EntityManager, webhookId: string) {
  const [hook] = await em.execute<Array<{ id: string; store_id: string; url: string; secret_enc: string; enabled: boolean; events: string[] }>>(
    `select id, store_id, url, secret_enc, enabled, events from webhook where id = ?`,
    [webhookId],
  );
  if (!hook) throw new AppError('not_found', 'Webhook not found.');
  return hook;
}

/**
 * The test ping: event `webhook.test` (a fresh event id, data `{ webhookId }`) sent now, while
 * the caller waits, as attempt 1 of its own. It is never retried, and counts for the failure
 * streak like any attempt. A disabled endpoint -> webhook_disabled.
 */
export async function sendTestPing(deps: AppDeps, webhookId: string, opts: { timeoutMs?: number } = {}): Promise<WebhookDelivery> {
  const em = deps.orm.em.fork();
  const hook = await loadWebhook(em, webhookId);
  if (!hook.enabled) throw new AppError('webhook_disabled', 'The webhook is disabled; enable it before sending a test event.');
  const createdAt = deps.clock.now();
  const payload = { webhookId };
  // Kept as an outbox row (already dispatched: nobody subscribes to it) so a manual retry can resend it.
  const eventId = await recordEvent(em, { storeId: hook.store_id, type: TEST_EVENT, payload, at: createdAt, dispatched: true });
  const id = newId();
  const body = eventBody({ id: eventId, type: TEST_EVENT, createdAt, storeId: hook.store_id, payload });
  const result = await sendAttempt(deps, opts.timeoutMs ?? deps.config.webhookTimeoutMs, { id, url: hook.url, secretEnc: hook.secret_enc, eventId, event: TEST_EVENT, body });
  await recordAttempt(
    deps,
    { id, webhookId, storeId: hook.store_id, eventId, event: TEST_EVENT, attempt: 1, lease: null, startedAt: createdAt },
    result,
    { retry: false, random: Math.random },
  );
  return deps.orm.em.fork().findOneOrFail(WebhookDeliverySchema, { id });
}

/** Inserts the next attempt of each (event, attempt) given, skipping any that a racing insert took. */
async function queueAttempts(em: EntityManager, webhookId: string, storeId: string, rows: Array<{ eventId: string; event: string; attempt: number }>, now: Date): Promise<string[]> {
  const ids: string[] = [];
  for (let start = 0; start < rows.length; start += 500) {
    const chunk = rows.slice(start, start + 500);
    const params: unknown[] = [];
    const tuples = chunk.map((row) => {
      params.push(newId(), webhookId, storeId, row.eventId, row.event, row.attempt, now, now, now);
      return `(?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?)`;
    });
    const inserted = await em.execute<Array<{ id: string }>>(
      `insert into webhook_delivery (id, webhook_id, store_id, event_id, event, attempt, status, due_at, created_at, updated_at)
       values ${tuples.join(', ')} on conflict (webhook_id, event_id, attempt) do nothing returning id`,
      params,
    );
    ids.push(...inserted.map((row) => row.id));
  }
  return ids;
}

/**
 * Sends a delivery's event again now: a new `queued` attempt (the highest attempt number of that
 * endpoint and event + 1). A disabled endpoint -> webhook_disabled; an unknown delivery -> not_found.
 */
export async function retryDelivery(deps: AppDeps, deliveryId: string): Promise<WebhookDelivery> {
  const em = deps.orm.em.fork();
  const [delivery] = await em.execute<Array<{ webhook_id: string; store_id: string; event_id: string; event: string }>>(
    `select webhook_id, store_id, event_id, event from webhook_delivery where id = ?`,
    [deliveryId],
  );
  if (!delivery) throw new AppError('not_found', 'Delivery not found.');
  const hook = await loadWebhook(em, delivery.webhook_id);
  if (!hook.enabled) throw new AppError('webhook_disabled', 'The webhook is disabled; enable it before sending events again.');
  // A racing retry or scheduled attempt may take the same number: read again and take the next.
  for (let round = 0; round < 5; round++) {
    const [{ last }] = await em.execute<[{ last: number }]>(
      `select coalesce(max(attempt), 0)::int as last from webhook_delivery where webhook_id = ? and event_id = ?`,
      [delivery.webhook_id, delivery.event_id],
    );
    const [id] = await queueAttempts(em, delivery.webhook_id, delivery.store_id, [{ eventId: delivery.event_id, event: delivery.event, attempt: last + 1 }], deps.clock.now());
    if (id) {
      notifyDispatchers(deps.orm);
      return deps.orm.em.fork().findOneOrFail(WebhookDeliverySchema, { id });
    }
  }
  throw new AppError('conflict', 'The delivery is being retried already.');
}

/**
 * Queues again every event of the endpoint's store created in [from, to] that the endpoint is
 * subscribed to (with `status: 'failed'`: only those whose latest attempt to this endpoint
 * failed). Events with an attempt queued or in flight already are left as they are. Returns how
 * many attempts were queued.
 */
export async function replayRange(deps: AppDeps, webhookId: string, range: { from: Date; to: Date; status?: 'failed' | undefined }): Promise<number> {
  const em = deps.orm.em.fork();
  const hook = await loadWebhook(em, webhookId);
  if (!hook.enabled) throw new AppError('webhook_disabled', 'The webhook is disabled; enable it before replaying events.');
  if (hook.events.length === 0) return 0;
  const events = await em.execute<Array<{ id: string; type: string; last_attempt: number | null; last_status: string | null }>>(
    `select e.id, e.type, last.attempt as last_attempt, last.status as last_status
     from event e
     left join lateral (
       select d.attempt, d.status from webhook_delivery d where d.webhook_id = ? and d.event_id = e.id order by d.attempt desc limit 1
     ) last on true
     where e.store_id = ? and e.created_at >= ? and e.created_at <= ? and e.type in (?)
     order by e.created_at, e.id`,
    [webhookId, hook.store_id, range.from, range.to, hook.events],
  );
  const wanted = events.filter((event) => {
    if (event.last_status === 'queued' || event.last_status === 'pending') return false;
    return range.status === 'failed' ? event.last_status === 'failed' : true;
  });
  const queued = await queueAttempts(
    em,
    webhookId,
    hook.store_id,
    wanted.map((event) => ({ eventId: event.id, event: event.type, attempt: (event.last_attempt ?? 0) + 1 })),
    deps.clock.now(),
  );
  if (queued.length > 0) notifyDispatchers(deps.orm);
  return queued.length;
}

/** Attempts queued and due now: the dispatchers' backlog (the (status, due_at) index answers it). */
export async function countDueAttempts(deps: AppDeps): Promise<number> {
  const [row] = await deps.orm.em.fork().execute<Array<{ n: number }>>(
    `select count(*)::int as n from webhook_delivery where status = 'queued' and due_at <= ?`,
    [deps.clock.now()],
  );
  return row?.n ?? 0;
}

/** Deletes delivery log rows past the retention (never an attempt still queued or in flight). */
export async function pruneDeliveries(deps: AppDeps, retentionMs = DELIVERY_RETENTION_MS): Promise<number> {
  const cutoff = new Date(deps.clock.now().getTime() - retentionMs);
  let total = 0;
  for (;;) {
    const deleted: unknown[] = await deps.orm.em.fork().execute(
      `delete from webhook_delivery where id in (
         select id from webhook_delivery where created_at < ? and status not in ('queued', 'pending') limit 5000
       ) returning id`,
      [cutoff],
    );
    total += deleted.length;
    if (deleted.length < 5000) return total;
  }
}
