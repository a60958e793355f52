/**
 * The transactional outbox's one writer. Every event a store's webhooks may receive is written
 * here, in the same transaction as the change it describes, and the dispatchers' wake-up is
 * arranged for when that transaction commits (at once outside one), whatever its shape: the
 * ORM's transactions, savepoints nested in them, or a raw statement that writes the event beside
 * other rows (`eventInsert`, then `afterEventWrite`).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { TWebhookEvent } from '@svc/schemas';
import { newEventId } from '../../lib/ids.js';
import { EventSchema } from './events.entities.js';
import { eventRowInsert } from './events.repo.js';
import { wakeHubOf } from './wake.js';

/** The events of the outbox are exactly the ones a webhook can subscribe to (and the test ping). */
export type EventType = TWebhookEvent;

export interface OutboxEvent {
  storeId: string;
  type: EventType | 'webhook.test';
  payload: Record<string, unknown>;
  at: Date;
  /** Written as already dispatched: nobody subscribes to it (the test ping's own event). */
  dispatched?: boolean;
}

/** The INSERT of one event, for a statement that writes it beside other rows; its id first. */
export function eventInsert(event: OutboxEvent): { id: string; sql: string; params: unknown[] } {
  const id = newEventId();
  return { id, ...eventRowInsert({ id, storeId: event.storeId, type: event.type, payload: event.payload, at: event.at, dispatchedAt: event.dispatched ? event.at : null }) };
}

/** After a raw statement wrote events: the wake-up when its transaction commits (at once outside one). */
export function afterEventWrite(em: EntityManager): void {
  wakeHubOf(em)?.afterCommitOf(em);
}

/** Writes an event now, in `em`'s transaction, and arranges the wake-up. Returns its id (`evt_...`). */
export async function recordEvent(em: EntityManager, event: OutboxEvent): Promise<string> {
  const id = newEventId();
  await em.insert(EventSchema, { id, store: event.storeId, type: event.type, payload: event.payload, createdAt: event.at, dispatchedAt: event.dispatched ? event.at : null });
  if (!event.dispatched) afterEventWrite(em);
  return id;
}
