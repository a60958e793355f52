/**
 * The claims of the webhook dispatchers (scheduler.ts): the statements that take work with
 * `FOR UPDATE SKIP LOCKED`, so any number of dispatchers share the outbox and the log and none
 * waits for or repeats another's rows. Fan-out turns outbox events into queued attempts; a claim
 * makes due attempts `pending` under a lease (claimDue across endpoints, claimForEndpoint for one
 * endpoint's backlog); a claimed attempt not sent is skipped or given back while the lease holds;
 * an attempt still pending past its lease is reaped as abandoned and queued again. Writing an
 * attempt's outcome under its lease is outcomes.repo.ts's; the log the API reads,
 * delivery-log.repo.ts's.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { preparedRows } from '../../db/prepared.js';
import { insertQueuedAttempts, toDate, type QueuedAttempt } from './delivery-log.repo.js';
import { WebhookDeliverySchema } from './webhooks.entities.js';

/** The log's word for an attempt whose dispatcher died holding it (see reapAbandoned). */
export const ABANDONED_MESSAGE =
  'Abandoned: the sending dispatcher stopped before recording an answer; sent again as the next attempt.';

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
    // In the order the events were recorded (seq breaks a transaction's tie on created_at), and the
    // attempts are queued in that order (insertQueuedAttempts' ids ascend with it): paid before completed.
    const events = await preparedRows<{ id: string; store_id: string; livemode: boolean; type: string }>(
      tx,
      `select id, store_id, livemode, type from event where dispatched_at is null order by created_at, seq limit ? for update skip locked`,
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
        // An endpoint receives only its own mode's events (test mode: a test endpoint never sees live data).
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
  /** When it was due: with the id, its place in its endpoint's queue. */
  dueAt: Date;
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
       order by due_at, id limit ?
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
  return inQueueOrder(rows).map((row) => claimedAttempt(row, request.lease));
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
  return inQueueOrder(rows).map((row) => claimedAttempt(row, request.lease));
}

/**
 * Claimed rows in the order they were queued, (due_at, id) as the claims chose them: UPDATE ...
 * RETURNING gives no order, and the dispatcher starts an endpoint's attempts in claim order.
 */
function inQueueOrder(rows: ClaimedRow[]): ClaimedRow[] {
  const at = (row: ClaimedRow) => toDate(row.due_at).getTime();
  return rows.sort((a, b) => at(a) - at(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** What a claim returns of each attempt: the attempt, its endpoint now, and its event's payload. */
const CLAIMED_COLUMNS = `d.id, d.due_at, d.webhook_id, d.store_id, d.livemode, d.event_id, d.event, d.attempt, w.url, w.secret_enc, w.enabled, w.events,
       e.payload, e.created_at as event_created_at`;

interface ClaimedRow {
  id: string;
  due_at: string | Date;
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
    dueAt: toDate(row.due_at),
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
