/**
 * Inbound gateway notifications: verified on the raw bytes before anything is parsed,
 * handled once per (gateway, provider event id) in the same transaction as their effect,
 * and settling only the stored amount in the stored currency.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../lib/errors.js';
import { PAID_STATUSES } from '../orders/order-lifecycle.js';
import { OrderSchema } from '../orders/orders.entities.js';
import type { ReceiptDeps } from '../receipts/receipts.service.js';
import { PaymentNotificationSchema } from './payments.entities.js';
import { claimNotification } from './payments.repo.js';
import { refundOrder, settleOrder, type SettleOutcome } from './settlement.js';
import { testGatewaySettles } from './test-gateway-rule.js';

export interface PaymentNotification {
  /** The provider's id of this notification; a repeat of it changes nothing. */
  eventId: string;
  kind: 'paid' | 'refunded' | 'failed';
  orderId: string;
  amountMinor: number;
  currency: string;
  providerRef: string | null;
}

export type NotificationOutcome =
  SettleOutcome | 'duplicate' | 'unknown_order' | 'refunded' | 'not_refundable' | 'recorded';

export async function handleNotification(
  em: EntityManager,
  deps: ReceiptDeps,
  gateway: string,
  notification: PaymentNotification,
  now: Date,
): Promise<NotificationOutcome> {
  if (gateway === 'test' && deps.config.isProduction) {
    // In production the test gateway never settles (or refunds) a live order (docs/architecture.md, Test mode):
    // refused before anything is recorded, so the pay page and a signed notification change
    // nothing. Outside production a test notification got here through TEST_GATEWAY_SECRET (the
    // verifier, or the pay page served only with it), which settles any order.
    const order = await em.findOne(OrderSchema, { id: notification.orderId }, { fields: ['livemode'] });
    if (order && !testGatewaySettles(deps.config, order.livemode))
      throw new AppError('validation_failed', 'The test gateway settles test orders only.');
  }
  return em.transactional(async (tx) => {
    if (
      !(await claimNotification(tx, {
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
    if (!(await tx.count(OrderSchema, { id: notification.orderId }))) {
      outcome = 'unknown_order';
    } else if (notification.kind === 'paid') {
      outcome = await settleOrder(tx, deps, notification.orderId, { gateway, ...notification }, now);
    } else if (notification.kind === 'refunded') {
      // A refund of an order we never settled is recorded, not retried forever by the gateway.
      const status = (await tx.findOneOrFail(OrderSchema, { id: notification.orderId })).status;
      if (PAID_STATUSES.includes(status) || status === 'refunded') {
        await refundOrder(tx, notification.orderId, now);
        outcome = 'refunded';
      } else {
        outcome = 'not_refundable';
      }
    } else {
      outcome = 'recorded';
    }
    await tx.nativeUpdate(PaymentNotificationSchema, { gateway, eventId: notification.eventId }, { outcome });
    return outcome;
  });
}
