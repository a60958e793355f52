/**
 * Read replicas (DATABASE_REPLICA_URLS, MikroORM's `replicas`): the listings read from one, picked
 * at random per statement; everything else reads and writes on the primary (`preferReadReplicas`
 * is off in db/orm.ts). A listing is a page a client pages through (merchant orders, licenses,
 * events and products, the public catalog): it may trail the primary by the replica's lag, which
 * a client that just wrote reads past by fetching the object itself (every get reads the primary).
 * Without replicas the same calls read the primary.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { preparedRows } from './prepared.js';

/** Find options that send an ORM listing to a replica. */
export const ON_REPLICA = { connectionType: 'read' } as const;

/** A listing's statement (a repository's raw SQL, `?` placeholders) on a replica, prepared (db/prepared.ts). */
export function readOnReplica<T>(em: EntityManager, sql: string, params: unknown[]): Promise<T[]> {
  return preparedRows<T>(em, sql, params, { replica: true });
}
