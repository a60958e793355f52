/** The feedback module's raw SQL. */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { KeysetPosition } from '../../lib/cursor.js';
import { KeysetWhere } from '../../lib/keyset.js';

export interface FeedbackRow {
  id: string;
  rating: number;
  text: string;
  /** MikroORM sets pg to hand timestamps over as text. */
  created_at: Date | string;
  product_name: string;
  created_us: string;
}

/**
 * One keyset page of a store's feedback, newest first, with the product each order was for: a
 * row-value comparison `(created_at, id) < before` on the (store, created_at desc, id desc) index,
 * which the ORM cannot write, and the join straight into the view. Feedback is on an order, so it is
 * of the order's mode (test mode: docs/architecture.md).
 */
export async function selectFeedbackPage(
  em: EntityManager,
  storeId: string,
  livemode: boolean,
  before: KeysetPosition | undefined,
  limit: number,
): Promise<FeedbackRow[]> {
  const where = new KeysetWhere('f.store_id = ?', storeId)
    .and('o.livemode = ?', livemode)
    .before(before, 'f.created_at', 'f.id');
  return em.execute(
    `select f.id, f.rating, f.text, f.created_at, o.product_name,
       (extract(epoch from f.created_at) * 1000000)::bigint as created_us
     from feedback f join "order" o on o.id = f.order_id
     where ${where.sql} order by f.created_at desc, f.id desc limit ?`,
    [...where.params, limit],
  );
}
