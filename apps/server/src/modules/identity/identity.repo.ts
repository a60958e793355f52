/** The identity module's raw SQL. */
import type { EntityManager } from '@mikro-orm/postgresql';

export interface OpenSignInCode {
  id: string;
  code_hash: string;
  attempts: number;
}

/**
 * The account's open sign-in codes, with one try counted on each when `counts` (the password was
 * right) and none when not. One statement either way that rewrites the same rows (`attempts + 0`
 * writes them too), so the answer's time does not tell whether the password was right; and an
 * increment that returns the new counts, so parallel tries cannot pass the budget. The ORM has no
 * UPDATE ... RETURNING.
 */
export async function tryOpenSignInCodes(
  em: EntityManager,
  userId: string,
  now: Date,
  counts: boolean,
): Promise<OpenSignInCode[]> {
  return em.execute<OpenSignInCode[]>(
    'update sign_in_code set attempts = attempts + ? where user_id = ? and used_at is null and expires_at > ? returning id, code_hash, attempts',
    [counts ? 1 : 0, userId, now],
  );
}
