/**
 * Settling and refunding orders: the payments module writes the payment rows, the lifecycle
 * moves the order (order-lifecycle.ts), fulfilment hands over the goods, and the buyer's receipt
 * goes into the mail outbox (receipts). Each runs in one transaction holding the order's row lock.
 * A seller's refund first gives the money back at the gateway (gateways.ts refundAtGateways, no
 * lock held), then refunds the order with the gateway's refund ids.
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

/** Payment id -> the gateway's id of the refund that gave it back. */
export type GatewayRefunds = ReadonlyMap<string, string>;

/**
 * The lifecycle's `refundPayments` effect: the order's settled payments are refunded, each with
 * the gateway's refund id when a gateway made one.
 */
async function refundPayments(em: EntityManager, orderId: string, now: Date, refunds: GatewayRefunds): Promise<void> {
  for (const [id, refundRef] of refunds)
    await em.nativeUpdate(
      PaymentSchema,
      { id, order: orderId, status: 'paid' },
      { status: 'refunded', refundRef, updatedAt: now },
    );
  await em.nativeUpdate(PaymentSchema, { order: orderId, status: 'paid' }, { status: 'refunded', updatedAt: now });
}

/**
 * Refund (seller action or gateway): keys are revoked and leave the delivery; refunding twice is a
 * no-op. `refunds` are the gateway's refund ids for the payments refundAtGateways (gateways.ts) gave back.
 */
export async function refundOrder(
  em: EntityManager,
  orderId: string,
  now: Date,
  refunds: GatewayRefunds = new Map(),
): Promise<Order> {
  return em.transactional(async (tx) => {
    const order = await lockOrder(tx, orderId);
    if (order.status === 'refunded') {
      // Refunded meanwhile (a concurrent refund, Stripe's own charge.refunded): the gateway's
      // refund id of this call is the same refund, still worth keeping where none is recorded.
      for (const [id, refundRef] of refunds)
        await tx.nativeUpdate(PaymentSchema, { id, order: orderId, refundRef: null }, { refundRef, updatedAt: now });
      return order;
    }
    await transition(tx, order, 'refund', now, {
      revokeKeys,
      refundPayments: (effectEm, id, at) => refundPayments(effectEm, id, at, refunds),
    });
    return order;
  });
}
