/** The blacklist module's raw SQL. */
import type { EntityManager } from '@mikro-orm/postgresql';
import { preparedRows } from '../../db/prepared.js';

/**
 * Which of the candidate (kind, value) pairs the store blocks in the mode. Hot path (every order and every
 * checkout start asks): the query builder cost more than the query.
 */
export async function matchingKinds<K extends string>(
  em: EntityManager,
  storeId: string,
  livemode: boolean,
  candidates: Array<{ kind: K; value: string }>,
): Promise<K[]> {
  // The candidates as two arrays (unnest): one statement text whatever their number, prepared once per connection.
  const rows = await preparedRows<{ kind: K }>(
    em,
    `select distinct b.kind from blacklist_entry b
     join unnest(?::text[], ?::text[]) as c(kind, value) on b.kind = c.kind and b.value = c.value
     where b.store_id = ? and b.livemode = ?`,
    [candidates.map((c) => c.kind), candidates.map((c) => c.value), storeId, livemode],
  );
  return rows.map((row) => row.kind);
}
