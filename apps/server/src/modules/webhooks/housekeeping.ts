/**
 * The webhooks' housekeeping, run by the scheduled jobs (jobs.ts) and the metrics: pruning the
 * delivery log and the outbox events nothing will send again, and counting the dispatchers'
 * backlog. Each works on a plain service context the caller builds from the application's deps.
 */
import type { ServiceContext } from '../request/context.js';
import { deleteFinishedDeliveries, deleteFinishedEvents } from './delivery-log.repo.js';
import { WebhookDeliverySchema } from './webhooks.entities.js';

/** Delivery log rows are kept this long (docs/decisions.md, Outgoing webhooks: Retention). */
export const DELIVERY_RETENTION_MS = 30 * 24 * 3_600_000;
/** Outbox events are kept as long as the delivery log, so a replay reaches back as far as the log shows (then longer only while an attempt is left). */
export const EVENT_RETENTION_MS = 30 * 24 * 3_600_000;
/** Rows deleted per statement when pruning: short statements, short locks. */
const PRUNE_BATCH = 5_000;

/** Attempts queued and due now: the dispatchers' backlog (the partial index on due_at answers it). */
export async function countDueAttempts(ctx: ServiceContext): Promise<number> {
  return ctx.em.count(WebhookDeliverySchema, { status: 'queued', dueAt: { $lte: ctx.clock.now() } });
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
export async function pruneDeliveries(ctx: ServiceContext, input: { retentionMs?: number } = {}): Promise<number> {
  const cutoff = new Date(ctx.clock.now().getTime() - (input.retentionMs ?? DELIVERY_RETENTION_MS));
  return deleteInBatches((limit) => deleteFinishedDeliveries(ctx.em, cutoff, limit));
}

/**
 * Deletes outbox events past the retention that nothing will send again: dispatched, with no
 * attempt still queued or in flight (a retry of an older attempt keeps its event until it is sent).
 */
export async function pruneEvents(ctx: ServiceContext, input: { retentionMs?: number } = {}): Promise<number> {
  const cutoff = new Date(ctx.clock.now().getTime() - (input.retentionMs ?? EVENT_RETENTION_MS));
  return deleteInBatches((limit) => deleteFinishedEvents(ctx.em, cutoff, limit));
}
