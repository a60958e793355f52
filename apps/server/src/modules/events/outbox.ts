/**
 * The transactional outbox's one writer. Every event a store's webhooks may receive is written
 * here, in the same transaction as the change it describes, and the dispatchers' wake-up is
 * arranged for when that transaction commits (at once outside one), whatever its shape: the
 * ORM's transactions, savepoints nested in them, or a raw statement that writes the event beside
 * other rows (`eventInsert`, then `afterEventWrite`).
 */
import type { ServiceContext } from '../request/context.js';
import { addToCommitBatch, type CommitBatch } from '../request/transaction.js';
import { EVENT_PAYLOADS, type TWebhookEvent } from '@svc/schemas';
import { newEventId } from '../../lib/ids.js';
import { EventSchema } from './events.entities.js';
import { eventRowInsert, insertEventRows, type NewEventRow } from './events.repo.js';
import { wakeHubOf } from './wake.js';

/** The events of the outbox are exactly the ones a webhook can subscribe to (and the test ping). */
export type EventType = TWebhookEvent;

export interface OutboxEvent {
  storeId: string;
  /** The mode of the object it is about (test mode: docs/architecture.md): only that mode's endpoints receive it. */
  livemode: boolean;
  type: EventType | 'webhook.test';
  payload: Record<string, unknown>;
  at: Date;
  /** Written as already dispatched: nobody subscribes to it (the test ping's own event). */
  dispatched?: boolean;
}

/**
 * Checks an event's payload against its type's schema (EVENT_PAYLOADS, the schemas the OpenAPI
 * document's `webhooks` section shows), in every environment: a payload that does not match is
 * a bug in the code that built it, so this throws rather than send it. The payload is written as
 * it was built (the schema only checks it), so the wire format is what the code produced.
 */
export function assertEventPayload(type: OutboxEvent['type'], payload: Record<string, unknown>): void {
  const schema = EVENT_PAYLOADS[type];
  if (!schema) throw new Error(`outbox: unknown event type ${type}`);
  const parsed = schema.safeParse(payload);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .map((issue) => `${issue.path.join('.') || '(payload)'}: ${issue.message}`)
      .join('; ');
    throw new Error(`outbox: the ${type} payload does not match its schema: ${issues}`);
  }
}

/**
 * The INSERT of one event, for a statement that writes it beside other rows; its id first.
 * `payloadSql`, for a statement that fills in a value of the payload it makes itself (the
 * checkout's order number, drawn by the same statement): the payload's SQL expression around its
 * one `?::jsonb`, the payload as built and checked here.
 */
export function eventInsert(event: OutboxEvent, payloadSql?: string): { id: string; sql: string; params: unknown[] } {
  assertEventPayload(event.type, event.payload);
  const id = newEventId();
  return {
    id,
    ...eventRowInsert(
      {
        id,
        storeId: event.storeId,
        livemode: event.livemode,
        type: event.type,
        payload: event.payload,
        at: event.at,
        dispatchedAt: event.dispatched ? event.at : null,
      },
      payloadSql,
    ),
  };
}

/** After a raw statement wrote events: the wake-up when its transaction commits (at once outside one). */
export function afterEventWrite(ctx: Pick<ServiceContext, 'em'>): void {
  wakeHubOf(ctx.em)?.afterCommitOf(ctx.em);
}

/** The events of a transaction inTransaction opened: one INSERT just before it commits. */
const eventBatch: CommitBatch<NewEventRow> = { write: insertEventRows };

/**
 * Writes an event in the context's transaction (inTransaction's, or none) and arranges the wake-up. Returns its id (`evt_...`).
 * In a transaction inTransaction opened, the row joins the transaction's batch of events, inserted
 * in one prepared statement just before it commits (a settlement's `order.paid` and
 * `order.completed` cost no round trip of their own); in another transaction (a savepoint, say) it
 * joins the unit of work; outside one it is inserted at once.
 */
export async function recordEvent(ctx: Pick<ServiceContext, 'em'>, event: OutboxEvent): Promise<string> {
  const { em } = ctx;
  assertEventPayload(event.type, event.payload);
  const id = newEventId();
  const row: NewEventRow = {
    id,
    storeId: event.storeId,
    livemode: event.livemode,
    type: event.type,
    payload: event.payload,
    at: event.at,
    dispatchedAt: event.dispatched ? event.at : null,
  };
  if (!addToCommitBatch(ctx, eventBatch, row)) {
    const entity = {
      id,
      store: row.storeId,
      livemode: row.livemode,
      type: row.type,
      payload: row.payload,
      createdAt: row.at,
      dispatchedAt: row.dispatchedAt,
    };
    if (em.isInTransaction()) em.create(EventSchema, entity);
    else await em.insert(EventSchema, entity);
  }
  if (!event.dispatched) afterEventWrite({ em });
  return id;
}
