/** The coupons module's raw SQL: the use counter, changed in place. */
import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Counts one use unless the coupon is used up; returns whether it counted. A conditional
 * UPDATE ... RETURNING: two orders racing for the last use cannot both get it, without a lock
 * held across the checkout.
 */
export async function incrementUses(em: EntityManager, couponId: string): Promise<boolean> {
  const claimed = await em.execute<Array<{ id: string }>>(
    'update coupon set uses = uses + 1 where id = ? and (max_uses is null or uses < max_uses) returning id',
    [couponId],
  );
  return claimed.length === 1;
}

/** Gives back `count` uses. Arithmetic on the column in one statement (no read-modify-write race), never below zero. */
export async function decrementUses(em: EntityManager, couponId: string, count: number): Promise<void> {
  await em.execute('update coupon set uses = greatest(uses - ?, 0) where id = ?', [count, couponId]);
}
