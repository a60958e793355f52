/**
 * Hands each request's ResponseSink (the headers and cookies its context collected: rate-limit
 * headers, WWW-Authenticate, Idempotent-Replayed, session cookies) to the reply, whatever the
 * answer's status. Registered before @fastify/cookie, whose own onSend hook then writes the
 * cookies set here.
 */
import type { FastifyInstance } from 'fastify';

const SAME_SITE = { Lax: 'lax', Strict: 'strict', None: 'none' } as const;

export function installResponseSink(app: FastifyInstance): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    const sink = request.svcResponse;
    if (sink) {
      for (const name in sink.headers) reply.header(name, sink.headers[name]);
      for (const cookie of sink.cookies) {
        reply.setCookie(cookie.name, cookie.value, {
          path: cookie.options.path ?? '/',
          maxAge: cookie.options.maxAgeSeconds,
          httpOnly: true,
          sameSite: SAME_SITE[cookie.options.sameSite],
          secure: cookie.options.secure,
        });
      }
    }
    done(null, payload);
  });
}
