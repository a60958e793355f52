/**
 * A wake-up after commit: holds the root transactions that wrote work for a background loop until
 * they commit, then calls its listeners (at once for a write outside a transaction). A MikroORM
 * subscriber; one per ORM and per kind of work (modules/events/wake.ts for the webhook
 * dispatchers, modules/mail/wake.ts for the mail senders).
 */
import type { EntityManager, EventSubscriber, TransactionEventArgs } from '@mikro-orm/core';

type Listener = () => void;

/**
 * One per ORM and kind of work (a MikroORM subscriber): holds the root transactions that wrote
 * work until they commit. By the root, not the EntityManager: an event written in a nested transaction (a
 * settlement inside a payment notification's transaction) commits with the outer one, whose
 * EntityManager is another, and MikroORM reports only the root's commit.
 */
export class WakeHub implements EventSubscriber {
  readonly listeners = new Set<Listener>();
  readonly publishers = new Set<Listener>();
  private readonly awaitingCommit = new WeakSet<object>();

  /** Calls the listeners when the transaction `em` is in commits; at once when it is in none. */
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

/** The ORM as a hub registry needs it: its configuration (which every fork shares) and its event manager. */
interface HubOrm {
  config: object;
  em: { getEventManager(): { registerSubscriber(subscriber: EventSubscriber): void } };
}

/**
 * One kind of work's hubs, one per ORM (by its configuration, which every fork of its EntityManager
 * shares), registered with the ORM's EntityManager the first time it is asked for: db/orm.ts asks
 * before any fork is made, so every fork inherits the subscriber.
 */
export function wakeHubs(): { hubFor(orm: HubOrm): WakeHub; hubOf(em: { config: object }): WakeHub | undefined } {
  const hubs = new WeakMap<object, WakeHub>();
  return {
    hubFor(orm) {
      let hub = hubs.get(orm.config);
      if (!hub) {
        hub = new WakeHub();
        hubs.set(orm.config, hub);
        orm.em.getEventManager().registerSubscriber(hub);
      }
      return hub;
    },
    hubOf: (em) => hubs.get(em.config),
  };
}
