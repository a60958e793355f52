/**
 * What a payment gateway is: something that starts the payment of a pending order and answers
 * where the buyer goes next (a redirect) or what to do (instructions). The registry
 * (gateways.ts) and each gateway's own file name this one contract.
 */
import type { TPaymentMethod } from '@svc/schemas';
import type { Config } from '../../config.js';
import type { Logger } from '../../lib/logger.js';
import type { Order } from '../orders/orders.entities.js';
import type { Store } from '../stores/stores.entities.js';

export interface PaymentStart {
  redirectUrl?: string;
  instructions?: string;
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
}
