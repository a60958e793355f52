/**
 * `svc_customer`: a buyer's session in one store's customer area, separate from any seller
 * session. Themes call from their own origin, so in production it must be sendable cross-site.
 */
import type { Config } from '../../config.js';
import { clearCookie, setCookie, type CookieOptions, type ResponseSink } from '../../lib/cookies.js';

export const CUSTOMER_COOKIE = 'svc_customer';
export const CUSTOMER_SESSION_TTL_MS = 30 * 24 * 3600_000;

function options(config: Config): CookieOptions {
  return config.isProduction
    ? { maxAgeSeconds: CUSTOMER_SESSION_TTL_MS / 1000, secure: true, sameSite: 'None' }
    : { maxAgeSeconds: CUSTOMER_SESSION_TTL_MS / 1000, secure: false, sameSite: 'Lax' };
}

export function setCustomerCookie(sink: ResponseSink, config: Config, token: string): void {
  setCookie(sink, CUSTOMER_COOKIE, token, options(config));
}

export function clearCustomerCookie(sink: ResponseSink, config: Config): void {
  clearCookie(sink, CUSTOMER_COOKIE, options(config));
}
