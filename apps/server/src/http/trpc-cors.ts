/**
 * CORS for /trpc, so @svc/sdk's theme and customer clients work from a storefront's origin.
 * A call gets the policy of the procedures it names (every procedure of a batch must share
 * one, else none):
 * - public buyer and theme procedures (no `auth` in their meta: catalog, cart, checkout,
 *   embed, coupons, delivery by token, feedback, tracking): open to every origin, without
 *   credentials, like the embed routes;
 * - customer procedures (`customer.*`, `customerDashboard.*`, buyer tickets): the store's
 *   own origins with credentials, like the REST customer routes (customer-cors.ts);
 * - merchant (API key) and dashboard (session) procedures, and the seller sign-in: no CORS.
 */
import type { AnyRouter } from '@trpc/server';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AppDeps } from '../deps.js';
import { isAnyStoreOrigin, ownOrigin } from '../modules/stores/origins.js';

type Policy = 'open' | 'store-origins' | 'none';

const EXPOSED = 'Retry-After, X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Idempotent-Replayed';
const CUSTOMER_PROCEDURES = /^(customer|customerDashboard)\./;
const BUYER_TICKETS = new Set(['tickets.create', 'tickets.get', 'tickets.reply']);

interface ProcedureMeta {
  auth?: string;
}

/** The CORS policy of each procedure of the router. */
export function corsPolicies(router: AnyRouter): Map<string, Policy> {
  const policies = new Map<string, Policy>();
  const procedures = router._def.procedures as Record<string, { _def: { meta?: ProcedureMeta } }>;
  for (const [path, procedure] of Object.entries(procedures)) {
    const auth = procedure._def.meta?.auth;
    let policy: Policy = 'none';
    if (CUSTOMER_PROCEDURES.test(path) || BUYER_TICKETS.has(path)) policy = 'store-origins';
    else if (auth === undefined && !path.startsWith('auth.')) policy = 'open';
    policies.set(path, policy);
  }
  return policies;
}

/** The one policy of `/trpc/<a>,<b>?...`, or none. */
export function policyOf(url: string, policies: Map<string, Policy>): Policy {
  const match = /^\/trpc\/([^?]+)/.exec(url);
  if (!match) return 'none';
  let paths: string[];
  try {
    paths = decodeURIComponent(match[1]!).split(',');
  } catch {
    return 'none';
  }
  const found = new Set(paths.map((path) => policies.get(path) ?? 'none'));
  return found.size === 1 ? [...found][0]! : 'none';
}

function allowPreflight(reply: FastifyReply): void {
  reply.header('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
  reply.header('Access-Control-Allow-Headers', 'content-type, idempotency-key, x-request-id, trpc-accept');
  reply.header('Access-Control-Max-Age', '600');
}

export function installTrpcCors(app: FastifyInstance, deps: AppDeps, router: AnyRouter): void {
  const policies = corsPolicies(router);
  const self = ownOrigin(deps.config);
  app.addHook('onRequest', async (request, reply) => {
    if (!request.url.startsWith('/trpc/')) return;
    const origin = request.headers.origin;
    if (!origin || origin === self) return;
    const policy = policyOf(request.url, policies);
    let allowed = false;
    if (policy === 'open') {
      reply.header('Access-Control-Allow-Origin', '*');
      allowed = true;
    } else if (policy === 'store-origins') {
      reply.header('Vary', 'Origin');
      allowed = await isAnyStoreOrigin(deps.orm.em.fork(), deps.config, origin);
      if (allowed) {
        reply.header('Access-Control-Allow-Origin', origin);
        reply.header('Access-Control-Allow-Credentials', 'true');
      }
    }
    if (allowed) reply.header('Access-Control-Expose-Headers', EXPOSED);
    if (request.method === 'OPTIONS') {
      if (allowed) allowPreflight(reply);
      return reply.code(204).send();
    }
  });
}
