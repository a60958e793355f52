/** The tickets module's raw SQL. */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { TTicketStatus } from '@svc/schemas';
import type { KeysetPosition } from '../../lib/cursor.js';
import { KeysetWhere } from '../../lib/keyset.js';

export interface TicketRow {
  id: string;
  store_id: string;
  livemode: boolean;
  order_id: string;
  order_number: string;
  customer_email: string;
  subject: string;
  status: TTicketStatus;
  /** MikroORM sets pg to hand timestamps over as text. */
  created_at: Date | string;
  updated_at: Date | string;
  updated_us: string;
  message_count: string;
}

/**
 * One keyset page of a store's tickets, newest activity first: a row-value comparison
 * `(updated_at, id) < before` on the (store, updated_at desc, id desc) index, which the ORM cannot
 * write, with each ticket's order number and message count in the same statement.
 */
export async function selectTicketPage(
  em: EntityManager,
  filter: { storeId: string; livemode: boolean; status?: TTicketStatus | undefined },
  before: KeysetPosition | undefined,
  limit: number,
): Promise<TicketRow[]> {
  const where = new KeysetWhere('t.store_id = ?', filter.storeId);
  where.and('t.livemode = ?', filter.livemode);
  if (filter.status) where.and('t.status = ?', filter.status);
  where.before(before, 't.updated_at', 't.id');
  return em.execute(
    `select t.id, t.store_id, t.livemode, t.order_id, o.number as order_number, o.customer_email, t.subject, t.status, t.created_at, t.updated_at,
       (extract(epoch from t.updated_at) * 1000000)::bigint as updated_us,
       (select count(*) from ticket_message m where m.ticket_id = t.id) as message_count
     from ticket t join "order" o on o.id = t.order_id
     where ${where.sql} order by t.updated_at desc, t.id desc limit ?`,
    [...where.params, limit],
  );
}
