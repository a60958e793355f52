/**
 * CORS by @fastify/cors, per route, from the route table: each route's declared policy decides,
 * on REST, on /trpc (a call gets the policy its procedures share, else none) and on the plain
 * routes alike. Preflights are answered from the target route's policy (the method the browser
 * asks for), before any guard, since they carry no credentials.
 * - open: any origin, without credentials (public theme routes, the embed);
 * - store-origins: an origin some store claims (its storefront subdomain or allowedOrigins),
 *   with credentials (customer routes); the customer guard then checks it is the buyer's store;
 * - none: no CORS headers (same origin only).
 */
import cors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppDeps } from '../deps.js';
import { isAnyStoreOrigin, ownOrigin } from '../modules/stores/origins.js';
import type { CorsPolicy } from '../trpc/policy.js';
import type { RouteTable } from '../api/route-table.js';

const EXPOSED = [
  'Retry-After',
  'X-Request-Id',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit',
  'RateLimit-Policy',
  'Idempotent-Replayed',
];
// authorization: a theme's preview token (test mode, modules/access/test-mode.ts); no cookie rides on open CORS.
const ALLOWED_HEADERS = ['content-type', 'idempotency-key', 'x-request-id', 'trpc-accept', 'authorization'];
const COMMON: FastifyCorsOptions = {
  methods: ['GET', 'POST', 'OPTIONS'],
  allowedHeaders: ALLOWED_HEADERS,
  exposedHeaders: EXPOSED,
  maxAge: 600,
};
const DISABLED: FastifyCorsOptions = { origin: false };

/** The policy of the route a request (or, for a preflight, the request it announces) reaches. */
function policyOf(table: RouteTable, request: FastifyRequest): CorsPolicy {
  const path = request.publicPath;
  if (path.startsWith('/trpc/')) {
    let names: string[];
    try {
      names = decodeURIComponent(path.slice('/trpc/'.length)).split(',');
    } catch {
      return 'none';
    }
    return table.trpcCors(names);
  }
  const announced = request.headers['access-control-request-method'];
  const method =
    request.method === 'OPTIONS' && typeof announced === 'string' ? announced.toUpperCase() : request.method;
  return table.match(method, path)?.policy.cors ?? 'none';
}

/** Registers @fastify/cors on the root instance (so its hook reaches every route). */
export async function installCors(app: FastifyInstance, deps: AppDeps, table: RouteTable): Promise<void> {
  const self = ownOrigin(deps.config);
  const OPEN: FastifyCorsOptions = { ...COMMON, origin: '*', credentials: false };
  await app.register(cors, {
    hook: 'onRequest',
    // The callback form: a request without an Origin (most of them) is answered without a promise.
    delegator: (request: FastifyRequest, callback: (error: Error | null, options: FastifyCorsOptions) => void) => {
      const origin = request.headers.origin;
      if (!origin || origin === self) return callback(null, DISABLED);
      const policy = policyOf(table, request);
      if (policy === 'open') return callback(null, OPEN);
      if (policy === 'none') return callback(null, DISABLED);
      isAnyStoreOrigin({ em: deps.orm.em.fork(), deps }, origin).then(
        (claimed) => callback(null, claimed ? { ...COMMON, origin, credentials: true } : DISABLED),
        (error: Error) => callback(error, DISABLED),
      );
    },
  } as never);
}
