/**
 * What a payment gateway is: something that starts the payment of a pending order and answers
 * where the buyer goes next (a redirect) or what to do (instructions), and, for a gateway the money
 * went through (Stripe), gives a settled payment back when the seller refunds. A gateway that can
 * keep the buyer's payment method (test, Stripe) saves it at checkout when asked and charges it
 * later without the buyer (chargeSaved: a subscription's renewals), and sends the buyer to its own
 * page to save a new one for those renewals (startMethodUpdate). The registry (gateways.ts) and
 * each gateway's own file name this one contract.
 */
import type { TPaymentMethod } from '@svc/schemas';
import type { Config } from '../../config.js';
import type { ServiceContext } from '../request/context.js';
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

export interface StartOptions {
  /**
   * Keep the buyer's payment method for later off-session charges (a subscription's first order):
   * Stripe's session sets it up for future use (a zero total, a trial, is a `setup` session); the
   * test gateway saves the chosen test card whatever this says (docs/decisions.md, Saved payment methods).
   */
  saveMethod?: boolean;
}

/** The payment method a settled checkout saved, as its notification carries it (payments.service saveMethodOfOrder). */
export interface SavedMethodRefs {
  gateway: 'test' | 'stripe';
  customerRef: string | null;
  methodRef: string;
}

/** The four test cards of the test gateway's pay page, by the `card` value the page's form posts. */
export const TEST_CARDS = ['succeeds', 'declines', 'declines_renewals', 'requires_authentication'] as const;
export type TestCard = (typeof TEST_CARDS)[number];

/**
 * A payment method a buyer saved, as a charge on it and the buyer's page read it (payments.repo.ts):
 * the gateway's references, and what saved it (a checkout's order, or the buyer's page for a
 * subscription).
 */
export interface SavedMethod {
  id: string;
  storeId: string;
  livemode: boolean;
  gateway: string;
  customerRef: string | null;
  methodRef: string;
  orderId: string | null;
  subscriptionId: string | null;
  createdAt: Date;
}

/**
 * What charging a saved method came to. `failed`: the provider declined (its decline code, Stripe's
 * `decline_code` or `code`); `requires_action`: the buyer must authenticate the payment themselves
 * (providerRef names the provider's payment to confirm, Stripe's `pi_...`).
 */
export type ChargeResult =
  | { status: 'succeeded'; providerRef: string }
  | { status: 'failed'; declineCode: string; providerRef: string | null }
  | { status: 'requires_action'; providerRef: string | null };

/**
 * The buyer's `Update payment method` of a subscription (the customer area): what the gateway's
 * own page needs to save a new method for the renewals.
 */
export interface MethodUpdateRequest {
  subscriptionId: string;
  livemode: boolean;
  currency: string;
  /** The method the renewals charge today, or null: Stripe sets the new one up on its customer. */
  current: SavedMethod | null;
  /** Where the buyer lands once the new method is saved, and where if they give up. */
  doneUrl: string;
  cancelUrl: string;
}

export interface Gateway {
  method: TPaymentMethod;
  /** A gateway that calls a provider (Stripe) answers a promise; the local ones answer at once. */
  start(order: Order, store: Store, ctx: GatewayContext, options?: StartOptions): PaymentStart | Promise<PaymentStart>;
  /**
   * Charges a payment method saved at checkout, without the buyer (off-session). Idempotent by
   * `idempotencyKey`: a retry with the same key answers the first attempt's result and charges
   * nothing more. A network failure, a timeout or the provider's own error throws AppError
   * `gateway_error` (retryable with the same key). Call it outside any transaction holding row
   * locks (it may wait on the provider). Absent for `manual`: its renewals are invoices the seller
   * marks paid.
   */
  chargeSaved?(
    method: SavedMethod,
    amountMinor: number,
    currency: string,
    idempotencyKey: string,
    ctx: ServiceContext,
  ): Promise<ChargeResult>;
  /**
   * Gives a settled payment of `order` back in full at the provider, before the order is marked
   * refunded (gateways.ts refundAtGateways). Idempotent per order: a retry gets the provider's
   * same refund. A refusal, a network failure or a timeout throws AppError `gateway_error`.
   * Absent where no provider holds the money (manual, test): the refund is ours alone.
   */
  refund?(payment: Payment, order: Order, ctx: GatewayContext): Promise<GatewayRefund>;
  /**
   * Where the buyer saves a new payment method for a subscription's renewals: the gateway's own
   * page (the test gateway's card page, a Stripe Checkout Session in `setup` mode). The method is
   * saved when the page says so (the test card's form; Stripe's MethodSavedNotification). An
   * impossible update (no saved Stripe customer) throws `invalid_transition`; the provider not
   * answering `service_unavailable`. Absent for `manual`: its renewals are invoices.
   */
  startMethodUpdate?(request: MethodUpdateRequest, ctx: ServiceContext): Promise<PaymentStart>;
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
  /** A `paid` checkout that saved the buyer's payment method: recorded with the settlement. */
  savedMethod?: SavedMethodRefs;
}

/**
 * A payment method the buyer saved for a subscription on the gateway's page (startMethodUpdate),
 * as its notification carries it: the renewals charge it from now on (flows/customer-subscriptions.ts).
 */
export interface MethodSavedNotification {
  /** The provider's id of this notification; a repeat of it changes nothing. */
  eventId: string;
  kind: 'method_saved';
  subscriptionId: string;
  savedMethod: SavedMethodRefs;
}

/** Whatever a gateway's verified notification says: a payment's news, or a subscription's new method. */
export type GatewayNotification = PaymentNotification | MethodSavedNotification;
