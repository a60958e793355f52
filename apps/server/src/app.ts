/**
 * buildApp(deps) assembles the HTTP application and never listens: `svc serve` listens,
 * tests call `listen({ port: 0 })` or `inject`.
 */
import { randomUUID } from 'node:crypto';
import type { AnyRouter } from '@trpc/server';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { AppDeps } from './deps.js';
import { installCustomerCors } from './http/customer-cors.js';
import { docsPlugin } from './http/docs.js';
import { downloadsPlugin } from './http/downloads.js';
import { installEmbedCors } from './http/embed-cors.js';
import { installTrpcCors } from './http/trpc-cors.js';
import { mailboxPlugin } from './http/mailbox.js';
import { clientErrorHandler, installErrorReplies } from './http/error-reply.js';
import { homePlugin } from './http/home.js';
import { opsPlugin } from './http/ops.js';
import { installRequestMetrics } from './http/request-metrics.js';
import { pagesPlugin } from './http/pages.js';
import { paymentWebhooksPlugin } from './http/payment-webhooks.js';
import { restPlugin } from './http/rest.js';
import { testPayPlugin } from './http/test-pay.js';
import { trpcPlugin } from './http/trpc.js';
import { uploadsPlugin } from './http/uploads.js';
import { buildOpenApiDocument } from './openapi/document.js';
import { appRouter } from './trpc/app-router.js';
import { pinInputCoercion } from './trpc/strict-input.js';

export interface BuildAppOptions {
  /** Another router (tests mount procedures that exist only to exercise the pipeline). */
  router?: AnyRouter;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The path and query the client sent (adapters rewrite `url`). */
    clientUrl: string;
    /** `clientUrl` without the query. */
    publicPath: string;
  }
}

const REQUEST_ID = /^[A-Za-z0-9._-]{8,64}$/;

export async function buildApp(deps: AppDeps, options: BuildAppOptions = {}): Promise<FastifyInstance> {
  const router = options.router ?? appRouter;
  pinInputCoercion(router);

  const app = Fastify({
    loggerInstance: deps.log,
    trustProxy: deps.config.isTrustedProxy,
    bodyLimit: deps.config.bodyLimitBytes,
    // Accept a caller's request id when it looks like one, so a trace crosses services.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    // One log line per request (written on response, below) instead of fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    // /trpc batches name every procedure of the batch in one path segment.
    routerOptions: { maxParamLength: 2048 },
    // Requests Node's parser refuses (headers over 16 KB, not HTTP) answered in our error body.
    clientErrorHandler,
  });

  // The path as the client sent it: the REST adapter later rewrites request.url (and the raw
  // request's, which fastify's originalUrl reads) to the part below /api; logs, metrics and CSRF
  // exemptions need the full path.
  app.decorateRequest('clientUrl', '');
  app.decorateRequest('publicPath', '');
  app.addHook('onRequest', async (request) => {
    request.clientUrl = request.url;
    request.publicPath = request.url.split('?')[0] ?? '';
  });

  app.addHook('onResponse', async (request, reply) => {
    request.log.info({ req: request, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime }, 'request completed');
  });

  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('X-Request-Id', request.id);
    reply.header('X-Content-Type-Options', 'nosniff');
    reply.header('Referrer-Policy', 'no-referrer');
    if (!reply.hasHeader('Content-Security-Policy')) {
      reply.header('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'");
    }
    return payload;
  });

  installRequestMetrics(app, router);
  installErrorReplies(app);
  installCustomerCors(app, deps);
  installEmbedCors(app);
  installTrpcCors(app, deps, router);
  await app.register(opsPlugin, { deps });
  await app.register(homePlugin, { deps });
  await app.register(docsPlugin, { document: () => buildOpenApiDocument(router) });
  if (!deps.config.isProduction) await app.register(mailboxPlugin, { deps });
  await app.register(pagesPlugin, { deps });
  if (!deps.config.isProduction && deps.config.testGatewaySecret) await app.register(testPayPlugin, { deps });
  await app.register(trpcPlugin, { deps, router });
  await app.register(uploadsPlugin, { deps });
  await app.register(paymentWebhooksPlugin, { deps });
  await app.register(downloadsPlugin, { deps });
  await app.register(restPlugin, { deps, router });
  return app;
}
