/**
 * Counts and times every request by method, route template and status, at the root so no
 * plugin's encapsulation hides a route. A route is named by its template as documented
 * (`/api/merchant/v1/stores/{storeId}/orders`); a /trpc call by its procedure; anything that
 * matched no route is `unmatched`, so ids never become label values.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { httpDuration, httpRequests } from '../lib/metrics.js';
import type { RouteTable } from '../api/route-table.js';

const TRPC_ROUTE = '/trpc/:path';

export function installRequestMetrics(app: FastifyInstance, table: RouteTable): void {
  /** Fastify's `/api/stores/:storeId` as documented, `/api/stores/{storeId}`: one per route, kept. */
  const templates = new Map<string, string>();
  const routeOf = (request: FastifyRequest): string => {
    const url = request.routeOptions.url;
    if (url === TRPC_ROUTE) {
      const raw = (request.params as { path?: string }).path ?? '';
      if (raw.includes(',')) return '/trpc/(batch)';
      return table.procedure(raw) ? `/trpc/${raw}` : 'unmatched';
    }
    if (!url) return 'unmatched';
    let template = templates.get(url);
    if (template === undefined) templates.set(url, (template = url.replace(/:(\w+)/g, '{$1}')));
    return template;
  };
  app.addHook('onResponse', (request, reply, done) => {
    const labels = { method: request.method, route: routeOf(request), status: String(reply.statusCode) };
    httpRequests.inc(labels);
    httpDuration.observe(labels, reply.elapsedTime / 1000);
    done();
  });
}
