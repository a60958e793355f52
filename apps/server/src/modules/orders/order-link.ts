/**
 * The buyer's own link to an order (`orderUrl`): the order page with a token that opens it, for a
 * receipt — ours or one the merchant sends. The checkout token is stored only as a hash, so it
 * cannot be given again; this token is derived instead (an HMAC of the order id under the app key's
 * `order-link` subkey): the same for the order's whole life, nothing stored, and the delivery and
 * keys routes take it where they take the checkout token.
 */
import type { Config } from '../../config.js';
import { deriveKey, hmacHex, safeEqual } from '../../lib/crypto.js';

function orderLinkToken(config: Config, orderId: string): string {
  return hmacHex(deriveKey(config.encryptionKey, 'order-link'), orderId);
}

export function orderUrl(config: Config, orderId: string): string {
  return `${config.publicUrl}/orders/${encodeURIComponent(orderId)}?token=${orderLinkToken(config, orderId)}`;
}

/** Whether `token` is the order's link token (constant time). */
export function opensOrderLink(config: Config, orderId: string, token: string): boolean {
  return safeEqual(token, orderLinkToken(config, orderId));
}

/** The buyer's link to the order's invoice PDF (http/invoices.ts), opened by the same token: for the receipt. */
export function invoiceUrl(config: Config, orderId: string): string {
  return `${config.publicUrl}/api/orders/${encodeURIComponent(orderId)}/invoice?token=${orderLinkToken(config, orderId)}`;
}
