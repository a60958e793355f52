/**
 * Counts and times every request by method, route template and status, at the root so no
 * plugin's encapsulation hides a route. A REST route is named by its documented template
 * (`/api/merchant/v1/stores/{storeId}/orders`, from the route table), not by the adapter's
 * catch-all; a /trpc call by its procedure; anything that matched no route is `unmatched`, so
 * ids never become label values.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { httpDuration, httpRequests } from '../lib/metrics.js';
import type { RouteTable } from '../trpc/route-table.js';

const REST_CATCH_ALL = '/api/*';
const TRPC_ROUTE = '/trpc/:path';

export function installRequestMetrics(app: FastifyInstance, table: RouteTable): void {
  const routeOf = (request: FastifyRequest): string => {
    const url = request.routeOptions.url;
    if (url === REST_CATCH_ALL) return table.match(request.method, request.publicPath)?.path ?? 'unmatched';
    if (url === TRPC_ROUTE) {
      const raw = (request.params as { path?: string }).path ?? '';
      if (raw.includes(',')) return '/trpc/(batch)';
      return table.procedure(raw) ? `/trpc/${raw}` : 'unmatched';
    }
    return url ? url.replace(/:(\w+)/g, '{$1}') : 'unmatched';
  };
  app.addHook('onResponse', (request, reply, done) => {
    const labels = { method: request.method, route: routeOf(request), status: String(reply.statusCode) };
    httpRequests.inc(labels);
    httpDuration.observe(labels, reply.elapsedTime / 1000);
    done();
  });
}
