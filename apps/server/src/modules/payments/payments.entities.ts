/** Payments of orders and the inbound gateway notifications already handled. */
import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { OrderSchema } from '../orders/orders.entities.js';

export const PaymentSchema = defineEntity({
  name: 'Payment',
  tableName: 'payment',
  properties: (p) => ({
    id: p.string().primary().length(32),
    order: p.manyToOne(OrderSchema).ref(),
    gateway: p.string().length(20),
    providerRef: p.string().length(200).nullable(),
    amountMinor: p.bigint('number'),
    currency: p.string().length(3),
    status: p.enum(['started', 'paid', 'refunded', 'failed', 'rejected']),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  }),
});
export type Payment = InferEntity<typeof PaymentSchema>;
