/**
 * What a payment gateway is: something that starts the payment of a pending order and answers
 * where the buyer goes next (a redirect) or what to do (instructions), and, for a gateway the money
 * went through (Stripe), gives a settled payment back when the seller refunds. The registry
 * (gateways.ts) and each gateway's own file name this one contract.
 */
import type { TPaymentMethod } from '@svc/schemas';
import type { Config } from '../../config.js';
import type { Logger } from '../../lib/logger.js';
import type { Order } from '../orders/orders.entities.js';
import type { Store } from '../stores/stores.entities.js';
import type { Payment } from './payments.entities.js';

export interface PaymentStart {
  redirectUrl?: string;
  instructions?: string;
}

/** A refund the gateway made (or already had made: the same idempotency key answers the same refund). */
export interface GatewayRefund {
  /** The provider's id of the refund (Stripe's `re_...`); not a secret. */
  refundRef: string;
}

export interface GatewayContext {
  config: Config;
  log: Logger;
  now: Date;
}

export interface Gateway {
  method: TPaymentMethod;
  /** A gateway that calls a provider (Stripe) answers a promise; the local ones answer at once. */
  start(order: Order, store: Store, ctx: GatewayContext): PaymentStart | Promise<PaymentStart>;
  /**
   * Gives a settled payment of `order` back in full at the provider, before the order is marked
   * refunded (gateways.ts refundAtGateways). Idempotent per order: a retry gets the provider's
   * same refund. A refusal, a network failure or a timeout throws AppError `gateway_error`.
   * Absent where no provider holds the money (manual, test): the refund is ours alone.
   */
  refund?(payment: Payment, order: Order, ctx: GatewayContext): Promise<GatewayRefund>;
}

/** An inbound notification as a gateway's verifier reads it (flows/settle-payment.ts handles it). */
export interface PaymentNotification {
  /** The provider's id of this notification; a repeat of it changes nothing. */
  eventId: string;
  kind: 'paid' | 'refunded' | 'failed';
  orderId: string;
  amountMinor: number;
  currency: string;
  providerRef: string | null;
}
