/** The events module's raw SQL. */
import type { EntityManager } from '@mikro-orm/postgresql';
import { preparedRows } from '../../db/prepared.js';
import { readOnReplica } from '../../db/replicas.js';
import type { KeysetPosition } from '../../lib/cursor.js';
import { KeysetWhere } from '../../lib/keyset.js';

/** An event as the outbox writes it. */
export interface NewEventRow {
  id: string;
  storeId: string;
  livemode: boolean;
  type: string;
  payload: Record<string, unknown>;
  at: Date;
  dispatchedAt: Date | null;
}

/**
 * The INSERT of one event row, for a statement that writes it beside other rows (the checkout's
 * one-statement order insert). Only the outbox (outbox.ts `eventInsert`) builds it. `payloadSql`:
 * the payload's expression around its one parameter, the JSON as built (`?::jsonb` unless given).
 */
export function eventRowInsert(row: NewEventRow, payloadSql = '?::jsonb'): { sql: string; params: unknown[] } {
  return {
    sql: `insert into event (id, store_id, livemode, type, payload, created_at, dispatched_at) values (?, ?, ?, ?, ${payloadSql}, ?, ?)`,
    params: [row.id, row.storeId, row.livemode, row.type, JSON.stringify(row.payload), row.at, row.dispatchedAt],
  };
}

/**
 * Events in one INSERT, in the order given (the sequence numbers follow it): a transaction's batch
 * (outbox.ts). Prepared, its rows as arrays (one statement text however many).
 */
export async function insertEventRows(em: EntityManager, rows: NewEventRow[]): Promise<void> {
  await preparedRows(
    em,
    `insert into event (id, store_id, livemode, type, payload, created_at, dispatched_at)
     select id, store_id, livemode, type, payload, created_at, dispatched_at
       from unnest(?::text[], ?::text[], ?::boolean[], ?::text[], ?::jsonb[], ?::timestamptz[], ?::timestamptz[])
            with ordinality as e(id, store_id, livemode, type, payload, created_at, dispatched_at, position)
      order by position`,
    [
      rows.map((row) => row.id),
      rows.map((row) => row.storeId),
      rows.map((row) => row.livemode),
      rows.map((row) => row.type),
      rows.map((row) => JSON.stringify(row.payload)),
      rows.map((row) => row.at),
      rows.map((row) => row.dispatchedAt),
    ],
  );
}

/** An event row as the events API reads it (`us`: its time in microseconds, for the keyset). */
export interface EventRow {
  id: string;
  store_id: string;
  livemode: boolean;
  type: string;
  payload: Record<string, unknown>;
  /** As the driver gives it (the ORM's connection reads timestamps as text). */
  created_at: Date | string;
  us: string;
}

export interface EventPageFilter {
  storeId: string;
  livemode: boolean;
  type?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
}

/**
 * A page of a store's events, newest first. Raw: the row-value keyset on (created_at, id) at
 * microsecond precision (the ORM cannot say it), on event_store_created_index (store_id, livemode, created_at).
 */
export async function selectEventPage(
  em: EntityManager,
  filter: EventPageFilter,
  before: KeysetPosition | undefined,
  limit: number,
): Promise<EventRow[]> {
  const where = new KeysetWhere('store_id = ?', filter.storeId);
  where.and('livemode = ?', filter.livemode);
  if (filter.type) where.and('type = ?', filter.type);
  if (filter.from) where.and('created_at >= ?', filter.from);
  if (filter.to) where.and('created_at <= ?', filter.to);
  where.before(before, 'created_at', 'id');
  // A listing: on a read replica when there is one (db/replicas.ts).
  return readOnReplica(
    em,
    `select id, store_id, livemode, type, payload, created_at, (extract(epoch from created_at) * 1000000)::bigint::text as us
       from event
      where ${where.sql}
      order by created_at desc, id desc limit ?`,
    [...where.params, limit],
  );
}

/**
 * Where a store's events of one mode stand now: the newest one's time and sequence number (the
 * start of a test clock's advance). Raw: one probe of the (store, livemode, created_at) index.
 */
export async function selectEventWatermark(
  em: EntityManager,
  storeId: string,
  livemode: boolean,
): Promise<{ at: Date; seq: number } | undefined> {
  const rows = await em.execute<Array<{ created_at: Date; seq: string }>>(
    `select created_at, seq from event where store_id = ? and livemode = ?
      order by created_at desc limit 1`,
    [storeId, livemode],
  );
  return rows[0] ? { at: new Date(rows[0].created_at), seq: Number(rows[0].seq) } : undefined;
}

/**
 * The types of a store's events of one mode recorded after `since` (selectEventWatermark) about a
 * subscription or one of `orderIds`, in the order they were recorded (a test clock's advance
 * answers them). Raw: JSON paths into the payload; the (store, livemode, created_at) index bounds
 * the rows read to the advance's own.
 */
export async function selectEventTypesSince(
  em: EntityManager,
  filter: {
    storeId: string;
    livemode: boolean;
    since: { at: Date; seq: number };
    subscriptionId: string;
    orderIds: string[];
  },
): Promise<string[]> {
  const rows = await em.execute<Array<{ type: string }>>(
    `select type from event
      where store_id = ? and livemode = ? and created_at >= ? and seq > ?
        and (payload->'subscription'->>'id' = ? or payload->'order'->>'id' in (?))
      order by seq`,
    [
      filter.storeId,
      filter.livemode,
      filter.since.at,
      filter.since.seq,
      filter.subscriptionId,
      // An empty list is no SQL: the empty id matches no order.
      filter.orderIds.length ? filter.orderIds : [''],
    ],
  );
  return rows.map((row) => row.type);
}
