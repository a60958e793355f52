/**
 * Settling and refunding orders: the payments module writes the payment rows, the lifecycle
 * moves the order (order-lifecycle.ts), fulfilment hands over the goods, and the buyer's receipt
 * goes into the mail outbox (receipts). Each runs in one transaction holding the order's row lock.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../../lib/ids.js';
import { settlements } from '../../lib/metrics.js';
import { fulfil, revokeKeys } from '../fulfilment/fulfilment.service.js';
import { PAID_STATUSES, transition } from '../orders/order-lifecycle.js';
import type { Order } from '../orders/orders.entities.js';
import { lockOrder } from '../orders/orders.service.js';
import { recordReceipt, type ReceiptDeps } from '../receipts/receipts.service.js';
import { PaymentSchema } from './payments.entities.js';

export interface Settlement {
  gateway: string;
  providerRef: string | null;
  amountMinor: number;
  currency: string;
}

export type SettleOutcome = 'settled' | 'already_settled' | 'not_pending' | 'amount_mismatch' | 'currency_mismatch';

/**
 * A payment of the stored amount in the stored currency settles a pending order, fulfils it and
 * records the buyer's receipt in the same transaction. Anything less never settles; the order
 * keeps a flag the seller sees. Settling twice is a no-op.
 */
export async function settleOrder(
  em: EntityManager,
  deps: ReceiptDeps,
  orderId: string,
  payment: Settlement,
  now: Date,
): Promise<SettleOutcome> {
  const outcome = await em.transactional(async (tx): Promise<SettleOutcome> => {
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
    tx.create(PaymentSchema, {
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
    await transition(tx, order, 'pay', now);
    await fulfil(tx, order, now);
    await recordReceipt(tx, deps, order, { paidAt: now, gateway: payment.gateway });
    return 'settled';
  });
  settlements.inc({ outcome });
  return outcome;
}

/** The lifecycle's `refundPayments` effect: the order's settled payments are refunded. */
async function refundPayments(em: EntityManager, orderId: string, now: Date): Promise<void> {
  await em.nativeUpdate(PaymentSchema, { order: orderId, status: 'paid' }, { status: 'refunded', updatedAt: now });
}

/** Refund (seller action or gateway): keys are revoked and leave the delivery; refunding twice is a no-op. */
export async function refundOrder(em: EntityManager, orderId: string, now: Date): Promise<Order> {
  return em.transactional(async (tx) => {
    const order = await lockOrder(tx, orderId);
    if (order.status === 'refunded') return order;
    await transition(tx, order, 'refund', now, { revokeKeys, refundPayments });
    return order;
  });
}
