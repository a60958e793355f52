/**
 * The delivery log's statements: those on `webhook_delivery`, on the webhook row's delivery
 * counters (failure streak, last delivery, disabling), and on the outbox where the log decides
 * (fan-out marks events dispatched; pruning deletes the events nothing will send again).
 * An attempt is `queued`, then `pending` under a claim's lease, then `success`, `failed` or
 * `skipped`; every write to a claimed attempt is guarded by its lease, so a dispatcher that lost
 * its claim changes nothing. Raw SQL only where the ORM cannot say it or the hot path needs it,
 * with a line above each such statement saying which.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { preparedRows } from '../../db/prepared.js';
import type { KeysetPosition } from '../../lib/cursor.js';
import { KeysetWhere } from '../../lib/keyset.js';
import { newId } from '../../lib/ids.js';
import type { SendResult } from './sender.js';
import { WebhookDeliverySchema, WebhookSchema } from './webhooks.entities.js';

/** The log's word for an attempt whose dispatcher died holding it (see reapAbandoned). */
export const ABANDONED_MESSAGE =
  'Abandoned: the sending dispatcher stopped before recording an answer; sent again as the next attempt.';
/** Why the attempts of an endpoint that was disabled are skipped. */
export const ENDPOINT_DISABLED = 'Endpoint disabled.';
/** An endpoint's last_delivered_at is kept to this resolution (its row is not rewritten more often). */
const LAST_DELIVERED_RESOLUTION_MS = 1_000;
/** Rows per multi-row INSERT: 9 parameters each stays far below PostgreSQL's 65,535 per statement. */
const INSERT_CHUNK = 500;

/** A timestamp from a raw query (MikroORM leaves them as text) as a Date. */
const toDate = (value: string | Date): Date => (value instanceof Date ? value : new Date(value));

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
 * left as it is: whoever queued it first wins. Each attempt is of its endpoint's mode (test mode,
 * DESIGN §9.3), read from the endpoint in the same statement. Returns the ids inserted.
 */
export async function insertQueuedAttempts(em: EntityManager, attempts: QueuedAttempt[], now: Date): Promise<string[]> {
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
        chunk.map(() => newId()),
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

/**
 * Fan-out of up to `batchSize` outbox events (`dispatched_at is null`): one `queued` attempt,
 * due now, per enabled endpoint of the event's store and mode subscribed to its type, in the transaction
 * that marks the events dispatched, so a crash at any point loses nothing and repeats nothing.
 */
export async function fanOutBatch(
  em: EntityManager,
  batchSize: number,
  now: Date,
): Promise<{ events: number; queued: number }> {
  return em.transactional(async (tx) => {
    // Raw: FOR UPDATE SKIP LOCKED, so dispatchers fanning out at once take disjoint batches. Prepared.
    const events = await preparedRows<{ id: string; store_id: string; livemode: boolean; type: string }>(
      tx,
      `select id, store_id, livemode, type from event where dispatched_at is null order by created_at limit ? for update skip locked`,
      [batchSize],
    );
    if (events.length === 0) return { events: 0, queued: 0 };
    const storeIds = [...new Set(events.map((e) => e.store_id))];
    // Raw: hot path (every event passes here), plain rows with nothing for the transaction to track. Prepared.
    const hooks = await preparedRows<{ id: string; store_id: string; livemode: boolean; events: string[] }>(
      tx,
      `select id, store_id, livemode, events from webhook where enabled and store_id = any(?)`,
      [storeIds],
    );
    const attempts: QueuedAttempt[] = [];
    for (const event of events) {
      for (const hook of hooks) {
        // An endpoint receives only its own mode's events (test mode, DESIGN §9.3).
        if (hook.store_id === event.store_id && hook.livemode === event.livemode && hook.events.includes(event.type)) {
          attempts.push({
            webhookId: hook.id,
            storeId: event.store_id,
            eventId: event.id,
            event: event.type,
            attempt: 1,
            dueAt: now,
          });
        }
      }
    }
    await insertQueuedAttempts(tx, attempts, now);
    // Raw: the batch's ids as one array parameter, one prepared statement for every batch size.
    await preparedRows(tx, `update event set dispatched_at = ? where id = any(?)`, [now, events.map((e) => e.id)]);
    return { events: events.length, queued: attempts.length };
  });
}

/**
 * Attempts still `pending` past their lease: the dispatcher that claimed them died (or stalled)
 * before recording an outcome. Each is recorded as failed ("abandoned") and its event is queued
 * again, due now, as the next attempt, so the log shows both tries and nothing stays pending.
 * The endpoint's failure streak is left alone: the receiver did not fail. Returns how many.
 */
export async function reapAbandoned(em: EntityManager, now: Date): Promise<number> {
  return em.transactional(async (tx) => {
    // Raw: FOR UPDATE SKIP LOCKED (two dispatchers reaping at once take different rows), and RETURNING what the next attempts need.
    const abandoned = await tx.execute<
      Array<{ webhook_id: string; store_id: string; event_id: string; event: string; attempt: number }>
    >(
      `update webhook_delivery d set status = 'failed', error_message = ?, locked_until = null, updated_at = ?
       where d.id in (
         select id from webhook_delivery where status = 'pending' and locked_until < ? order by locked_until limit 500 for update skip locked
       )
       returning d.webhook_id, d.store_id, d.event_id, d.event, d.attempt`,
      [ABANDONED_MESSAGE, now, now],
    );
    await insertQueuedAttempts(
      tx,
      abandoned.map((row) => ({
        webhookId: row.webhook_id,
        storeId: row.store_id,
        eventId: row.event_id,
        event: row.event,
        attempt: row.attempt + 1,
        dueAt: now,
      })),
      now,
    );
    return abandoned.length;
  });
}

/** One attempt as a claim returns it, with what sending needs. */
export interface ClaimedAttempt {
  id: string;
  webhookId: string;
  storeId: string;
  /** The attempt's mode (its endpoint's and its event's). */
  livemode: boolean;
  eventId: string;
  event: string;
  attempt: number;
  url: string;
  secretEnc: string;
  enabled: boolean;
  /** The endpoint's subscriptions now (they may have changed since the attempt was queued). */
  events: string[];
  /** Both null when the event is gone. */
  payload: Record<string, unknown> | null;
  eventCreatedAt: Date | null;
  /** The claim's lease: every write to this attempt is guarded by it. */
  lease: Date;
}

export interface ClaimRequest {
  now: Date;
  lease: Date;
  /** Attempts to claim at most. */
  room: number;
  /** Endpoints left out of the scan: they hold all they may already. */
  saturated: string[];
  /** Per endpoint, the slots already taken (held here, or closed to a slow endpoint); others start at `defaultOffset`. */
  offsets: Record<string, number>;
  defaultOffset: number;
  /** The last slot an endpoint may take. */
  slotsPerEndpoint: number;
}

/**
 * Takes up to `room` due `queued` attempts, at most up to each endpoint's free slots, and makes
 * them `pending` under the lease. Rows another dispatcher is claiming at the same moment are
 * skipped, not waited for.
 */
export async function claimDue(em: EntityManager, request: ClaimRequest): Promise<ClaimedAttempt[]> {
  // Candidates past an endpoint's free slots are ranked out, so more than the room is read.
  const scan = Math.min(Math.max(request.room * 2, 32), 512);
  // Raw: FOR UPDATE SKIP LOCKED, per-endpoint slots by a window function, and the claim plus what
  // sending needs in one round trip. Prepared: one text, planned once per connection.
  const rows = await preparedRows<ClaimedRow>(
    em,
    `with candidates as (
       select id, webhook_id, event_id, due_at from webhook_delivery
       where status = 'queued' and due_at <= ?
         and webhook_id <> all (select jsonb_array_elements_text(?::jsonb))
       order by due_at limit ?
       for update skip locked
     ), ranked as (
       select c.*, row_number() over (partition by c.webhook_id order by c.due_at, c.id) + coalesce(b.value::int, ?) as slot
       from candidates c left join jsonb_each_text(?::jsonb) b on b.key = c.webhook_id
     ), chosen as (
       select * from ranked where slot <= ? order by due_at, id limit ?
     )
     update webhook_delivery d set status = 'pending', locked_until = ?, updated_at = ?
     from chosen c join webhook w on w.id = c.webhook_id left join event e on e.id = c.event_id
     where d.id = c.id
     returning ${CLAIMED_COLUMNS}`,
    [
      request.now,
      JSON.stringify(request.saturated),
      scan,
      request.defaultOffset,
      JSON.stringify(request.offsets),
      request.slotsPerEndpoint,
      request.room,
      request.lease,
      request.now,
    ],
  );
  return rows.map((row) => claimedAttempt(row, request.lease));
}

/**
 * Takes up to `limit` due `queued` attempts of one endpoint, oldest first, and makes them
 * `pending` under the lease: the refill of an endpoint whose slots freed up. It locks exactly the
 * rows it takes (a LIMIT under FOR UPDATE SKIP LOCKED, on the endpoint's due index), where the
 * scan of claimDue locks every candidate it ranks; another dispatcher refilling the same endpoint
 * at once takes the next rows.
 */
export async function claimForEndpoint(
  em: EntityManager,
  request: { webhookId: string; now: Date; lease: Date; limit: number },
): Promise<ClaimedAttempt[]> {
  // Raw: FOR UPDATE SKIP LOCKED, and the claim plus what sending needs in one round trip. Prepared.
  const rows = await preparedRows<ClaimedRow>(
    em,
    `with chosen as (
       select id, webhook_id, event_id from webhook_delivery
       where webhook_id = ? and status = 'queued' and due_at <= ?
       order by due_at, id limit ?
       for update skip locked
     )
     update webhook_delivery d set status = 'pending', locked_until = ?, updated_at = ?
     from chosen c join webhook w on w.id = c.webhook_id left join event e on e.id = c.event_id
     where d.id = c.id
     returning ${CLAIMED_COLUMNS}`,
    [request.webhookId, request.now, request.limit, request.lease, request.now],
  );
  return rows.map((row) => claimedAttempt(row, request.lease));
}

/** What a claim returns of each attempt: the attempt, its endpoint now, and its event's payload. */
const CLAIMED_COLUMNS = `d.id, d.webhook_id, d.store_id, d.livemode, d.event_id, d.event, d.attempt, w.url, w.secret_enc, w.enabled, w.events,
       e.payload, e.created_at as event_created_at`;

interface ClaimedRow {
  id: string;
  webhook_id: string;
  store_id: string;
  livemode: boolean;
  event_id: string;
  event: string;
  attempt: number;
  url: string;
  secret_enc: string;
  enabled: boolean;
  events: string[];
  payload: Record<string, unknown> | null;
  event_created_at: string | null;
}

function claimedAttempt(row: ClaimedRow, lease: Date): ClaimedAttempt {
  return {
    id: row.id,
    webhookId: row.webhook_id,
    storeId: row.store_id,
    livemode: row.livemode,
    eventId: row.event_id,
    event: row.event,
    attempt: row.attempt,
    url: row.url,
    secretEnc: row.secret_enc,
    enabled: row.enabled,
    events: row.events,
    payload: row.payload,
    eventCreatedAt: row.event_created_at === null ? null : toDate(row.event_created_at),
    lease,
  };
}

/** A claimed attempt not sent: `skipped` with the reason, if the claim still holds it. */
export async function skipClaimed(
  em: EntityManager,
  attempt: { id: string; lease: Date },
  reason: string,
  now: Date,
): Promise<void> {
  await em.nativeUpdate(
    WebhookDeliverySchema,
    { id: attempt.id, status: 'pending', lockedUntil: attempt.lease },
    { status: 'skipped', errorMessage: reason, lockedUntil: null, updatedAt: now },
  );
}

/** Claimed attempts not sent: back to `queued` (where the claim still holds them), due as they were. */
export async function giveBack(
  em: EntityManager,
  attempts: Array<{ id: string; lease: Date }>,
  now: Date,
): Promise<void> {
  if (attempts.length === 0) return;
  // Raw: any number of attempts, each guarded by its own lease, in one statement (a VALUES join).
  await em.execute(
    `update webhook_delivery d set status = 'queued', locked_until = null, updated_at = ?
     from (values ${attempts.map(() => '(?, ?::timestamptz)').join(', ')}) as mine(id, lease)
     where d.id = mine.id and d.status = 'pending' and d.locked_until = mine.lease`,
    [now, ...attempts.flatMap((a) => [a.id, a.lease])],
  );
}

/** Where an attempt's outcome is written: the claimed row (guarded by its lease) or a new row (a test ping). */
export interface AttemptRef {
  id: string;
  webhookId: string;
  storeId: string;
  eventId: string;
  event: string;
  attempt: number;
  /** The claim's lease; null: the row does not exist yet and is inserted with the outcome. */
  lease: Date | null;
  startedAt: Date;
}

/** The statement that writes the outcome, returning the attempt's webhook_id when it was written. */
function outcomeWrite(ref: AttemptRef, result: SendResult, now: Date): { sql: string; params: unknown[] } {
  const outcome = [
    result.ok ? 'success' : 'failed',
    result.statusCode,
    result.bodyPreview,
    result.errorMessage,
    result.durationMs,
    result.requestHeaders === null ? null : JSON.stringify(result.requestHeaders),
  ] as const;
  if (ref.lease === null) {
    return {
      sql: `insert into webhook_delivery (id, webhook_id, store_id, livemode, event_id, event, attempt, due_at, created_at, updated_at,
              status, response_code, response_body_preview, error_message, duration_ms, request_headers)
            values (?, ?, ?, (select livemode from webhook where id = ?), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb) returning webhook_id`,
      params: [
        ref.id,
        ref.webhookId,
        ref.storeId,
        ref.webhookId,
        ref.eventId,
        ref.event,
        ref.attempt,
        ref.startedAt,
        ref.startedAt,
        now,
        ...outcome,
      ],
    };
  }
  return {
    sql: `update webhook_delivery set status = ?, response_code = ?, response_body_preview = ?, error_message = ?, duration_ms = ?,
            request_headers = ?::jsonb, locked_until = null, updated_at = ?
          where id = ? and status = 'pending' and locked_until = ? returning webhook_id`,
    params: [...outcome, now, ref.id, ref.lease],
  };
}

/**
 * The end of the failure streak of the endpoints of `d`, the attempts a success statement wrote
 * (its CTE named `d`, returning `webhook_id`): an endpoint's row is rewritten only when that
 * changes something or its last_delivered_at is a second old, so a busy endpoint's row is not
 * rewritten for every delivery (it was the hottest row of a run). Its parameters: endStreakParams.
 */
const END_FAILURE_STREAK = `w as (
       update webhook w set failure_count = 0, first_failure_at = null, last_delivered_at = ?
       from (select distinct webhook_id from d) e
       where w.id = e.webhook_id
         and (w.failure_count <> 0 or w.first_failure_at is not null or w.last_delivered_at is null or w.last_delivered_at < ?)
       returning w.id
     )`;
const endStreakParams = (now: Date) => [now, new Date(now.getTime() - LAST_DELIVERED_RESOLUTION_MS)];

/**
 * A successful attempt and the end of its endpoint's failure streak (END_FAILURE_STREAK): the
 * test ping's new row, or a claimed attempt outside the dispatcher's batches. False when nothing
 * was written: the lease was lost.
 */
export async function recordSuccess(
  em: EntityManager,
  ref: AttemptRef,
  result: SendResult,
  now: Date,
): Promise<boolean> {
  const write = outcomeWrite(ref, result, now);
  // Raw: hot path, the attempt and the endpoint's row in one round trip (a data-modifying CTE).
  const rows = await em.execute<Array<{ recorded: number }>>(
    `with d as (${write.sql}),
     ${END_FAILURE_STREAK}
     select (select count(*) from d)::int as recorded`,
    [...write.params, ...endStreakParams(now)],
  );
  return (rows[0]?.recorded ?? 0) > 0;
}

/** A successful attempt of a claim, as recordSuccesses writes it. */
export interface ClaimedSuccess {
  id: string;
  webhookId: string;
  lease: Date;
  result: SendResult;
  /** When its answer came (the row's updated_at). */
  at: Date;
}

/**
 * Successful attempts of claims, any number, in one statement: each row written if its claim
 * still holds it (its lease), and each endpoint's failure streak ended (END_FAILURE_STREAK).
 * Returns the ids written; an id missing lost its lease. The dispatcher writes the successes
 * that come in while one such statement runs together in the next (one statement per delivery
 * was most of PostgreSQL's time per delivery).
 */
export async function recordSuccesses(em: EntityManager, successes: ClaimedSuccess[], now: Date): Promise<Set<string>> {
  if (successes.length === 0) return new Set();
  // Raw: one UPDATE ... FROM unnest(...) for all of them, guarded row by row by its lease, and
  // the endpoints' rows in the same round trip (a data-modifying CTE). Prepared: one text.
  const rows = await preparedRows<{ id: string }>(
    em,
    `with v as (
       select * from unnest(?::text[], ?::timestamptz[], ?::int[], ?::text[], ?::int[], ?::timestamptz[], ?::jsonb[])
         as v(id, lease, response_code, preview, duration_ms, at, request_headers)
     ), d as (
       update webhook_delivery d set status = 'success', response_code = v.response_code, response_body_preview = v.preview,
         error_message = null, duration_ms = v.duration_ms, request_headers = v.request_headers, locked_until = null, updated_at = v.at
       from v where d.id = v.id and d.status = 'pending' and d.locked_until = v.lease
       returning d.id, d.webhook_id
     ), ${END_FAILURE_STREAK}
     select id from d`,
    [
      successes.map((s) => s.id),
      successes.map((s) => s.lease),
      successes.map((s) => s.result.statusCode),
      successes.map((s) => s.result.bodyPreview),
      successes.map((s) => s.result.durationMs),
      successes.map((s) => s.at),
      successes.map((s) => (s.result.requestHeaders === null ? null : JSON.stringify(s.result.requestHeaders))),
      ...endStreakParams(now),
    ],
  );
  return new Set(rows.map((row) => row.id));
}

/** The endpoint as a failure left it. */
export interface EndpointStreak {
  failureCount: number;
  firstFailureAt: Date;
  enabled: boolean;
}

/** What follows a failure: disabling the endpoint, or the next attempt (or neither). */
export interface FailureFollowUp {
  disabledReason: string | null;
  nextDueAt: Date | null;
}

/**
 * A failed attempt, one more failure in its endpoint's streak, and what `followUp` decides from
 * that streak: disabling the endpoint (its queued attempts skipped) or queueing the next attempt.
 * One transaction, so the decision sees the streak this failure made and racing failures of the
 * same endpoint queue up on its row. Null when nothing was written: the lease was lost, or the
 * endpoint is gone.
 */
export async function recordFailure(
  em: EntityManager,
  ref: AttemptRef,
  result: SendResult,
  now: Date,
  followUp: (streak: EndpointStreak) => FailureFollowUp,
): Promise<FailureFollowUp | null> {
  return em.transactional(async (tx) => {
    const write = outcomeWrite(ref, result, now);
    // Raw: the same statement the success path nests in its CTE.
    const written: unknown[] = await tx.execute(write.sql, write.params);
    if (written.length === 0) return null;
    // Raw: an increment that returns the streak it made, in one round trip.
    const [hook] = await tx.execute<Array<{ failure_count: number; first_failure_at: string; enabled: boolean }>>(
      `update webhook set failure_count = failure_count + 1, first_failure_at = coalesce(first_failure_at, ?)
       where id = ? returning failure_count, first_failure_at, enabled`,
      [now, ref.webhookId],
    );
    if (!hook) return null;
    const next = followUp({
      failureCount: hook.failure_count,
      firstFailureAt: toDate(hook.first_failure_at),
      enabled: hook.enabled,
    });
    if (next.disabledReason) {
      await tx.nativeUpdate(
        WebhookSchema,
        { id: ref.webhookId },
        { enabled: false, disabledAt: now, disabledReason: next.disabledReason, updatedAt: now },
      );
      await tx.nativeUpdate(
        WebhookDeliverySchema,
        { webhook: ref.webhookId, status: 'queued' },
        { status: 'skipped', errorMessage: ENDPOINT_DISABLED, updatedAt: now },
      );
    } else if (next.nextDueAt) {
      await insertQueuedAttempts(
        tx,
        [
          {
            webhookId: ref.webhookId,
            storeId: ref.storeId,
            eventId: ref.eventId,
            event: ref.event,
            attempt: ref.attempt + 1,
            dueAt: next.nextDueAt,
          },
        ],
        now,
      );
    }
    return next;
  });
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
 * Makes a store's webhook creations take turns until the transaction ends, so the per-store
 * limit holds under racing requests. An advisory lock (the ORM has none; no row to lock yet).
 */
export async function lockStoreWebhooks(em: EntityManager, storeId: string): Promise<void> {
  await em.execute('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`webhooks:${storeId}`]);
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
