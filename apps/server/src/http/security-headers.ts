/**
 * Security headers on every answer, by helmet (the library @fastify/helmet wraps): nosniff,
 * `Referrer-Policy: no-referrer`, HSTS, COOP, CORP and the rest of its defaults, and
 * `default-src 'none'; frame-ancestors 'none'` for any answer without a policy of its own (the
 * pages and /docs set theirs, which replace it). X-Frame-Options is off: every page states
 * `frame-ancestors`, and the embed pages must be framable by any site.
 *
 * helmet's headers do not depend on the request, so its middleware runs once, here, into a list,
 * and every answer gets that list: @fastify/helmet built the middleware again for every request
 * (parsing the policy each time, 1 % of a checkout's CPU), and even built once, its eleven
 * middlewares called in a chain cost a License API validation 4 % of its CPU.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import helmet from 'helmet';

/** The headers helmet sets on an answer, in its order. */
export function securityHeaders(): Array<[string, string]> {
  const apply = helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: { 'default-src': ["'none'"], 'frame-ancestors': ["'none'"] },
    },
    referrerPolicy: { policy: 'no-referrer' },
    xFrameOptions: false,
  });
  const headers: Array<[string, string]> = [];
  const recorder = {
    setHeader: (name: string, value: string | number) => headers.push([name, String(value)]),
    // helmet removes X-Powered-By, which Fastify never sets.
    removeHeader: () => undefined,
  };
  let failure: unknown;
  apply({ headers: {} } as never, recorder as unknown as ServerResponse, (error?: unknown) => (failure = error));
  if (failure) throw failure instanceof Error ? failure : new Error('helmet refused its options', { cause: failure });
  return headers;
}

/**
 * Set on the reply, not on the raw response: Node then writes every header of the answer from
 * the one object Fastify hands to writeHead, each checked once as it is written. A header set
 * with `res.setHeader` sends Node down its merging path instead, where every header Fastify
 * holds is set again one by one (a lowercased key and an entry each) before the same checks.
 * A route that states its own policy (a page's Content-Security-Policy) replaces the default by
 * setting it on the reply after this hook.
 */
export function installSecurityHeaders(app: FastifyInstance): void {
  const headers = securityHeaders();
  app.addHook('onRequest', (_request, reply, done) => {
    for (const [name, value] of headers) reply.header(name, value);
    done();
  });
}
