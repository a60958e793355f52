/**
 * The dispatchers' wake-up: once a commit that wrote outbox events is done, the dispatchers of
 * this process are woken at once and, through the publishers their Redis clients add, those of
 * other processes; polling covers a lost message. The outbox (outbox.ts) arranges it for every
 * event it writes, whatever the transaction's shape.
 */
import type { EntityManager, EventSubscriber, TransactionEventArgs } from '@mikro-orm/core';
// MikroORM's type, not db/orm's alias of it: db/orm registers this hub as it opens the ORM, and
// importing it back would close a circle.
import type { MikroORM as Orm } from '@mikro-orm/postgresql';

type Listener = () => void;

/**
 * One per ORM (a MikroORM subscriber): holds the root transactions that wrote events until they
 * commit. By the root, not the EntityManager: an event written in a nested transaction (a
 * settlement inside a payment notification's transaction) commits with the outer one, whose
 * EntityManager is another, and MikroORM reports only the root's commit.
 */
export class WakeHub implements EventSubscriber {
  readonly listeners = new Set<Listener>();
  readonly publishers = new Set<Listener>();
  private readonly awaitingCommit = new WeakSet<object>();

  /** Wakes the dispatchers when the transaction `em` is in commits; at once when it is in none. */
  afterCommitOf(em: EntityManager): void {
    const root = rootTransaction(em.getTransactionContext());
    if (root) this.awaitingCommit.add(root);
    else this.notify();
  }

  afterTransactionCommit(args: TransactionEventArgs): void {
    const root = rootTransaction(args.transaction ?? args.em.getTransactionContext());
    if (!root || !this.awaitingCommit.has(root)) return;
    this.awaitingCommit.delete(root);
    this.notify();
  }

  afterTransactionRollback(args: TransactionEventArgs): void {
    const root = rootTransaction(args.transaction ?? args.em.getTransactionContext());
    if (root) this.awaitingCommit.delete(root);
  }

  notify(): void {
    for (const listener of this.listeners) listener();
    for (const publish of this.publishers) publish();
  }
}

/**
 * The outermost of a transaction and the savepoints nested in it. MikroORM marks a nested
 * (savepoint) transaction with a `parentTransaction` symbol pointing at the one it is in.
 */
function rootTransaction(transaction: unknown): object | undefined {
  // knex's transaction objects are functions.
  const isTransaction = (value: unknown): value is object =>
    !!value && (typeof value === 'object' || typeof value === 'function');
  let current = transaction;
  for (let depth = 0; depth < 32 && isTransaction(current); depth++) {
    const parentKey = Object.getOwnPropertySymbols(current).find(
      (symbol) => symbol.description === 'parentTransaction',
    );
    const parent = parentKey ? (current as Record<symbol, unknown>)[parentKey] : undefined;
    if (!isTransaction(parent)) return current;
    current = parent;
  }
  return undefined;
}

/** By the ORM's configuration, which every fork of its EntityManager shares. */
const hubs = new WeakMap<object, WakeHub>();

/** The ORM's hub, registered with its EntityManager (forks made afterwards inherit the subscriber). */
export function wakeHubFor(orm: Orm): WakeHub {
  let hub = hubs.get(orm.config);
  if (!hub) {
    hub = new WakeHub();
    hubs.set(orm.config, hub);
    orm.em.getEventManager().registerSubscriber(hub);
  }
  return hub;
}

/** The hub of the ORM `em` belongs to, if one is registered. */
export function wakeHubOf(em: EntityManager): WakeHub | undefined {
  return hubs.get(em.config);
}

/** Work is due now (a retry or replay queued attempts): wake the dispatchers. */
export function notifyDispatchers(orm: Orm): void {
  hubs.get(orm.config)?.notify();
}

export function wakeChannel(redisKeyPrefix: string): string {
  return `${redisKeyPrefix}events`;
}
