/**
 * The webhook dispatcher: a scheduler of attempts, nothing else. It turns committed outbox events
 * into queued attempts (fan-out), claims due attempts under a lease so that any number of
 * dispatchers share the log and none sends what another holds, holds a few ahead for endpoints
 * that answer fast, and starts them as slots free up, at most `concurrency` at once and
 * `perEndpoint` per endpoint. What it holds of each endpoint is endpoint-slots.ts's; what an
 * attempt does is attempt.ts's; the claims are claims.repo.ts's and the outcomes
 * outcomes.repo.ts's; when to try again is retry-policy.ts's.
 * Wake-ups: a commit that wrote events wakes the dispatchers of this process at once and the
 * others through Redis pub/sub (wake-ups.ts); polling covers a lost message and the no-Redis case.
 */
import { WEBHOOK_TEST_EVENT } from '@svc/schemas';
import type { AppDeps } from '../../deps.js';
import { webhookAttempts } from '../../lib/metrics.js';
import { SuccessWriter, recordAttempt, sendClaimed, skipReason, type DispatchContext } from './attempt.js';
import * as claims from './claims.repo.js';
import type { ClaimedAttempt } from './claims.repo.js';
import { EndpointSlots, subjectOf } from './endpoint-slots.js';
import { ENDPOINT_DISABLED } from './outcomes.repo.js';
import { DispatcherWakeUps, type RedisWakeClient } from './wake-ups.js';

/** A waiting attempt starts only with at least its timeout and this much of its lease left (at most half the slack). */
const LEASE_MARGIN_MS = 5_000;

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

export class Dispatcher {
  private readonly pollMs: number;
  private readonly batchSize: number;
  private readonly concurrency: number;
  private readonly minClaim: number;
  /** Lease a waiting attempt must have left beyond its timeout to start (a fresh claim always has). */
  private readonly leaseMarginMs: number;
  private readonly maxHeld: number;
  private readonly leaseMs: number;
  private readonly timeoutMs: number;
  private readonly random: () => number;

  private readonly inFlight = new Map<string, Promise<void>>();
  /** Writes the successes sent (their slots are free already) together. */
  private readonly successes: SuccessWriter;
  /** Endpoints with a refill claim running, and that claim. */
  private readonly refilling = new Map<string, Promise<void>>();
  /** Endpoints whose last refill found nothing: not refilled again until new work may be due. */
  private readonly drained = new Set<string>();
  /** What is held of each endpoint: in flight, and claimed ahead waiting for a slot. */
  private readonly slots: EndpointSlots;
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
  private readonly wakeUps: DispatcherWakeUps;

  /** What sending and recording read of the context (attempt.ts): the application's parts, clock and logger. */
  private readonly dispatch: DispatchContext;

  constructor(
    private readonly deps: AppDeps,
    options: DispatcherOptions = {},
  ) {
    this.dispatch = { deps, clock: deps.clock, log: deps.log };
    this.pollMs = options.pollMs ?? deps.config.webhookPollMs;
    this.batchSize = options.batchSize ?? 200;
    this.concurrency = options.concurrency ?? 32;
    const perEndpoint = options.perEndpoint ?? 4;
    const prefetch = Math.max(0, options.prefetch ?? deps.config.webhookPrefetch);
    // Held (in flight + waiting) per endpoint that answers fast, and in all.
    this.slots = new EndpointSlots(perEndpoint, perEndpoint * (1 + prefetch));
    this.maxHeld = this.concurrency * (1 + Math.min(prefetch, 3));
    this.minClaim = Math.max(1, Math.floor(this.maxHeld / 8));
    this.leaseMs = options.leaseMs ?? deps.config.webhookLeaseMs;
    this.timeoutMs = options.timeoutMs ?? deps.config.webhookTimeoutMs;
    this.leaseMarginMs = Math.max(0, Math.min(LEASE_MARGIN_MS, (this.leaseMs - this.timeoutMs) / 2));
    this.random = options.random ?? Math.random;
    this.successes = new SuccessWriter(deps);
    this.wakeUps = new DispatcherWakeUps(deps, options.redis, () => this.wake());
  }

  /** Runs until stop(): wake-ups, polling, and sends pipelined up to the concurrency. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopping = false;
    this.wakeUps.start();
    this.wakeWanted = true;
    this.loop = this.run();
  }

  /** Stops claiming and waits for the attempts in flight to be sent and recorded. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.running = false;
    this.wakeUps.stop();
    this.kick();
    await this.loop;
    await this.claiming;
    await this.releaseWaiting();
    await Promise.allSettled([...this.inFlight.values()]);
    await this.successes.settled();
    await this.wakeUps.unsubscribe();
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
      if (claimed === 0 && this.inFlight.size === 0 && this.slots.waitingCount === 0 && this.refilling.size === 0)
        break;
      if (this.inFlight.size > 0) await Promise.race(this.inFlight.values());
      else if (this.refilling.size > 0) await Promise.race(this.refilling.values());
    }
    await this.successes.settled();
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
        const held = this.inFlight.size + this.slots.waitingCount;
        const room = this.maxHeld - held;
        // Claims come in batches: a few freed places among many held ones wait for more.
        if (room <= 0 || (room < this.minClaim && held > 0)) break;
        const claimed = await this.claim(room);
        total += claimed.length;
        this.moreMayBeDue = claimed.length > 0;
        for (const attempt of claimed) this.slots.hold(attempt);
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

  /**
   * Starts waiting attempts while there are free slots, taking endpoints in turn. An attempt
   * whose lease would run out before it could finish is given back instead of sent (another
   * dispatcher, or this one, claims it again): a send must never outlive its lease.
   */
  private pump(): void {
    if (this.stopping) return;
    const now = this.deps.clock.now().getTime();
    const expiring: ClaimedAttempt[] = [];
    for (const attempt of this.slots.startable(() => this.inFlight.size < this.concurrency)) {
      if (attempt.lease.getTime() - now < this.timeoutMs + this.leaseMarginMs) expiring.push(attempt);
      else this.launch(attempt);
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
    await this.giveBack(this.slots.releaseAll());
  }

  /** The endpoint was disabled: its waiting attempts are skipped, not sent. */
  private async dropWaiting(webhookId: string): Promise<void> {
    for (const attempt of this.slots.dropWaiting(webhookId)) {
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
    const claimed = await claims.claimDue(this.deps.orm.em.fork(), {
      now,
      lease: new Date(now.getTime() + this.leaseMs),
      room,
      ...this.slots.claimWindow(),
    });
    this.counts.claimed += claimed.length;
    return claimed;
  }

  private launch(claimed: ClaimedAttempt): void {
    const subject = subjectOf(claimed);
    this.slots.started(claimed.webhookId, subject);
    const work = this.deliver(claimed)
      .catch((error: unknown) =>
        this.deps.log.error({ err: error, deliveryId: claimed.id }, 'webhook attempt could not be recorded'),
      )
      .finally(() => {
        this.slots.finished(claimed.webhookId, subject);
        this.inFlight.delete(claimed.id);
        // A freed slot: the next waiting attempt starts at once, and the endpoint's own backlog
        // refills what it holds (refill). Claim across endpoints again when what is held ran low
        // and the last claim found work; the loop only, runOnce claims by itself.
        this.pump();
        this.refill(claimed.webhookId);
        const low = this.inFlight.size + this.slots.waitingCount <= this.maxHeld - this.minClaim;
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
    const limit = this.slots.holdLimit(webhookId);
    // Half of what it holds ahead (16 of 32 at the defaults), so a claim is a batch while the
    // other half keeps its slots busy; an endpoint that may hold no more than its slots, at once.
    const batch = Math.max(1, Math.floor((limit - this.slots.perEndpoint) / 2));
    const room = Math.min(
      limit - this.slots.held(webhookId),
      this.maxHeld - (this.inFlight.size + this.slots.waitingCount),
    );
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
          for (const attempt of claimed) this.slots.hold(attempt);
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
    const skipped = skipReason(claimed);
    if (skipped) {
      await claims.skipClaimed(this.deps.orm.em.fork(), claimed, skipped, this.deps.clock.now());
      this.counts.skipped++;
      webhookAttempts.inc({ outcome: 'skipped' });
      return;
    }
    const startedAt = this.deps.clock.now();
    const result = await sendClaimed(this.dispatch, this.timeoutMs, claimed, startedAt);
    this.slots.recordSpeed(claimed.webhookId, result.durationMs);
    if (result.ok) {
      // The slot frees now: the outcome is written with the other successes of the moment.
      // runOnce and stop() wait for it; lost, the attempt is reaped past its lease and sent again.
      this.successes.record({
        id: claimed.id,
        webhookId: claimed.webhookId,
        lease: claimed.lease,
        result,
        at: this.deps.clock.now(),
      });
      this.counts.succeeded++;
      return;
    }
    // The test event is sent only by the test ping and a manual retry: never retried by itself.
    const { recorded, disabledReason } = await recordAttempt(this.dispatch, { ...claimed, startedAt }, result, {
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
