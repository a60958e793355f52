/**
 * `GET /api/v1/licenses/jwks/{storeId}`: the public keys that verify a store's offline license
 * leases (modules/licenses/lease.ts), as a JWKS (RFC 7517; OKP/Ed25519, RFC 8037). Public and
 * cacheable: the merchant's software fetches it when online and keeps it; a shared cache may
 * serve it (five minutes, then revalidated by its ETag), any origin may read it, and no cookie is
 * read or set.
 */
import { createHash } from 'node:crypto';
import { ZLeaseJwks } from '@svc/schemas';
import { z } from 'zod';
import { storeJwks } from '../modules/licenses/lease.js';
import { ifNoneMatchHas, sendNotModified } from './etag.js';
import { plainRoute } from './plain-route.js';

export const licenseJwksRoute = plainRoute({
  name: 'licenses.jwks',
  method: 'GET',
  path: '/api/v1/licenses/jwks/{storeId}',
  body: 'none',
  // It takes no query: anything there is 400, as on every route.
  query: z.strictObject({}),
  policy: {
    auth: { kind: 'public', audience: 'storefront' },
    csrf: 'none',
    cors: 'open',
    rateLimit: { name: 'licenses.jwks', max: 120, windowMs: 60_000 },
    errors: ['not_found'],
  },
  openapi: {
    operationId: 'licenses-jwks',
    summary: "The store's public keys for offline license leases (a JWKS), cacheable",
    tags: ['licenses'],
    requestParams: { path: z.object({ storeId: z.string() }) },
    responses: {
      200: { description: 'The JWKS', content: { 'application/json': { schema: ZLeaseJwks } } },
      304: { description: 'Not modified (If-None-Match named the current ETag)' },
    },
  },
  async handler(ctx, request, reply) {
    const body = JSON.stringify(await storeJwks(ctx, ctx.params.storeId!));
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
    reply
      .header('Cache-Control', 'public, max-age=300')
      .header('ETag', etag)
      // Also without an Origin header: a shared cache may hand this answer to a cross-origin fetch.
      .header('Access-Control-Allow-Origin', '*');
    if (ifNoneMatchHas(request.headers['if-none-match'], etag)) return sendNotModified(reply);
    return reply.type('application/json; charset=utf-8').send(body);
  },
});
