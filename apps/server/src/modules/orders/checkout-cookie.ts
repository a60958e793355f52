/**
 * `svc_checkout`: set by POST /api/checkout/enter so the buyer can come back for the goods
 * without the link. Its one format, `<orderId>.<token>`, is read and written here only.
 */
import type { Config } from '../../config.js';
import { setCookie, type ResponseSink } from '../../lib/cookies.js';
import type { CheckoutCookie } from '../request/context.js';

export const CHECKOUT_COOKIE = 'svc_checkout';
const LIFETIME_SECONDS = 30 * 24 * 3600;

export function parseCheckoutCookie(value: string | undefined): CheckoutCookie | undefined {
  if (!value) return undefined;
  const dot = value.indexOf('.');
  if (dot <= 0 || dot === value.length - 1) return undefined;
  return { orderId: value.slice(0, dot), token: value.slice(dot + 1) };
}

export function setCheckoutCookie(sink: ResponseSink, config: Config, cookie: CheckoutCookie): void {
  setCookie(sink, CHECKOUT_COOKIE, `${cookie.orderId}.${cookie.token}`, {
    maxAgeSeconds: LIFETIME_SECONDS,
    secure: config.isProduction,
    sameSite: 'Lax',
  });
}

/** The cookie's token when it names this order. */
export function checkoutTokenFor(cookie: CheckoutCookie | undefined, orderId: string): string | undefined {
  return cookie && cookie.orderId === orderId ? cookie.token : undefined;
}
