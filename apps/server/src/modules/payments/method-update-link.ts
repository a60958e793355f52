/**
 * The link to the test gateway's card page where a buyer saves a new card for one of their
 * subscriptions (the customer area's `Update payment method`). It is a credential for that one
 * subscription only and runs out after an hour: an HMAC under a key derived from the server's, of
 * the subscription and the expiry, so nothing is stored; using it twice only saves the card again.
 */
import type { Config } from '../../config.js';
import { deriveKey, hmacHex, safeEqual } from '../../lib/crypto.js';

const LINK_TTL_MS = 60 * 60_000;

const signature = (config: Config, subscriptionId: string, expiresMs: number) =>
  hmacHex(deriveKey(config.encryptionKey, 'method-update'), `${subscriptionId}.${expiresMs}`);

/** A token for the card page of `subscriptionId`, valid for an hour from `now`. */
export function methodUpdateToken(config: Config, subscriptionId: string, now: Date): string {
  const expiresMs = now.getTime() + LINK_TTL_MS;
  return `${expiresMs}.${signature(config, subscriptionId, expiresMs)}`;
}

/** Whether `token` opens the card page of `subscriptionId` at `now`. */
export function methodUpdateTokenValid(config: Config, subscriptionId: string, token: string, now: Date): boolean {
  const match = /^(\d{13})\.([0-9a-f]{64})$/.exec(token);
  if (!match) return false;
  const expiresMs = Number(match[1]);
  if (expiresMs <= now.getTime()) return false;
  return safeEqual(match[2]!, signature(config, subscriptionId, expiresMs));
}
