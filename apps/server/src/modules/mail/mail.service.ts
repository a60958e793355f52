/** The outbox's upkeep: finished mail is kept a while for support, then deleted. */
import type { ServiceContext } from '../request/context.js';
import { deleteFinishedMail } from './mail.repo.js';

/** Sent and failed mail is kept this long after it was recorded. */
export const MAIL_RETENTION_MS = 7 * 24 * 3_600_000;
const PRUNE_BATCH = 1_000;

/** Deletes sent and failed mail past the retention (kept and queued mail stays). Returns how many. */
export async function pruneFinishedMail(ctx: ServiceContext, input: { retentionMs?: number } = {}): Promise<number> {
  const cutoff = new Date(ctx.clock.now().getTime() - (input.retentionMs ?? MAIL_RETENTION_MS));
  let total = 0;
  for (;;) {
    const deleted = await deleteFinishedMail(ctx.em.fork(), cutoff, PRUNE_BATCH);
    total += deleted;
    if (deleted < PRUNE_BATCH) return total;
  }
}
