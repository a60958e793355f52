/** Storefront events a theme records (page and product views, cart adds). No IP is kept. */
import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { StoreSchema } from '../stores/stores.entities.js';

export const TrackEventSchema = defineEntity({
  name: 'TrackEvent',
  tableName: 'track_event',
  indexes: [{ name: 'track_event_store_created_index', properties: ['store', 'createdAt'] }],
  properties: (p) => ({
    id: p.string().primary().length(32),
    store: p.manyToOne(StoreSchema).ref().foreignKeyName('track_event_store_id_fkey').updateRule('no action'),
    type: p.string().length(40),
    productId: p.string().length(32).nullable(),
    path: p.string().length(500).nullable(),
    createdAt: p.datetime(),
  }),
});
export type TrackEvent = InferEntity<typeof TrackEventSchema>;
