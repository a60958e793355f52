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
