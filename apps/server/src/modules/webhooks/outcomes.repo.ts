/**
 * An attempt's outcome in the delivery log, and what it does to its endpoint: a success ends the
 * endpoint's failure streak; a failure lengthens it and, as the caller's retry policy decides,
 * queues the next attempt or disables the endpoint (skipping its queued attempts). A claimed
 * attempt's outcome is written only while its claim's lease holds (claims.repo.ts), so a
 * dispatcher that lost its claim changes nothing; a test ping's attempt is inserted with its
 * outcome. Raw SQL where the hot path needs one round trip, with a line above each statement.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { preparedRows } from '../../db/prepared.js';
import { insertQueuedAttempts, toDate } from './delivery-log.repo.js';
import type { SendResult } from './sender.js';
import { WebhookDeliverySchema, WebhookSchema } from './webhooks.entities.js';

/** Why the attempts of an endpoint that was disabled are skipped. */
export const ENDPOINT_DISABLED = 'Endpoint disabled.';
/** An endpoint's last_delivered_at is kept to this resolution (its row is not rewritten more often). */
const LAST_DELIVERED_RESOLUTION_MS = 1_000;

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
