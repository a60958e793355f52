/** Payments of orders and the inbound gateway notifications already handled. */
import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { OrderSchema } from '../orders/orders.entities.js';
import { StoreSchema } from '../stores/stores.entities.js';

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

/**
 * A payment method the buyer saved at a checkout, for later off-session charges (a subscription's
 * renewals: docs/decisions.md, Saved payment methods). One per order that saved it. Nothing in it
 * is a secret: Stripe's customer and PaymentMethod ids (`cus_...`, `pm_...`) only name objects in
 * the seller's Stripe account, and a test card is one of the test gateway's four behaviours.
 */
export const SavedPaymentMethodSchema = defineEntity({
  name: 'SavedPaymentMethod',
  tableName: 'saved_payment_method',
  indexes: [
    { name: 'saved_payment_method_store_mode_index', properties: ['store', 'livemode'] },
    // A subscription's methods saved from the buyer's page (Update payment method), newest first.
    {
      name: 'saved_payment_method_subscription_index',
      expression:
        'create index "saved_payment_method_subscription_index" on "saved_payment_method" ("subscription_id", "created_at" desc) where "subscription_id" is not null',
    },
  ],
  properties: (p) => ({
    id: p.string().primary().length(32),
    store: p.manyToOne(StoreSchema).ref().foreignKeyName('saved_payment_method_store_id_fkey').updateRule('no action'),
    livemode: p.boolean(),
    /** The order whose checkout saved it; null for one the buyer saved for a subscription from their page. */
    order: p
      .oneToOne(OrderSchema)
      .ref()
      .nullable()
      .unique('saved_payment_method_order_id_unique')
      .foreignKeyName('saved_payment_method_order_id_fkey')
      .updateRule('no action')
      .deleteRule('no action'),
    /** The subscription it was saved for from the buyer's page (Update payment method); null for a checkout's. */
    subscriptionId: p.string().length(32).nullable(),
    gateway: p.enum(['test', 'stripe']),
    /** Stripe: the customer (`cus_...`); null for the test gateway. */
    customerRef: p.string().length(200).nullable(),
    /** Stripe: the PaymentMethod (`pm_...`); test: the card (`succeeds`, `declines_renewals`, ...). */
    methodRef: p.string().length(200),
    createdAt: p.datetime(),
  }),
});
export type SavedPaymentMethod = InferEntity<typeof SavedPaymentMethodSchema>;

/**
 * A charge the test gateway made on a saved test card (chargeSaved), one per idempotency key: a
 * retry with the same key gets this row's answer back instead of a second charge. Tests count these
 * as "the gateway's charges".
 */
export const TestGatewayChargeSchema = defineEntity({
  name: 'TestGatewayCharge',
  tableName: 'test_gateway_charge',
  indexes: [{ name: 'test_gateway_charge_method_index', properties: ['method'] }],
  properties: (p) => ({
    id: p.string().primary().length(32),
    idempotencyKey: p.string().length(200).unique('test_gateway_charge_idempotency_key_unique'),
    method: p
      .manyToOne(SavedPaymentMethodSchema)
      .ref()
      .foreignKeyName('test_gateway_charge_method_id_fkey')
      .updateRule('no action'),
    livemode: p.boolean(),
    amountMinor: p.bigint('number'),
    currency: p.string().length(3),
    status: p.enum(['succeeded', 'failed', 'requires_action']),
    declineCode: p.string().length(60).nullable(),
    createdAt: p.datetime(),
  }),
});
export type TestGatewayCharge = InferEntity<typeof TestGatewayChargeSchema>;
