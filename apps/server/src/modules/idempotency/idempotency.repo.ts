/** The idempotency module's raw SQL. Everything else goes through the ORM. */
import type { EntityManager } from '@mikro-orm/postgresql';

export interface ClaimRow {
  path: string;
  scope: string;
  keyHash: string;
  bodyHash: string;
  claim: string;
  at: Date;
}

/**
 * Claims (procedure, store, key) unless someone holds it; returns whether this request did.
 * INSERT ... ON CONFLICT DO NOTHING: of two requests racing with one key exactly one claims it,
 * and the other learns so without an error aborting its transaction.
 */
export async function insertClaim(em: EntityManager, row: ClaimRow): Promise<boolean> {
  const rows: unknown[] = await em.execute(
    `insert into idempotency_key (path, scope, key_hash, body_hash, claim, created_at, claimed_at) values (?, ?, ?, ?, ?, ?, ?)
     on conflict (path, scope, key_hash) do nothing returning key_hash`,
    [row.path, row.scope, row.keyHash, row.bodyHash, row.claim, row.at, row.at],
  );
  return rows.length > 0;
}

/**
 * Deletes up to `batch` keys created before `cutoff`; returns how many. DELETE has no LIMIT in
 * PostgreSQL (nor in the ORM): batches by ctid keep each statement's locks and WAL small.
 */
export async function deleteKeysBefore(em: EntityManager, cutoff: Date, batch: number): Promise<number> {
  const deleted: unknown[] = await em.execute(
    `delete from idempotency_key where ctid in (select ctid from idempotency_key where created_at < ? limit ?) returning key_hash`,
    [cutoff, batch],
  );
  return deleted.length;
}
