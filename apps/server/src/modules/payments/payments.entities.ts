/** Payments of orders and the inbound gateway notifications already handled. */
import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { OrderSchema } from '../orders/orders.entities.js';

export const PaymentSchema = defineEntity({
  name: 'Payment',
  tableName: 'payment',
  indexes: [
    { name: 'payment_order_index', properties: ['order'] },
    // A provider's payment settles one order once.
    {
      name: 'payment_gateway_ref_unique',
      expression:
        'create unique index "payment_gateway_ref_unique" on "payment" ("gateway", "provider_ref") where "provider_ref" is not null',
    },
  ],
  properties: (p) => ({
    id: p.string().primary().length(32),
    order: p.manyToOne(OrderSchema).ref().foreignKeyName('payment_order_id_fkey').updateRule('no action'),
    gateway: p.string().length(20),
    providerRef: p.string().length(200).nullable(),
    amountMinor: p.bigint('number'),
    currency: p.string().length(3),
    status: p.enum(['started', 'paid', 'refunded', 'failed', 'rejected']),
    /** The gateway's id of the refund that gave this payment back (Stripe's `re_...`); null for refunds made here alone. */
    refundRef: p.string().length(200).nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  }),
});
export type Payment = InferEntity<typeof PaymentSchema>;

/**
 * An inbound gateway notification already handled: its (gateway, provider event id) is the key,
 * so a repeat of it is recognised in the same transaction that would apply it, and changes nothing.
 */
export const PaymentNotificationSchema = defineEntity({
  name: 'PaymentNotification',
  tableName: 'payment_notification',
  properties: (p) => ({
    gateway: p.string().primary().length(20),
    eventId: p.string().primary().length(200),
    /** As the notification named it; no foreign key: a notification for an unknown order is recorded too. */
    orderId: p.string().length(32).nullable(),
    kind: p.string().length(20),
    outcome: p.string().length(40),
    receivedAt: p.datetime(),
  }),
});
export type PaymentNotification = InferEntity<typeof PaymentNotificationSchema>;
