/**
 * What one webhook dispatcher (scheduler.ts) holds of each endpoint: its attempts in flight, the
 * claimed attempts waiting for a slot (in claim order) and how fast the endpoint answers; from
 * those, how many an endpoint may hold, the window a claim across endpoints may take, and which
 * waiting attempt starts next. Bookkeeping only: the dispatcher claims, starts and records.
 */
import type { ClaimedAttempt, ClaimRequest } from './claims.repo.js';

/**
 * Only endpoints that answer this fast (moving average) are claimed ahead: a slow or hanging
 * endpoint's backlog stays in the table for any dispatcher with a free slot, instead of waiting
 * behind this one's attempts in flight. An endpoint not heard from yet counts as slow.
 */
const FAST_ENDPOINT_MS = 1_000;

/**
 * What an attempt's event is about: the order of `order.paid`, the product of `product.updated`
 * (the payload's object named by the event's first word); null when the payload names none (the
 * test ping, a pruned event). An endpoint receives the events of one subject one at a time, in
 * claim order, so a settlement's `order.paid` arrives before its `order.completed`.
 */
export function subjectOf(attempt: Pick<ClaimedAttempt, 'event' | 'payload'>): string | null {
  const object = attempt.payload?.[attempt.event.split('.')[0]!];
  const id = object !== null && typeof object === 'object' ? (object as { id?: unknown }).id : undefined;
  return typeof id === 'string' ? id : null;
}

/** Whether `a` was queued before `b`: due first, then the lower id (the claims' order). */
function queuedBefore(a: ClaimedAttempt, b: ClaimedAttempt): boolean {
  const dueA = a.dueAt.getTime();
  const dueB = b.dueAt.getTime();
  return dueA < dueB || (dueA === dueB && a.id < b.id);
}

export class EndpointSlots {
  /** In-flight attempts per endpoint. */
  private readonly busy = new Map<string, number>();
  /** Claimed attempts not started yet, per endpoint, in claim order. */
  private readonly waiting = new Map<string, ClaimedAttempt[]>();
  private waitingTotal = 0;
  /** In-flight attempts per endpoint and subject (subjectOf), keyed `<webhookId> <subject>`. */
  private readonly sending = new Map<string, number>();
  /** Moving average of attempt durations per endpoint, ms. */
  private readonly speed = new Map<string, number>();

  constructor(
    /** Attempts in flight to one endpoint at most. */
    readonly perEndpoint: number,
    /** Attempts an endpoint that answers fast may hold (in flight + waiting). */
    readonly holdPerEndpoint: number,
  ) {}

  /** Claimed attempts waiting for a slot, of every endpoint. */
  get waitingCount(): number {
    return this.waitingTotal;
  }

  held(webhookId: string): number {
    return (this.busy.get(webhookId) ?? 0) + (this.waiting.get(webhookId)?.length ?? 0);
  }

  /** How many attempts of this endpoint this dispatcher may hold: in flight, plus ahead when it is fast. */
  holdLimit(webhookId: string): number {
    return (this.speed.get(webhookId) ?? Infinity) <= FAST_ENDPOINT_MS ? this.holdPerEndpoint : this.perEndpoint;
  }

  recordSpeed(webhookId: string, durationMs: number): void {
    const previous = this.speed.get(webhookId);
    if (previous === undefined && this.speed.size >= 10_000) this.speed.clear();
    this.speed.set(webhookId, previous === undefined ? durationMs : previous * 0.7 + durationMs * 0.3);
  }

  /**
   * A claimed attempt, to wait for a slot of its endpoint: in queue order (due, then id, as the
   * claims take them), so an attempt a later claim brought goes ahead of one queued after it.
   */
  hold(attempt: ClaimedAttempt): void {
    const queue = this.waiting.get(attempt.webhookId);
    if (!queue) this.waiting.set(attempt.webhookId, [attempt]);
    else {
      let index = queue.length;
      while (index > 0 && queuedBefore(attempt, queue[index - 1]!)) index--;
      queue.splice(index, 0, attempt);
    }
    this.waitingTotal++;
  }

  /**
   * Takes waiting attempts off their queues while `hasRoom()`, endpoints in turn, each only while
   * its endpoint has a free slot: the first of its queue whose subject has no attempt in flight to
   * that endpoint nor one waiting ahead of it. The caller starts each (started()) or gives it back.
   */
  *startable(hasRoom: () => boolean): Generator<ClaimedAttempt, void, undefined> {
    let started = true;
    while (started && hasRoom() && this.waitingTotal > 0) {
      started = false;
      for (const [webhookId, queue] of this.waiting) {
        if (!hasRoom()) break;
        if ((this.busy.get(webhookId) ?? 0) >= this.perEndpoint) continue;
        const index = this.nextStartable(webhookId, queue);
        if (index < 0) continue;
        const [attempt] = queue.splice(index, 1);
        this.waitingTotal--;
        if (queue.length === 0) this.waiting.delete(webhookId);
        started = true;
        yield attempt!;
      }
    }
  }

  /** The place in an endpoint's queue of the first attempt whose subject is free (-1: none). */
  private nextStartable(webhookId: string, queue: ClaimedAttempt[]): number {
    const ahead = new Set<string>();
    for (let index = 0; index < queue.length; index++) {
      const subject = subjectOf(queue[index]!);
      if (subject === null) return index;
      if (!ahead.has(subject) && !this.sending.has(`${webhookId} ${subject}`)) return index;
      ahead.add(subject);
    }
    return -1;
  }

  /** An attempt of this endpoint (about `subject`, subjectOf) is in flight. */
  started(webhookId: string, subject: string | null = null): void {
    this.busy.set(webhookId, (this.busy.get(webhookId) ?? 0) + 1);
    if (subject !== null) {
      const key = `${webhookId} ${subject}`;
      this.sending.set(key, (this.sending.get(key) ?? 0) + 1);
    }
  }

  /** An attempt of this endpoint (about `subject`) is done: its slot, and its subject, are free. */
  finished(webhookId: string, subject: string | null = null): void {
    const left = (this.busy.get(webhookId) ?? 1) - 1;
    if (left > 0) this.busy.set(webhookId, left);
    else this.busy.delete(webhookId);
    if (subject !== null) {
      const key = `${webhookId} ${subject}`;
      const sending = (this.sending.get(key) ?? 1) - 1;
      if (sending > 0) this.sending.set(key, sending);
      else this.sending.delete(key);
    }
  }

  /** The endpoint's waiting attempts, taken off their queue (the endpoint was disabled). */
  dropWaiting(webhookId: string): ClaimedAttempt[] {
    const queue = this.waiting.get(webhookId) ?? [];
    this.waiting.delete(webhookId);
    this.waitingTotal -= queue.length;
    return queue;
  }

  /** Every waiting attempt, taken off its queue (the dispatcher stops). */
  releaseAll(): ClaimedAttempt[] {
    const all = [...this.waiting.values()].flat();
    this.waiting.clear();
    this.waitingTotal = 0;
    return all;
  }

  /**
   * What a claim across endpoints may take (claimDue): each endpoint's slots start after what is
   * held of it here, and after the places a slow (or unknown) endpoint may not use, so the claim
   * caps every endpoint at its hold limit.
   */
  claimWindow(): Pick<ClaimRequest, 'saturated' | 'offsets' | 'defaultOffset' | 'slotsPerEndpoint'> {
    const endpoints = new Set([...this.busy.keys(), ...this.waiting.keys(), ...this.speed.keys()]);
    return {
      // Endpoints holding all they may are left out of the scan, so a backlog at a slow endpoint
      // does not fill the window and hold up the others.
      saturated: [...endpoints].filter((id) => this.held(id) >= this.holdLimit(id)),
      offsets: Object.fromEntries(
        [...endpoints].map((id) => [id, this.held(id) + this.holdPerEndpoint - this.holdLimit(id)]),
      ),
      defaultOffset: this.holdPerEndpoint - this.perEndpoint,
      slotsPerEndpoint: this.holdPerEndpoint,
    };
  }
}
