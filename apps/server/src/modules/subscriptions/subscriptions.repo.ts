/**
 * The subscriptions' raw SQL: the keyset pages (the list and the buyer's), and the billing
 * engine's claim on due work. Each statement says why it is raw.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { TSubscriptionStatus } from '@svc/schemas';
import { readOnReplica } from '../../db/replicas.js';
import type { KeysetPosition } from '../../lib/cursor.js';
import { KeysetWhere } from '../../lib/keyset.js';
import { iso } from '../../lib/timestamps.js';

export interface SubscriptionPageFilter {
  storeId: string;
  livemode: boolean;
  status?: TSubscriptionStatus;
  productId?: string;
  customerEmail?: string;
}

/**
 * A page of a store's subscriptions, newest first, as ids and microsecond positions. Raw: the
 * row-value keyset comparison the (store_id, livemode[, status | customer_email], created_at desc,
 * id desc) indexes serve, which the ORM cannot say; a listing, so on a read replica when there is one.
 */
export async function selectSubscriptionPage(
  em: EntityManager,
  filter: SubscriptionPageFilter,
  before: KeysetPosition | undefined,
  limit: number,
): Promise<Array<{ id: string; us: string }>> {
  const where = new KeysetWhere('store_id = ?', filter.storeId).and('livemode = ?', filter.livemode);
  if (filter.status) where.and('status = ?', filter.status);
  if (filter.customerEmail) where.and('customer_email = ?', filter.customerEmail);
  if (filter.productId) where.and('product_id = ?', filter.productId);
  where.before(before, 'created_at', 'id');
  return readOnReplica(
    em,
    `select id, (extract(epoch from created_at) * 1000000)::bigint::text as us
       from subscription where ${where.sql}
      order by created_at desc, id desc limit ?`,
    [...where.params, limit],
  );
}

/**
 * The billing engine's claim: up to `limit` live subscriptions whose next move is due at `now`,
 * that no other worker holds, leased to the caller until `leaseUntil`. Raw: `FOR UPDATE SKIP
 * LOCKED` in a sub-select of an UPDATE, one statement, so two workers never claim the same row and
 * a worker that dies leaves a claim that runs out; the partial due index serves it.
 */
export async function claimDueSubscriptions(
  em: EntityManager,
  now: Date,
  leaseUntil: Date,
  limit: number,
): Promise<string[]> {
  const rows = await em.execute<Array<{ id: string }>>(
    `update subscription set lease_until = ?
      where id in (
        select id from subscription
         where due_at <= ? and due_at is not null and livemode and (lease_until is null or lease_until <= ?)
         order by due_at limit ? for update skip locked)
      returning id`,
    [leaseUntil, now, now, limit],
  );
  return rows.map((row) => row.id);
}

/** When the next live move falls due (the engine sleeps until then). Raw: min() off the due index. */
export async function selectNextDue(em: EntityManager): Promise<Date | null> {
  const rows = await em.execute<Array<{ at: string | null }>>(
    `select min(due_at) as at from subscription where due_at is not null and livemode`,
  );
  const at = rows[0]?.at;
  return at ? new Date(iso(at)) : null;
}
