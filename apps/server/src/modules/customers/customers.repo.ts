/** The customers module's raw SQL. */
import type { EntityManager } from '@mikro-orm/postgresql';

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
