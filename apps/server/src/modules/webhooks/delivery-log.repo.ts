/**
 * The delivery log (`webhook_delivery`) as the API reads it, and the one INSERT of queued
 * attempts that everything sending an event again goes through (fan-out, the next attempt after
 * a failure, an abandoned attempt, retry, replay and resend): an endpoint's page of attempts,
 * its outcomes per hour, the events of a replay range with their last attempt, and the pruning
 * of the log and of the outbox events nothing will send again. An attempt is `queued`, then
 * `pending` under a claim's lease (claims.repo.ts), then `success`, `failed` or `skipped`
 * (outcomes.repo.ts). Raw SQL only where the ORM cannot say it or the hot path needs it, with a
 * line above each such statement saying which.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { preparedRows } from '../../db/prepared.js';
import type { KeysetPosition } from '../../lib/cursor.js';
import { KeysetWhere } from '../../lib/keyset.js';
import { newId } from '../../lib/ids.js';

/** Rows per multi-row INSERT: 9 parameters each stays far below PostgreSQL's 65,535 per statement. */
const INSERT_CHUNK = 500;

/** A timestamp from a raw query (MikroORM leaves them as text) as a Date. */
export const toDate = (value: string | Date): Date => (value instanceof Date ? value : new Date(value));

/** An attempt to put in the log as `queued`. */
export interface QueuedAttempt {
  webhookId: string;
  storeId: string;
  eventId: string;
  event: string;
  attempt: number;
  dueAt: Date;
}

/**
 * The one INSERT of queued attempts (fan-out, the next attempt after a failure, an abandoned
 * attempt sent again, retry and replay). An (endpoint, event, attempt) already in the log is
 * left as it is: whoever queued it first wins. Each attempt is of its endpoint's mode (live or
 * test), read from the endpoint in the same statement. Returns the ids inserted.
 */
export async function insertQueuedAttempts(em: EntityManager, attempts: QueuedAttempt[], now: Date): Promise<string[]> {
  // The new ids ascend in the order the attempts are given (ids are lower-case letters and digits
  // of one length, which collations order as bytes): the claims break a tie on due_at by id, so
  // the attempts of one fan-out are sent in the order their events were recorded (fanOutBatch).
  const newIds = attempts.map(() => newId()).sort();
  const ids: string[] = [];
  for (let start = 0; start < attempts.length; start += INSERT_CHUNK) {
    const chunk = attempts.slice(start, start + INSERT_CHUNK);
    // Raw: ON CONFLICT DO NOTHING, and one round trip for the whole chunk, its columns as arrays
    // (unnest) so that one prepared statement serves every chunk size.
    const inserted = await preparedRows<{ id: string }>(
      em,
      `insert into webhook_delivery (id, webhook_id, store_id, livemode, event_id, event, attempt, status, due_at, created_at, updated_at)
       select a.id, a.webhook_id, a.store_id, w.livemode, a.event_id, a.event, a.attempt, 'queued', a.due_at, ?, ?
       from unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::int[], ?::timestamptz[])
         as a(id, webhook_id, store_id, event_id, event, attempt, due_at)
       join webhook w on w.id = a.webhook_id
       on conflict (webhook_id, event_id, attempt) do nothing returning id`,
      [
        now,
        now,
        newIds.slice(start, start + INSERT_CHUNK),
        chunk.map((a) => a.webhookId),
        chunk.map((a) => a.storeId),
        chunk.map((a) => a.eventId),
        chunk.map((a) => a.event),
        chunk.map((a) => a.attempt),
        chunk.map((a) => a.dueAt),
      ],
    );
    ids.push(...inserted.map((row) => row.id));
  }
  return ids;
}

/** An event of the replay range, with its last attempt to the endpoint (null: never attempted). */
export interface ReplayCandidate {
  id: string;
  type: string;
  last_attempt: number | null;
  last_status: string | null;
}

/** The store's events of the given types created in [from, to], oldest first, each with its last attempt to the endpoint. */
export async function eventsWithLastAttempt(
  em: EntityManager,
  webhookId: string,
  storeId: string,
  livemode: boolean,
  range: { from: Date; to: Date; types: string[] },
): Promise<ReplayCandidate[]> {
  // Raw: a LATERAL join (the latest attempt per event), which the ORM cannot express.
  return em.execute<ReplayCandidate[]>(
    `select e.id, e.type, last.attempt as last_attempt, last.status as last_status
     from event e
     left join lateral (
       select d.attempt, d.status from webhook_delivery d where d.webhook_id = ? and d.event_id = e.id order by d.attempt desc limit 1
     ) last on true
     where e.store_id = ? and e.livemode = ? and e.created_at >= ? and e.created_at <= ? and e.type in (?)
     order by e.created_at, e.id`,
    [webhookId, storeId, livemode, range.from, range.to, range.types],
  );
}

/** Deletes up to `limit` log rows created before `cutoff`, never an attempt still queued or in flight; returns how many. */
export async function deleteFinishedDeliveries(em: EntityManager, cutoff: Date, limit: number): Promise<number> {
  // Raw: a DELETE bounded by LIMIT (through a subquery), so a large backlog goes in short statements.
  const deleted: unknown[] = await em.execute(
    `delete from webhook_delivery where id in (
       select id from webhook_delivery where created_at < ? and status not in ('queued', 'pending') limit ?
     ) returning id`,
    [cutoff, limit],
  );
  return deleted.length;
}

/**
 * Deletes up to `limit` outbox events created before `cutoff` that were dispatched and have no
 * attempt left `queued` or `pending`: nothing will send them again. Returns how many.
 */
export async function deleteFinishedEvents(em: EntityManager, cutoff: Date, limit: number): Promise<number> {
  // Raw: a DELETE bounded by LIMIT (through a subquery) with a NOT EXISTS over the delivery log.
  const deleted: unknown[] = await em.execute(
    `delete from event where id in (
       select e.id from event e
       where e.created_at < ? and e.dispatched_at is not null
         and not exists (select 1 from webhook_delivery d where d.event_id = e.id and d.status in ('queued', 'pending'))
       limit ?
     ) returning id`,
    [cutoff, limit],
  );
  return deleted.length;
}

/** A row of the delivery log's page, as selectDeliveryPage reads it. */
export interface DeliveryPageRow {
  id: string;
  webhook_id: string;
  livemode: boolean;
  event_id: string;
  event: string;
  attempt: number;
  status: string;
  response_code: number | null;
  response_body_preview: string | null;
  error_message: string | null;
  duration_ms: number | null;
  request_headers: Record<string, string> | null;
  created_at: Date;
  created_us: string;
}

/**
 * One keyset page of an endpoint's log, newest first, the rows themselves: a row-value
 * comparison `(created_at, id) < before` on the (webhook, created_at desc, id desc) index, which
 * the ORM cannot write. One statement, whatever the page's depth (no OFFSET, no second load).
 */
export async function selectDeliveryPage(
  em: EntityManager,
  filter: { webhookId: string; status?: string | undefined; event?: string | undefined },
  before: KeysetPosition | undefined,
  limit: number,
): Promise<DeliveryPageRow[]> {
  const where = new KeysetWhere('d.webhook_id = ?', filter.webhookId);
  if (filter.status) where.and('d.status = ?', filter.status);
  if (filter.event) where.and('d.event = ?', filter.event);
  where.before(before, 'd.created_at', 'd.id');
  const rows = await em.execute<Array<Omit<DeliveryPageRow, 'created_at'> & { created_at: string | Date }>>(
    `select d.id, d.webhook_id, d.livemode, d.event_id, d.event, d.attempt, d.status, d.response_code, d.response_body_preview,
            d.error_message, d.duration_ms, d.request_headers, d.created_at,
            (extract(epoch from d.created_at) * 1000000)::bigint as created_us
       from webhook_delivery d
      where ${where.sql} order by d.created_at desc, d.id desc limit ?`,
    [...where.params, limit],
  );
  return rows.map((row) => ({ ...row, created_at: toDate(row.created_at) }));
}

/**
 * An endpoint's finished attempts per hour since `from`: successes and failures, counted by
 * PostgreSQL over the log index's (webhook_id, created_at) range. Raw: a GROUP BY on the hour
 * number with FILTERed counts, which the ORM cannot say. Hours are counted from the Unix epoch
 * (time-zone free).
 */
export async function countOutcomesByHour(
  em: EntityManager,
  webhookId: string,
  from: Date,
): Promise<Array<{ hour: string; success: number; failed: number }>> {
  return em.execute(
    `select floor(extract(epoch from created_at) / 3600)::bigint::text as hour,
            (count(*) filter (where status = 'success'))::int as success,
            (count(*) filter (where status = 'failed'))::int as failed
       from webhook_delivery
      where webhook_id = ? and created_at >= ?
      group by 1 order by 1`,
    [webhookId, from],
  );
}
