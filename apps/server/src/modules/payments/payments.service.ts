/**
 * The payments module's rows: a settled payment recorded, payments refunded with the gateways'
 * refund ids, and inbound notifications handled once per (gateway, provider event id). The flows
 * that settle and refund orders (flows/settle-payment.ts, flows/refund-order.ts) write through here.
 */
import { newId } from '../../lib/ids.js';
import type { Order } from '../orders/orders.entities.js';
import type { ServiceContext } from '../request/context.js';
import type { GatewayRefunds } from './gateways.js';
import { PaymentNotificationSchema, PaymentSchema } from './payments.entities.js';
import { claimNotification } from './payments.repo.js';

export interface Settlement {
  gateway: string;
  providerRef: string | null;
  amountMinor: number;
  currency: string;
}

/** The settled payment of `order`, in the settling transaction. */
export function recordPayment(ctx: ServiceContext, input: { order: Order; payment: Settlement; now: Date }): void {
  const { order, payment, now } = input;
  ctx.em.create(PaymentSchema, {
    id: newId(),
    order,
    gateway: payment.gateway,
    providerRef: payment.providerRef,
    amountMinor: payment.amountMinor,
    currency: payment.currency,
    status: 'paid',
    createdAt: now,
    updatedAt: now,
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
  notification: { gateway: string; eventId: string; orderId: string; kind: string; receivedAt: Date },
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
