/** One rating per completed order, shown publicly on the store. */
import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { OrderSchema } from '../orders/orders.entities.js';
import { StoreSchema } from '../stores/stores.entities.js';

export const FeedbackSchema = defineEntity({
  name: 'Feedback',
  tableName: 'feedback',
  properties: (p) => ({
    id: p.string().primary().length(32),
    store: p.manyToOne(StoreSchema).ref(),
    order: p.oneToOne(OrderSchema).ref().unique(),
    rating: p.smallint(),
    text: p.string().length(2000),
    createdAt: p.datetime(),
  }),
});
export type Feedback = InferEntity<typeof FeedbackSchema>;
