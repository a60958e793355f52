/** Writing events to the outbox, inside the caller's transaction. */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { TWebhookEvent } from '@svc/schemas';
import { EventSchema } from './events.entities.js';

/** The events of the outbox are exactly the ones a webhook can subscribe to. */
export type EventType = TWebhookEvent;

import { newEventId } from '../../lib/ids.js';

export { newEventId };

/** Persists (does not flush) an event; it commits or rolls back with the change it describes. */
export function recordEvent(em: EntityManager, storeId: string, type: EventType, payload: Record<string, unknown>, at: Date): string {
  const id = newEventId();
  em.create(EventSchema, { id, store: storeId, type, payload, createdAt: at });
  return id;
}
