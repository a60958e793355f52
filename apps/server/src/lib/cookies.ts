/**
 * Cookies as data: what a service or a guard wants set or cleared is written to the request's
 * ResponseSink; http/response-sink.ts hands it to @fastify/cookie when the answer is sent. Each
 * cookie's name, format and options live in one module of its own (identity/session-cookie,
 * customers/customer-cookie, orders/checkout-cookie); reading them is done once, when the
 * request context is resolved (trpc/context.ts).
 */
export interface CookieOptions {
  maxAgeSeconds: number;
  secure: boolean;
  sameSite: 'Lax' | 'Strict' | 'None';
  path?: string;
}

export interface CookieChange {
  name: string;
  /** '' with maxAgeSeconds 0 clears the cookie. */
  value: string;
  options: CookieOptions;
}

/** Headers and cookies a request's answer should carry, whatever its status. Plain data. */
export interface ResponseSink {
  headers: Record<string, string>;
  cookies: CookieChange[];
}

export function newResponseSink(): ResponseSink {
  return { headers: {}, cookies: [] };
}

/** Sets a cookie (httpOnly always); a later change of the same cookie replaces an earlier one. */
export function setCookie(sink: ResponseSink, name: string, value: string, options: CookieOptions): void {
  sink.cookies = [...sink.cookies.filter((cookie) => cookie.name !== name), { name, value, options }];
}

export function clearCookie(sink: ResponseSink, name: string, options: Omit<CookieOptions, 'maxAgeSeconds'>): void {
  setCookie(sink, name, '', { ...options, maxAgeSeconds: 0 });
}
