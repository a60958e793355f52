/**
 * Scheduled jobs of `svc serve`: each runs on an interval, never overlapping itself, and
 * is safe to run in several processes at once (each statement claims its rows).
 */
import type { AppDeps } from './deps.js';
import { expirePendingOrders } from './flows/expire-orders.js';
import { sweepOrphanedObjects } from './modules/catalog/orphans.service.js';
import { pruneFinishedMail } from './modules/mail/mail.service.js';
import { serviceContext } from './modules/request/context.js';
import { pruneDeliveries, pruneEvents } from './modules/webhooks/housekeeping.js';
import { pruneIdempotencyKeys } from './modules/idempotency/idempotency.service.js';
import { runTestDataWipes } from './modules/test-data/test-data.service.js';

export interface Job {
  name: string;
  everyMs: number;
  /** `signal` aborts when the process stops: a long job gives its work back between two steps. */
  run(deps: AppDeps, signal?: AbortSignal): Promise<unknown>;
}

export const JOBS: Job[] = [
  {
    name: 'expire-pending-orders',
    everyMs: 60_000,
    run: (deps) => expirePendingOrders(serviceContext(deps)),
  },
  {
    // The delivery log is kept 30 days (docs/decisions.md); attempts still queued or in flight stay.
    name: 'prune-webhook-deliveries',
    everyMs: 60 * 60_000,
    run: (deps) => pruneDeliveries(serviceContext(deps)),
  },
  {
    // Outbox events go once nothing will send them again, after the log's 30 days.
    name: 'prune-events',
    everyMs: 60 * 60_000,
    run: (deps) => pruneEvents(serviceContext(deps)),
  },
  {
    // Idempotency-Key answers are replayed for 24 h, then forgotten.
    name: 'prune-idempotency-keys',
    everyMs: 60 * 60_000,
    run: (deps) => pruneIdempotencyKeys(serviceContext(deps)),
  },
  {
    // Sent (and given-up) mail is kept 7 days for support, then its sealed text goes too.
    name: 'prune-sent-mail',
    everyMs: 60 * 60_000,
    run: (deps) => pruneFinishedMail(serviceContext(deps)),
  },
  {
    // Objects in the object store whose row is gone (a crash between the two removals), once a day old.
    name: 'sweep-orphaned-objects',
    everyMs: 60 * 60_000,
    run: (deps) => sweepOrphanedObjects(serviceContext(deps)),
  },
  {
    // Wipes of a store's test data (test mode), asked for by the merchant API or the dashboard:
    // looked for every second (an index of the waiting ones), run in batches until none waits.
    name: 'wipe-test-data',
    everyMs: 1_000,
    run: (deps, signal) => runTestDataWipes(serviceContext(deps), signal ? { signal } : {}),
  },
];

export function startJobs(deps: AppDeps, jobs: Job[] = JOBS): () => Promise<void> {
  const running = new Map<string, Promise<unknown>>();
  const stopping = new AbortController();
  const timers = jobs.map((job) => {
    const tick = () => {
      if (running.has(job.name)) return;
      const run = job
        .run(deps, stopping.signal)
        .catch((error: unknown) => deps.log.error({ err: error, job: job.name }, 'scheduled job failed'))
        .finally(() => running.delete(job.name));
      running.set(job.name, run);
    };
    const timer = setInterval(tick, job.everyMs);
    timer.unref();
    return timer;
  });
  return async () => {
    for (const timer of timers) clearInterval(timer);
    stopping.abort();
    await Promise.allSettled(running.values());
  };
}
