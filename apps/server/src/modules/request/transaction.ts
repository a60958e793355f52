/**
 * The transaction on the context (docs/architecture.md, "The context and the transaction";
 * Vendure's `withTransaction` is the model): `inTransaction(ctx, (tx) => work(tx))` runs `work`
 * with a context whose EntityManager is the transaction's. Inside a transaction already, it joins
 * it: no new transaction and no savepoint (MikroORM's `em.transactional` would open a nested
 * savepoint there), so a flow can call services that open their own and the whole runs as one.
 */
import type { EntityManager, EventSubscriber } from '@mikro-orm/core';
import type { ServiceContext } from './context.js';

export async function inTransaction<C extends ServiceContext, T>(ctx: C, work: (tx: C) => Promise<T>): Promise<T> {
  if (ctx.em.isInTransaction()) {
    const result = await work(ctx);
    // As a transactional block does at its end: what the work changed is written before the
    // caller goes on (its own statements may read it); the outer transaction commits it.
    await ctx.em.flush();
    return result;
  }
  return ctx.em.transactional((em) => {
    const transaction: unknown = em.getTransactionContext();
    if (isObject(transaction) && em.getEventManager().getSubscribers().has(commitBatchWriter))
      pendingBatches.set(transaction, new Map());
    return work({ ...ctx, em });
  });
}

/**
 * Rows of one kind a transaction writes in one statement just before it commits (the outbox's
 * events: a settlement's `order.paid`, `subscription.renewed` and `order.completed` are one
 * prepared INSERT, not the ORM's). `write` runs in the transaction, after its last flush, with
 * the items in the order they were added.
 */
export interface CommitBatch<T> {
  write(em: EntityManager, items: T[]): Promise<void>;
}

/** The batches of each transaction inTransaction opened, by the transaction (knex's object). */
const pendingBatches = new WeakMap<object, Map<CommitBatch<never>, unknown[]>>();

const isObject = (value: unknown): value is object =>
  !!value && (typeof value === 'object' || typeof value === 'function');

/**
 * Adds `item` to `batch` of the transaction the context's EntityManager is in, when inTransaction
 * opened it (and the ORM carries commitBatchWriter); answers false otherwise (outside a
 * transaction, in one opened by `em.transactional` itself, in a savepoint), and the caller writes
 * the item its own way.
 */
export function addToCommitBatch<T>(ctx: Pick<ServiceContext, 'em'>, batch: CommitBatch<T>, item: T): boolean {
  const transaction: unknown = ctx.em.getTransactionContext();
  const batches = isObject(transaction) ? pendingBatches.get(transaction) : undefined;
  if (!batches) return false;
  const items = batches.get(batch);
  if (items) items.push(item);
  else batches.set(batch, [item]);
  return true;
}

/**
 * The ORM's subscriber that writes a transaction's batches before it commits (MikroORM calls
 * `beforeTransactionCommit` for the outermost transaction, after its last flush, and rolls back
 * when it throws) and forgets them when it rolls back. db/orm.ts registers it before any fork.
 */
export const commitBatchWriter: EventSubscriber = {
  async beforeTransactionCommit({ em, transaction }) {
    const batches = isObject(transaction) ? pendingBatches.get(transaction) : undefined;
    if (!batches) return;
    pendingBatches.delete(transaction as object);
    for (const [batch, items] of batches) await batch.write(em, items as never[]);
  },
  afterTransactionRollback({ transaction }) {
    if (isObject(transaction)) pendingBatches.delete(transaction);
  },
};

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
