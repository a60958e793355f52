/**
 * The webhook dispatcher: a scheduler of attempts, nothing else. It turns committed outbox events
 * into queued attempts (fan-out), claims due attempts under a lease so that any number of
 * dispatchers share the log and none sends what another holds, holds a few ahead for endpoints
 * that answer fast, and starts them as slots free up, at most `concurrency` at once and
 * `perEndpoint` per endpoint. What an attempt does is attempt.ts's; the claims are
 * claims.repo.ts's and the outcomes outcomes.repo.ts's; when to try again is retry-policy.ts's.
 * Wake-ups: a commit that wrote events wakes the dispatchers of this process at once and the
 * others through Redis pub/sub (events/wake.ts); polling covers a lost message and the no-Redis case.
 */
import { WEBHOOK_TEST_EVENT } from '@svc/schemas';
import type { AppDeps } from '../../deps.js';
import { webhookAttempts, webhookLag } from '../../lib/metrics.js';
import { wakeChannel, wakeHubFor } from '../events/wake.js';
import { SuccessWriter, eventBody, recordAttempt, sendAttempt } from './attempt.js';
import * as claims from './claims.repo.js';
import type { ClaimedAttempt } from './claims.repo.js';
import { ENDPOINT_DISABLED } from './outcomes.repo.js';

/** A waiting attempt starts only with at least its timeout and this much of its lease left (at most half the slack). */
const LEASE_MARGIN_MS = 5_000;
/**
 * Only endpoints that answer this fast (moving average) are claimed ahead: a slow or hanging
 * endpoint's backlog stays in the table for any dispatcher with a free slot, instead of waiting
 * behind this one's attempts in flight. An endpoint not heard from yet counts as slow.
 */
const FAST_ENDPOINT_MS = 1_000;

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

const zeroCounts = (): DispatchCounts => ({ events: 0, queued: 0, claimed: 0, succeeded: 0, failed: 0, skipped: 0 });

type Listener = () => void;

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
  /** Successes sent whose outcome is being written (their slots are free already). */
  private readonly recording = new Set<Promise<void>>();
  private readonly successes: SuccessWriter;
  /** Endpoints with a refill claim running, and that claim. */
  private readonly refilling = new Map<string, Promise<void>>();
  /** Endpoints whose last refill found nothing: not refilled again until new work may be due. */
  private readonly drained = new Set<string>();
  /** In-flight attempts per endpoint. */
  private readonly busy = new Map<string, number>();
  /** Claimed attempts not started yet, per endpoint, in claim order. */
  private readonly waiting = new Map<string, ClaimedAttempt[]>();
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
    this.successes = new SuccessWriter(deps);
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
    await this.recorded();
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    if (subscriber) await subscriber.close().catch(() => subscriber.destroy());
  }

  /** Work is due now (an event committed, a retry was queued). */
  wake(): void {
    this.wakeWanted = true;
    this.drained.clear();
    this.kick();
  }

  /**
   * A pass, claim or refill that failed. While the process stops it is expected, not an error: a
   * Ctrl-C reaches an embedded PostgreSQL at the same moment, which ends the statement in flight;
   * nothing is lost (a claim is leased, an event stays undispatched).
   */
  private passFailed(error: unknown, message: string, fields: Record<string, unknown> = {}): void {
    if (this.stopping) this.deps.log.warn({ err: error, ...fields }, `${message} while stopping`);
    else this.deps.log.error({ err: error, ...fields }, message);
  }

  /** Resolves once every success sent so far has its outcome written (or failed to). */
  private async recorded(): Promise<void> {
    while (this.recording.size > 0) await Promise.allSettled([...this.recording]);
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
      if (claimed === 0 && this.inFlight.size === 0 && this.waitingCount === 0 && this.refilling.size === 0) break;
      if (this.inFlight.size > 0) await Promise.race(this.inFlight.values());
      else if (this.refilling.size > 0) await Promise.race(this.refilling.values());
    }
    await this.recorded();
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
          // A poll pass: retries may have come due since an endpoint's last refill found nothing.
          this.drained.clear();
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
        this.passFailed(error, 'webhook dispatcher pass failed');
      }
      if (!this.running) break;
      if (this.kicked && failures === 0) continue;
      const wait =
        failures > 0
          ? Math.min(this.pollMs * 2 ** failures, 30_000)
          : Math.max(0, this.pollMs - (performance.now() - lastFanOut));
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

  /**
   * Turns undispatched events into queued attempts, a batch per transaction, until none is left.
   * With more than a batch waiting (a backlog, a dispatcher starting), sending starts after the
   * first batch instead of after the last: the attempts of each batch are due at once.
   */
  private async fanOutAll(): Promise<void> {
    for (;;) {
      const events = await this.fanOutBatch();
      if (events < this.batchSize) return;
      if (this.running)
        this.fill().catch((error: unknown) => this.passFailed(error, 'webhook dispatcher claim failed'));
    }
  }

  private async fanOutBatch(): Promise<number> {
    const { events, queued } = await claims.fanOutBatch(this.deps.orm.em.fork(), this.batchSize, this.deps.clock.now());
    this.counts.events += events;
    this.counts.queued += queued;
    return events;
  }

  /** Attempts abandoned in flight past their lease are failed and queued again (see the repo's reapAbandoned). */
  private async reapAbandoned(): Promise<void> {
    const abandoned = await claims.reapAbandoned(this.deps.orm.em.fork(), this.deps.clock.now());
    if (abandoned > 0)
      this.deps.log.warn({ attempts: abandoned }, 'webhook attempts abandoned past their lease; queued again');
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
      // Rows this claim had locked and ranked out are due again: a refill that skipped them may look again.
      this.drained.clear();
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

  private hold(attempt: ClaimedAttempt): void {
    const queue = this.waiting.get(attempt.webhookId);
    if (queue) queue.push(attempt);
    else this.waiting.set(attempt.webhookId, [attempt]);
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
    const expiring: ClaimedAttempt[] = [];
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
  private async giveBack(attempts: ClaimedAttempt[]): Promise<void> {
    if (attempts.length === 0) return;
    try {
      await claims.giveBack(this.deps.orm.em.fork(), attempts, this.deps.clock.now());
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
      await claims.skipClaimed(this.deps.orm.em.fork(), attempt, ENDPOINT_DISABLED, this.deps.clock.now());
      this.counts.skipped++;
      webhookAttempts.inc({ outcome: 'skipped' });
    }
  }

  /**
   * Takes up to `room` due `queued` attempts (abandoned ones were queued again by
   * reapAbandoned). At most `perEndpoint` in flight per endpoint here; rows another dispatcher
   * is claiming at the same moment are skipped, not waited for.
   */
  private async claim(room: number): Promise<ClaimedAttempt[]> {
    const now = this.deps.clock.now();
    // Each endpoint's slots start after what this dispatcher holds of it, and after the places a
    // slow (or unknown) endpoint may not use: the claim caps every endpoint at its hold limit.
    const endpoints = new Set([...this.busy.keys(), ...this.waiting.keys(), ...this.speed.keys()]);
    const claimed = await claims.claimDue(this.deps.orm.em.fork(), {
      now,
      lease: new Date(now.getTime() + this.leaseMs),
      room,
      // Endpoints holding all they may are left out of the scan, so a backlog at a slow endpoint
      // does not fill the window and hold up the others.
      saturated: [...endpoints].filter((id) => this.held(id) >= this.holdLimit(id)),
      offsets: Object.fromEntries(
        [...endpoints].map((id) => [id, this.held(id) + this.holdPerEndpoint - this.holdLimit(id)]),
      ),
      defaultOffset: this.holdPerEndpoint - this.perEndpoint,
      slotsPerEndpoint: this.holdPerEndpoint,
    });
    this.counts.claimed += claimed.length;
    return claimed;
  }

  private launch(claimed: ClaimedAttempt): void {
    this.busy.set(claimed.webhookId, (this.busy.get(claimed.webhookId) ?? 0) + 1);
    const work = this.deliver(claimed)
      .catch((error: unknown) =>
        this.deps.log.error({ err: error, deliveryId: claimed.id }, 'webhook attempt could not be recorded'),
      )
      .finally(() => {
        const left = (this.busy.get(claimed.webhookId) ?? 1) - 1;
        if (left > 0) this.busy.set(claimed.webhookId, left);
        else this.busy.delete(claimed.webhookId);
        this.inFlight.delete(claimed.id);
        // A freed slot: the next waiting attempt starts at once, and the endpoint's own backlog
        // refills what it holds (refill). Claim across endpoints again when what is held ran low
        // and the last claim found work; the loop only, runOnce claims by itself.
        this.pump();
        this.refill(claimed.webhookId);
        const low = this.inFlight.size + this.waitingCount <= this.maxHeld - this.minClaim;
        if (this.running && this.moreMayBeDue && low) this.kick();
      });
    this.inFlight.set(claimed.id, work);
  }

  /**
   * Refills what this dispatcher holds of one endpoint from that endpoint's backlog, once it has
   * room for a batch (half of what it may hold ahead, or one for an endpoint that may hold no more
   * than its slots): one claim that locks exactly the rows it takes (claimForEndpoint). The claim across
   * endpoints (fill) leaves an endpoint holding all it may out of its scan, so without this a
   * busy endpoint's backlog waited for that claim, and each of those claims locked every
   * candidate it ranked: most of PostgreSQL's time per delivery.
   */
  private refill(webhookId: string): void {
    if (this.stopping || this.refilling.has(webhookId) || this.drained.has(webhookId)) return;
    const limit = this.holdLimit(webhookId);
    // Half of what it holds ahead (16 of 32 at the defaults), so a claim is a batch while the
    // other half keeps its slots busy; an endpoint that may hold no more than its slots, at once.
    const batch = Math.max(1, Math.floor((limit - this.perEndpoint) / 2));
    const room = Math.min(limit - this.held(webhookId), this.maxHeld - (this.inFlight.size + this.waitingCount));
    if (room < batch) return;
    const now = this.deps.clock.now();
    const refill = claims
      .claimForEndpoint(this.deps.orm.em, {
        webhookId,
        now,
        lease: new Date(now.getTime() + this.leaseMs),
        limit: room,
      })
      .then(
        (claimed) => {
          this.counts.claimed += claimed.length;
          // Nothing due of it now, or what is due was locked by a claim across endpoints running
          // at the same moment (fill clears this when it ends).
          if (claimed.length === 0) this.drained.add(webhookId);
          for (const attempt of claimed) this.hold(attempt);
        },
        (error: unknown) => this.passFailed(error, 'webhook attempts of an endpoint not claimed', { webhookId }),
      )
      .finally(() => {
        this.refilling.delete(webhookId);
        this.pump();
      });
    this.refilling.set(webhookId, refill);
  }

  private async deliver(claimed: ClaimedAttempt): Promise<void> {
    const skipReason = !claimed.enabled
      ? ENDPOINT_DISABLED
      : claimed.event !== WEBHOOK_TEST_EVENT && !claimed.events.includes(claimed.event)
        ? 'The endpoint is no longer subscribed to this event.'
        : claimed.payload === null || claimed.eventCreatedAt === null
          ? 'The event no longer exists.'
          : null;
    if (skipReason) {
      await claims.skipClaimed(this.deps.orm.em.fork(), claimed, skipReason, this.deps.clock.now());
      this.counts.skipped++;
      webhookAttempts.inc({ outcome: 'skipped' });
      return;
    }
    const startedAt = this.deps.clock.now();
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
    const result = await sendAttempt(this.deps, this.timeoutMs, { ...claimed, body });
    this.recordSpeed(claimed.webhookId, result.durationMs);
    if (result.ok) {
      // The slot frees now: the outcome is written with the other successes of the moment.
      // runOnce and stop() wait for it; lost, the attempt is reaped past its lease and sent again.
      const recording = this.successes
        .record({
          id: claimed.id,
          webhookId: claimed.webhookId,
          lease: claimed.lease,
          result,
          at: this.deps.clock.now(),
        })
        .then(
          (recorded) => {
            if (!recorded)
              this.deps.log.warn(
                { deliveryId: claimed.id },
                'webhook attempt outcome not recorded: its lease was taken over or the endpoint is gone',
              );
          },
          (error: unknown) =>
            this.deps.log.error({ err: error, deliveryId: claimed.id }, 'webhook attempt could not be recorded'),
        )
        .finally(() => this.recording.delete(recording));
      this.recording.add(recording);
      this.counts.succeeded++;
      return;
    }
    // The test event is sent only by the test ping and a manual retry: never retried by itself.
    const { recorded, disabledReason } = await recordAttempt(this.deps, { ...claimed, startedAt }, result, {
      retry: claimed.event !== WEBHOOK_TEST_EVENT,
      random: this.random,
    });
    if (disabledReason) await this.dropWaiting(claimed.webhookId);
    if (!recorded)
      this.deps.log.warn(
        { deliveryId: claimed.id },
        'webhook attempt outcome not recorded: its lease was taken over or the endpoint is gone',
      );
    if (result.ok) this.counts.succeeded++;
    else this.counts.failed++;
  }
}
