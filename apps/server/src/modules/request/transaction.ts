/**
 * The transaction on the context (docs/architecture.md, "The context and the transaction";
 * Vendure's `withTransaction` is the model): `inTransaction(ctx, (tx) => work(tx))` runs `work`
 * with a context whose EntityManager is the transaction's. Inside a transaction already, it joins
 * it: no new transaction and no savepoint (MikroORM's `em.transactional` would open a nested
 * savepoint there), so a flow can call services that open their own and the whole runs as one.
 */
import type { ServiceContext } from './context.js';

export async function inTransaction<C extends ServiceContext, T>(ctx: C, work: (tx: C) => Promise<T>): Promise<T> {
  if (ctx.em.isInTransaction()) {
    const result = await work(ctx);
    // As a transactional block does at its end: what the work changed is written before the
    // caller goes on (its own statements may read it); the outer transaction commits it.
    await ctx.em.flush();
    return result;
  }
  return ctx.em.transactional((em) => work({ ...ctx, em }));
}

/** The rows each open transaction has locked, by its EntityManager (a transaction's own fork). */
const heldLocks = new WeakMap<object, Map<string, object>>();

/**
 * A row locked for the context's transaction (`SELECT ... FOR UPDATE` by `lock`), once per
 * transaction: a flow that took the lock (the billing engine's step) and the services it then
 * calls (the settlement, its subscription hook) share the one locked entity instead of each
 * asking PostgreSQL again. The lock is the transaction's until it ends, so the entity it answered
 * is still the row's.
 */
export async function lockOnce<T extends object>(
  ctx: ServiceContext,
  key: string,
  lock: () => Promise<T | null>,
): Promise<T | null> {
  if (!ctx.em.isInTransaction()) return lock();
  let held = heldLocks.get(ctx.em);
  const seen = held?.get(key);
  if (seen) return seen as T;
  const row = await lock();
  if (row) {
    if (!held) heldLocks.set(ctx.em, (held = new Map<string, object>()));
    held.set(key, row);
  }
  return row;
}
