/**
 * The payments module's rows: a settled payment recorded, payments refunded with the gateways'
 * refund ids, inbound notifications handled once per (gateway, provider event id), and the payment
 * methods buyers saved at checkout. The flows that settle and refund orders
 * (flows/settle-payment.ts, flows/refund-order.ts) write through here.
 */
import { newId } from '../../lib/ids.js';
import type { Order } from '../orders/orders.entities.js';
import type { ServiceContext } from '../request/context.js';
import type { SavedMethod, SavedMethodRefs } from './gateway.js';
import type { GatewayRefunds } from './gateways.js';
import { PaymentNotificationSchema, PaymentSchema, SavedPaymentMethodSchema } from './payments.entities.js';
import {
  claimNotification,
  insertPayment,
  selectSavedMethodOfOrder,
  selectSavedMethodOfSubscription,
} from './payments.repo.js';

export interface Settlement {
  gateway: string;
  providerRef: string | null;
  amountMinor: number;
  currency: string;
}

/** The settled payment of `order`, in the settling transaction. */
export async function recordPayment(
  ctx: ServiceContext,
  input: { order: Order; payment: Settlement; now: Date },
): Promise<void> {
  const { order, payment, now } = input;
  await insertPayment(ctx.em, {
    id: newId(),
    orderId: order.id,
    gateway: payment.gateway,
    providerRef: payment.providerRef,
    amountMinor: payment.amountMinor,
    currency: payment.currency,
    now,
  });
}

/**
 * The lifecycle's `refundPayments` effect: the order's settled payments are refunded, each with
 * the gateway's refund id when a gateway made one. `onlyUnrecorded`: the order was refunded
 * meanwhile; only a refund id not yet recorded is kept.
 */
export async function refundPayments(
  ctx: ServiceContext,
  input: { orderId: string; now: Date; refunds: GatewayRefunds; onlyUnrecorded?: boolean },
): Promise<void> {
  const { orderId, now, refunds } = input;
  if (input.onlyUnrecorded) {
    for (const [id, refundRef] of refunds)
      await ctx.em.nativeUpdate(PaymentSchema, { id, order: orderId, refundRef: null }, { refundRef, updatedAt: now });
    return;
  }
  for (const [id, refundRef] of refunds)
    await ctx.em.nativeUpdate(
      PaymentSchema,
      { id, order: orderId, status: 'paid' },
      { status: 'refunded', refundRef, updatedAt: now },
    );
  await ctx.em.nativeUpdate(PaymentSchema, { order: orderId, status: 'paid' }, { status: 'refunded', updatedAt: now });
}

/** Claims an inbound notification in the context's transaction; false for one seen before. */
export function claimGatewayNotification(
  ctx: ServiceContext,
  notification: { gateway: string; eventId: string; orderId: string | null; kind: string; receivedAt: Date },
): Promise<boolean> {
  return claimNotification(ctx.em, notification);
}

/** What handling the notification came to, beside its claim. */
export async function recordNotificationOutcome(
  ctx: ServiceContext,
  input: { gateway: string; eventId: string; outcome: string },
): Promise<void> {
  await ctx.em.nativeUpdate(
    PaymentNotificationSchema,
    { gateway: input.gateway, eventId: input.eventId },
    { outcome: input.outcome },
  );
}

/**
 * The payment method `order`'s checkout saved, recorded in the settling transaction. One per
 * order: the first one stays (a repeated notification changes nothing).
 */
export async function saveMethodOfOrder(
  ctx: ServiceContext,
  input: { order: Order; method: SavedMethodRefs; now: Date },
): Promise<void> {
  const { order, method, now } = input;
  if (await ctx.em.count(SavedPaymentMethodSchema, { order: order.id })) return;
  ctx.em.create(SavedPaymentMethodSchema, {
    id: newId(),
    store: order.store,
    livemode: order.livemode,
    order,
    subscriptionId: null,
    gateway: method.gateway,
    customerRef: method.customerRef,
    methodRef: method.methodRef,
    createdAt: now,
  });
}

/**
 * The payment method a subscription's renewals charge: the newest one saved for it, by any of its
 * orders (the first checkout's, or a later one where the buyer paid by the e-mailed link with
 * another card) or from the buyer's page (Update payment method), or null.
 */
export async function savedMethodOfSubscription(
  ctx: ServiceContext,
  subscriptionId: string,
): Promise<SavedMethod | null> {
  return (await selectSavedMethodOfSubscription(ctx.em, subscriptionId)) ?? null;
}

/** A method the buyer saved for their subscription from their page; the renewals charge it from now on. */
export async function saveMethodOfSubscription(
  ctx: ServiceContext,
  input: { storeId: string; livemode: boolean; subscriptionId: string; method: SavedMethodRefs; now: Date },
): Promise<void> {
  await ctx.em.insert(SavedPaymentMethodSchema, {
    id: newId(),
    store: input.storeId,
    livemode: input.livemode,
    order: null,
    subscriptionId: input.subscriptionId,
    gateway: input.method.gateway,
    customerRef: input.method.customerRef,
    methodRef: input.method.methodRef,
    createdAt: input.now,
  });
}

/** The payment method the order's checkout saved, or null (for a subscription's renewals: Gateway.chargeSaved). */
export async function savedMethodOfOrder(ctx: ServiceContext, orderId: string): Promise<SavedMethod | null> {
  return (await selectSavedMethodOfOrder(ctx.em, orderId)) ?? null;
}
