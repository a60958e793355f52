/** The embed checkout is called from any site: CORS open to every origin, without credentials. */
import type { FastifyInstance } from 'fastify';

const PREFIX = '/api/embed/';

export function installEmbedCors(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    if (!request.url.startsWith(PREFIX)) return;
    reply.header('Access-Control-Allow-Origin', '*');
    reply.header('Access-Control-Expose-Headers', 'Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Idempotent-Replayed');
    if (request.method === 'OPTIONS') {
      reply.header('Access-Control-Allow-Methods', 'POST, OPTIONS');
      reply.header('Access-Control-Allow-Headers', 'content-type, idempotency-key');
      reply.header('Access-Control-Max-Age', '600');
      return reply.code(204).send();
    }
  });
}
