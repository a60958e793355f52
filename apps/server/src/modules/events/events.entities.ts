/**
 * The transactional outbox: every event a store's webhooks may receive is written here in
 * the same transaction as the change it describes. The webhooks issue delivers them.
 */
import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { StoreSchema } from '../stores/stores.entities.js';

export const EventSchema = defineEntity({
  name: 'Event',
  tableName: 'event',
  indexes: [
    { name: 'event_store_created_index', properties: ['store', 'livemode', 'createdAt'] },
    // Fan-out: events not yet turned into deliveries, in the order they were recorded.
    {
      name: 'event_undispatched_index',
      expression:
        'create index "event_undispatched_index" on "event" ("created_at", "seq") where "dispatched_at" is null',
    },
    // Pruning (webhooks' prune-events job): dispatched events past the retention, oldest first.
    {
      name: 'event_dispatched_created_index',
      expression:
        'create index "event_dispatched_created_index" on "event" ("created_at") where "dispatched_at" is not null',
    },
  ],
  properties: (p) => ({
    /** `evt_<cuid2>`, the same on every delivery attempt. */
    id: p.string().primary().length(40),
    store: p.manyToOne(StoreSchema).ref().foreignKeyName('event_store_id_fkey').updateRule('no action'),
    /** The mode of the object it is about; only that mode's endpoints receive it. */
    livemode: p.boolean().default(true),
    type: p.string().length(50),
    payload: p.json<Record<string, unknown>>(),
    createdAt: p.datetime(),
    /**
     * The order events were recorded in, from a sequence: the events of one transaction share its
     * clock's `createdAt` (a settlement's `order.paid` and `order.completed`), and the fan-out
     * sends them in (createdAt, seq) order, so paid comes before completed (docs/decisions.md, #38).
     */
    seq: p.bigint('number').autoincrement(),
    /** When the dispatcher turned it into deliveries (null: not yet). */
    dispatchedAt: p.datetime().nullable(),
  }),
});
export type Event = InferEntity<typeof EventSchema>;
