/**
 * Counts and times every request by method, route template and status, at the root so no
 * plugin's encapsulation hides a route. A REST route is named by its documented template
 * (`/api/merchant/v1/stores/{storeId}/orders`), not by the adapter's catch-all; a /trpc call
 * by its procedure; anything that matched no route is `unmatched`, so ids never become labels.
 */
import type { AnyRouter } from '@trpc/server';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import FindMyWay, { type HTTPVersion } from 'find-my-way';
import { httpDuration, httpRequests } from '../lib/metrics.js';
import type { SvcMeta } from '../trpc/init.js';

const REST_CATCH_ALL = '/api/*';
const TRPC_ROUTE = '/trpc/:path';

/** Resolves a REST request's path (no query) to its OpenAPI template, in one radix-tree lookup. */
export function restTemplates(router: AnyRouter, basePath = '/api'): (method: string, path: string) => string | undefined {
  const lookup = FindMyWay<HTTPVersion.V1>({ ignoreTrailingSlash: true, maxParamLength: 2048 });
  const procedures = router._def.procedures as Record<string, { _def: { meta?: SvcMeta } }>;
  for (const procedure of Object.values(procedures)) {
    const openapi = procedure._def.meta?.openapi;
    if (!openapi?.path) continue;
    const template = `${basePath}${openapi.path}`;
    lookup.on(openapi.method, template.replace(/\{(\w+)\}/g, ':$1'), () => undefined, { template });
  }
  return (method, path) => {
    const found = lookup.find(method as 'GET', path);
    return (found?.store as { template?: string } | undefined)?.template;
  };
}

/** `/trpc/orders.list` for one procedure; `/trpc/(batch)` for several. */
function trpcTemplate(request: FastifyRequest): string {
  const raw = (request.params as { path?: string }).path ?? '';
  return raw.includes(',') || raw.includes('%2C') ? '/trpc/(batch)' : `/trpc/${raw}`;
}

export function installRequestMetrics(app: FastifyInstance, router: AnyRouter): void {
  const restTemplate = restTemplates(router);
  const trpcProcedures = new Set(Object.keys(router._def.procedures as object));
  const routeOf = (request: FastifyRequest): string => {
    const url = request.routeOptions.url;
    if (url === REST_CATCH_ALL) return restTemplate(request.method, request.publicPath) ?? 'unmatched';
    if (url === TRPC_ROUTE) {
      const template = trpcTemplate(request);
      return template === '/trpc/(batch)' || trpcProcedures.has(template.slice(6)) ? template : 'unmatched';
    }
    return url ? url.replace(/:(\w+)/g, '{$1}') : 'unmatched';
  };
  app.addHook('onResponse', async (request, reply) => {
    const labels = { method: request.method, route: routeOf(request), status: String(reply.statusCode) };
    httpRequests.inc(labels);
    httpDuration.observe(labels, reply.elapsedTime / 1000);
  });
}
