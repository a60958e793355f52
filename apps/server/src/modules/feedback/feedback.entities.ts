/** One rating per completed order, shown publicly on the store. */
import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { OrderSchema } from '../orders/orders.entities.js';
import { StoreSchema } from '../stores/stores.entities.js';

export const FeedbackSchema = defineEntity({
  name: 'Feedback',
  tableName: 'feedback',
  checks: [{ name: 'feedback_rating_check', expression: 'rating >= 1 and rating <= 5' }],
  indexes: [
    {
      name: 'feedback_store_created_index',
      expression:
        'create index "feedback_store_created_index" on "feedback" ("store_id", "created_at" desc, "id" desc)',
    },
  ],
  properties: (p) => ({
    id: p.string().primary().length(32),
    store: p.manyToOne(StoreSchema).ref().foreignKeyName('feedback_store_id_fkey').updateRule('no action'),
    order: p.oneToOne(OrderSchema).ref().unique().foreignKeyName('feedback_order_id_fkey').updateRule('no action'),
    rating: p.smallint(),
    text: p.string().length(2000),
    createdAt: p.datetime(),
  }),
});
export type Feedback = InferEntity<typeof FeedbackSchema>;
