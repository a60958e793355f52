/** The customers module's raw SQL. */
import type { EntityManager } from '@mikro-orm/postgresql';
import { readOnReplica } from '../../db/replicas.js';
import type { KeysetPosition } from '../../lib/cursor.js';
import { KeysetWhere } from '../../lib/keyset.js';

/**
 * Makes requests for one address's sign-in code take turns until the transaction ends. An
 * advisory lock (the ORM has none): there is no row to lock before the first code exists.
 */
export async function lockAddress(em: EntityManager, storeId: string, email: string): Promise<void> {
  await em.execute('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`customer-code:${storeId}:${email}`]);
}

/**
 * Counts one try of an open code and returns the count (undefined once the code is used). An
 * increment returning the new value in one statement: parallel guesses cannot exceed the budget.
 */
export async function countAttempt(em: EntityManager, codeId: string): Promise<number | undefined> {
  const [counted] = await em.execute<Array<{ attempts: number }>>(
    'update customer_code set attempts = attempts + 1 where id = ? and used_at is null returning attempts',
    [codeId],
  );
  return counted?.attempts;
}

export interface CustomerRow {
  livemode: boolean;
  id: string;
  email: string;
  /** MikroORM sets pg to hand timestamps over as text; see `iso`. */
  created_at: Date | string;
  created_us: string;
}

/**
 * One keyset page of a store's customers, newest first: `(created_at, id) < before`, served by
 * customer_store_mode_created_index, or with `emailPrefix` by customer_store_mode_email_prefix_index (`like`
 * with the prefix's wildcards escaped). A row-value comparison the ORM cannot write; the columns
 * straight into the view. A listing: on a replica when there is one.
 */
export async function selectCustomerPage(
  em: EntityManager,
  filter: { storeId: string; livemode: boolean; emailPrefix?: string | undefined },
  before: KeysetPosition | undefined,
  limit: number,
): Promise<CustomerRow[]> {
  const where = new KeysetWhere('c.store_id = ?', filter.storeId);
  where.and('c.livemode = ?', filter.livemode);
  if (filter.emailPrefix !== undefined)
    where.and(`c.email like ?`, `${filter.emailPrefix.replace(/[\\%_]/g, '\\$&')}%`);
  where.before(before, 'c.created_at', 'c.id');
  return readOnReplica(
    em,
    `select c.id, c.livemode, c.email, c.created_at, (extract(epoch from c.created_at) * 1000000)::bigint as created_us
     from customer c where ${where.sql} order by c.created_at desc, c.id desc limit ?`,
    [...where.params, limit],
  );
}
