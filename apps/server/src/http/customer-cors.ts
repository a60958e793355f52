/**
 * CORS for the customer routes themes call from a storefront: an origin is allowed when a
 * store claims it (its storefront subdomain or its allowedOrigins), with credentials, so
 * the `svc_customer` cookie travels. The session guard then checks the origin belongs to
 * the customer's own store. Preflights carry no cookie, so they are answered here.
 */
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../deps.js';
import { isAnyStoreOrigin, ownOrigin } from '../modules/stores/origins.js';

const PREFIXES = ['/api/customer/', '/api/v1/customer-dashboard/', '/api/tickets'];

export function installCustomerCors(app: FastifyInstance, deps: AppDeps): void {
  const self = ownOrigin(deps.config);
  app.addHook('onRequest', async (request, reply) => {
    if (!PREFIXES.some((prefix) => request.url.startsWith(prefix))) return;
    const origin = request.headers.origin;
    if (!origin || origin === self) return;
    reply.header('Vary', 'Origin');
    const allowed = await isAnyStoreOrigin(deps.orm.em.fork(), deps.config, origin);
    if (allowed) {
      reply.header('Access-Control-Allow-Origin', origin);
      reply.header('Access-Control-Allow-Credentials', 'true');
    }
    if (request.method === 'OPTIONS') {
      if (allowed) {
        reply.header('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
        reply.header('Access-Control-Allow-Headers', 'content-type');
        reply.header('Access-Control-Max-Age', '600');
      }
      return reply.code(204).send();
    }
  });
}
