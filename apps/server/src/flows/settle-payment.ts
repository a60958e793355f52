/**
 * Settling a payment: a gateway's notification or a seller's mark-paid becomes a paid order. The
 * payments module records the payment, the lifecycle moves the order (orders/order-lifecycle.ts),
 * fulfilment hands over the goods, and the buyer's receipt goes into the mail outbox (receipts),
 * all in one transaction holding the order's row lock. Inbound notifications are verified on the
 * raw bytes before anything is parsed (http/payment-webhooks.ts), handled once per (gateway,
 * provider event id) in the same transaction as their effect, and settle only the stored amount
 * in the stored currency. A subscription's first payment starts it (its trial or first period) in
 * the same transaction.
 */
import { AppError } from '../lib/errors.js';
import { settlements } from '../lib/metrics.js';
import { fulfil } from '../modules/fulfilment/fulfilment.service.js';
import { PAID_STATUSES, transition } from '../modules/orders/order-lifecycle.js';
import { giveInvoiceNumber } from '../modules/orders/invoice-numbers.js';
import { lockOrder } from '../modules/orders/order-lookup.js';
import { OrderLineSchema, OrderSchema } from '../modules/orders/orders.entities.js';
import {
  claimGatewayNotification,
  recordNotificationOutcome,
  recordPayment,
  saveMethodOfOrder,
  type Settlement,
} from '../modules/payments/payments.service.js';
import type { PaymentNotification } from '../modules/payments/gateway.js';
import { testGatewaySettles } from '../modules/payments/test-gateway-rule.js';
import { recordReceipt } from '../modules/receipts/receipts.service.js';
import type { ServiceContext } from '../modules/request/context.js';
import { inTransaction } from '../modules/request/transaction.js';
import { startSubscription, subscriptionPaid } from '../modules/subscriptions/subscriptions.service.js';
import { refundOrder } from './refund-order.js';

export type { PaymentNotification } from '../modules/payments/gateway.js';
export type { Settlement } from '../modules/payments/payments.service.js';

export type SettleOutcome = 'settled' | 'already_settled' | 'not_pending' | 'amount_mismatch' | 'currency_mismatch';

/**
 * A payment of the stored amount in the stored currency settles a pending order, fulfils it and
 * records the buyer's receipt. Anything less never settles; the order keeps a flag the seller
 * sees. Settling twice is a no-op. Transaction: one, holding the order's row lock; joined when the
 * context holds one (a notification's, handleNotification).
 */
export async function settleOrder(
  ctx: ServiceContext,
  input: { orderId: string; payment: Settlement; now: Date },
): Promise<SettleOutcome> {
  const { orderId, payment, now } = input;
  const outcome = await inTransaction(ctx, async (tx): Promise<SettleOutcome> => {
    const order = await lockOrder(tx, orderId);
    if (order.status !== 'pending') {
      return order.paidAt && PAID_STATUSES.includes(order.status) ? 'already_settled' : 'not_pending';
    }
    const mismatch: SettleOutcome | undefined =
      payment.currency !== order.currency
        ? 'currency_mismatch'
        : payment.amountMinor < order.priceMinor
          ? 'amount_mismatch'
          : undefined;
    if (mismatch) {
      if (order.paymentFlag !== mismatch) {
        order.paymentFlag = mismatch;
        order.updatedAt = now;
      }
      return mismatch;
    }
    order.paidMinor = payment.amountMinor;
    order.paymentFlag = null;
    if (!order.paymentMethod) order.paymentMethod = payment.gateway;
    await recordPayment(tx, { order, payment, now });
    // Before the transition, so that order.paid carries the number.
    await giveInvoiceNumber(tx, order, now);
    await transition(tx, order, 'pay', now);
    if (order.subscriptionId && order.billingReason === 'subscription_create') {
      const line = await tx.em.findOne(OrderLineSchema, { order: order.id }, { orderBy: { position: 'asc' } });
      await startSubscription(tx, {
        subscriptionId: order.subscriptionId,
        orderNumber: order.number,
        customerEmail: order.customerEmail,
        paymentMethod: order.paymentMethod,
        trialDays: line?.planTrialDays ?? 0,
        now,
      });
    }
    // A renewal paid (by the engine's charge, the buyer's link or the seller): the subscription's next period.
    if (order.billingReason === 'subscription_cycle') await subscriptionPaid(tx, order);
    await fulfil(tx, { order, now });
    await recordReceipt(tx, { order, payment: { paidAt: now, gateway: payment.gateway } });
    return 'settled';
  });
  settlements.inc({ outcome });
  return outcome;
}

export type NotificationOutcome =
  SettleOutcome | 'duplicate' | 'unknown_order' | 'refunded' | 'not_refundable' | 'recorded';

/**
 * A gateway's notification, verified by the caller: claimed once, then settling (with the payment
 * method its checkout saved, if it did), refunding or only recorded. Transaction: one, in which the claim, its effect (settleOrder or refundOrder join it)
 * and its outcome commit together.
 */
export async function handleNotification(
  ctx: ServiceContext,
  input: { gateway: string; notification: PaymentNotification; now: Date },
): Promise<NotificationOutcome> {
  const { gateway, notification, now } = input;
  const config = ctx.deps.config;
  if (gateway === 'test' && config.isProduction) {
    // In production the test gateway never settles (or refunds) a live order (docs/architecture.md, Test mode):
    // refused before anything is recorded, so the pay page and a signed notification change
    // nothing. Outside production a test notification got here through TEST_GATEWAY_SECRET (the
    // verifier, or the pay page served only with it), which settles any order.
    const order = await ctx.em.findOne(OrderSchema, { id: notification.orderId }, { fields: ['livemode'] });
    if (order && !testGatewaySettles(config, order.livemode))
      throw new AppError('validation_failed', 'The test gateway settles test orders only.');
  }
  return inTransaction(ctx, async (tx) => {
    if (
      !(await claimGatewayNotification(tx, {
        gateway,
        eventId: notification.eventId,
        orderId: notification.orderId,
        kind: notification.kind,
        receivedAt: now,
      }))
    ) {
      return 'duplicate';
    }
    let outcome: NotificationOutcome;
    if (!(await tx.em.count(OrderSchema, { id: notification.orderId }))) {
      outcome = 'unknown_order';
    } else if (notification.kind === 'paid') {
      const { savedMethod, ...payment } = notification;
      outcome = await settleOrder(tx, { orderId: notification.orderId, payment: { gateway, ...payment }, now });
      // The payment method this checkout saved (for a subscription's renewals), with the payment.
      if (outcome === 'settled' && savedMethod) {
        const order = await tx.em.findOneOrFail(OrderSchema, { id: notification.orderId });
        await saveMethodOfOrder(tx, { order, method: savedMethod, now });
      }
    } else if (notification.kind === 'refunded') {
      // A refund of an order we never settled is recorded, not retried forever by the gateway.
      const status = (await tx.em.findOneOrFail(OrderSchema, { id: notification.orderId })).status;
      if (PAID_STATUSES.includes(status) || status === 'refunded') {
        await refundOrder(tx, { orderId: notification.orderId, now });
        outcome = 'refunded';
      } else {
        outcome = 'not_refundable';
      }
    } else {
      outcome = 'recorded';
    }
    await recordNotificationOutcome(tx, { gateway, eventId: notification.eventId, outcome });
    return outcome;
  });
}
