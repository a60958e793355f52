/** The customers module's raw SQL. */
import type { EntityManager } from '@mikro-orm/postgresql';
import { readOnReplica } from '../../db/replicas.js';
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

/**
 * A page of the addresses of a store's signed-in buyers (customer-area accounts), in byte order
 * after `after`, those starting with `emailPrefix` only when it is given: the other half of the
 * seller's list, beside the addresses that bought (orders/order-reads.ts buyerEmails). Served by
 * customer_store_mode_email_c_index; a keyset in the "C" collation the ORM cannot write.
 */
export async function selectCustomerEmails(
  em: EntityManager,
  filter: { storeId: string; livemode: boolean; emailPrefix?: string | undefined },
  after: string | undefined,
  limit: number,
): Promise<string[]> {
  const where = new KeysetWhere('c.store_id = ?', filter.storeId);
  where.and('c.livemode = ?', filter.livemode);
  where.and(`c.email collate "C" > ?`, after ?? '');
  if (filter.emailPrefix !== undefined) {
    where.and(`c.email collate "C" >= ?`, filter.emailPrefix);
    where.and(`c.email collate "C" < ?`, `${filter.emailPrefix}\u{10FFFF}`);
  }
  const rows = await readOnReplica<{ email: string }>(
    em,
    `select c.email collate "C" as email from customer c where ${where.sql} order by 1 limit ?`,
    [...where.params, limit],
  );
  return rows.map((row) => row.email);
}
