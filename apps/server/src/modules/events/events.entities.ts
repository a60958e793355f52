/**
 * The transactional outbox: every event a store's webhooks may receive is written here in
 * the same transaction as the change it describes. The webhooks issue delivers them.
 */
import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { StoreSchema } from '../stores/stores.entities.js';

export const EventSchema = defineEntity({
  name: 'Event',
  tableName: 'event',
  properties: (p) => ({
    /** `evt_<cuid2>`, the same on every delivery attempt. */
    id: p.string().primary().length(40),
    store: p.manyToOne(StoreSchema).ref(),
    type: p.string().length(50),
    payload: p.json<Record<string, unknown>>(),
    createdAt: p.datetime(),
    /** When the dispatcher turned it into deliveries (null: not yet). */
    dispatchedAt: p.datetime().nullable(),
  }),
});
export type Event = InferEntity<typeof EventSchema>;
