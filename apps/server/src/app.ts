/**
 * buildApp(deps) assembles the HTTP application and never listens: `svc serve` listens,
 * tests call `listen({ port: 0 })` or `inject`. It registers plugins and the routes of the
 * route table; policy lives in the table, not here.
 */
import { randomUUID } from 'node:crypto';
import cookie from '@fastify/cookie';
import type { AnyRouter } from '@trpc/server';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { sellerErrorMap } from '@svc/schemas';
import { z } from 'zod';
import type { AppDeps } from './deps.js';
import { installCors } from './http/cors.js';
import { docsPlugin, openApiJsonRoute, openApiPartRoute } from './http/docs.js';
import { clientErrorHandler, installErrorReplies, routerErrorHandler } from './http/error-reply.js';
import { registerPlainRoutes } from './http/plain-route.js';
import { PLAIN_ROUTES } from './http/plain-routes.js';
import { installRequestMetrics } from './http/request-metrics.js';
import { installResponseSink } from './http/response-sink.js';
import { installSecurityHeaders } from './http/security-headers.js';
import { restPlugin } from './http/rest.js';
import { trpcPlugin } from './http/trpc.js';
import { settleAfterAnswer } from './lib/after-answer.js';
import { assertReadableUrl } from './lib/input-limits.js';
import { buildOpenApiDocument } from './openapi/document.js';
import { appRouter } from './api/app-router.js';
import { routeTable } from './api/route-table.js';
import { pinInputCoercion } from './api/strict-input.js';

export interface BuildAppOptions {
  /** Another router (tests mount procedures that exist only to exercise the pipeline). */
  router?: AnyRouter;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The path the client sent, without the query. */
    publicPath: string;
  }
}

const REQUEST_ID = /^[A-Za-z0-9._-]{8,64}$/;

export async function buildApp(deps: AppDeps, options: BuildAppOptions = {}): Promise<FastifyInstance> {
  // Every validation issue is said as a sentence (@svc/schemas' error map), in the error body's
  // `issues` of every route as in the dashboard's forms; a schema's own message still wins.
  z.config({ customError: sellerErrorMap });
  const router = options.router ?? appRouter;
  const document = () => buildOpenApiDocument(router);
  const plainRoutes = [...PLAIN_ROUTES, openApiJsonRoute(document), openApiPartRoute(document)];
  const table = routeTable(router, plainRoutes);
  pinInputCoercion(table);

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
    // A trailing slash names the same route, as in the route table's own lookup.
    routerOptions: { maxParamLength: 2048, ignoreTrailingSlash: true },
    // Requests Node's parser refuses (headers over 16 KB, not HTTP) answered in our error body.
    clientErrorHandler,
    // So are those the router refuses (a path that is not percent-encoded UTF-8, a parameter too long).
    frameworkErrors: routerErrorHandler,
  });

  // The path without its query: CORS looks the route up by it.
  app.decorateRequest('publicPath', '');
  app.addHook('onRequest', (request, reply, done) => {
    const url = request.url;
    const query = url.indexOf('?');
    request.publicPath = query < 0 ? url : url.slice(0, query);
    reply.header('X-Request-Id', request.id);
    try {
      // The router decodes only the path; the query must be readable text too.
      assertReadableUrl(url);
    } catch (error) {
      done(error as Error);
      return;
    }
    done();
  });

  app.addHook('onResponse', (request, reply, done) => {
    request.log.info(
      { req: request, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime },
      'request completed',
    );
    done();
  });

  // Work requests left for after their answers (a reset link, a sign-in code) ends before the
  // database closes.
  app.addHook('onClose', () => settleAfterAnswer());

  installRequestMetrics(app, table);
  installErrorReplies(app);
  installResponseSink(app);
  await app.register(cookie);
  installSecurityHeaders(app);
  await installCors(app, deps, table);
  await app.register(docsPlugin, { document });
  await registerPlainRoutes(app, deps, plainRoutes);
  await app.register(trpcPlugin, { deps, router });
  await app.register(restPlugin, { deps, table });
  return app;
}
