/**
 * The buyer's link to pay an unpaid renewal (`subscription_cycle`) order: its checkout, opened by a
 * token derived from the order (an HMAC of the order id under the app key's `renewal-pay` subkey)
 * rather than by the checkout token, which is stored only as a hash and so could be given again
 * only by replacing it. The payment_failed mail and the customer area's `Pay now` give the same
 * link, so neither can revoke the other; nothing is stored, and it opens that one order's checkout
 * only (a renewal order's; no other order ever accepts it).
 */
import type { Config } from '../../config.js';
import { deriveKey, hmacHex, safeEqual } from '../../lib/crypto.js';
import type { Order } from './orders.entities.js';

/** The token of the pay link of the renewal order `orderId`. */
export function renewalPayToken(config: Config, orderId: string): string {
  return hmacHex(deriveKey(config.encryptionKey, 'renewal-pay'), orderId);
}

/** Whether `token` is the pay link's token of `order`, a renewal order (constant time). */
export function opensRenewalPayLink(
  config: Config,
  order: Pick<Order, 'id' | 'billingReason'>,
  token: string,
): boolean {
  return order.billingReason === 'subscription_cycle' && safeEqual(token, renewalPayToken(config, order.id));
}
