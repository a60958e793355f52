/** `svc_session`: a seller's dashboard session (httpOnly, SameSite=Lax, Secure in production). */
import type { Config } from '../../config.js';
import { clearCookie, setCookie, type CookieOptions, type ResponseSink } from '../../lib/cookies.js';

export const SESSION_COOKIE = 'svc_session';
export const SESSION_TTL_MS = 30 * 24 * 3600_000;

function options(config: Config): CookieOptions {
  return { maxAgeSeconds: SESSION_TTL_MS / 1000, secure: config.isProduction, sameSite: 'Lax' };
}

export function setSessionCookie(sink: ResponseSink, config: Config, token: string): void {
  setCookie(sink, SESSION_COOKIE, token, options(config));
}

export function clearSessionCookie(sink: ResponseSink, config: Config): void {
  clearCookie(sink, SESSION_COOKIE, options(config));
}
