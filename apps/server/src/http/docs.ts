/**
 * The OpenAPI document at /api/openapi.json, and the API reference at /docs by
 * @fastify/swagger-ui (fed by @fastify/swagger in static mode with our document). Every asset is
 * served from this origin; nothing from a CDN. The document is built on first use, not at start.
 */
import { z } from 'zod';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { plainRoute } from './plain-route.js';

/** The reference's own policy: its scripts and styles from here, no framing, nothing else. */
const DOCS_CSP = {
  'default-src': ["'self'"],
  'img-src': ["'self'", 'data:'],
  // Swagger UI sets styles from its script.
  'style-src': ["'self'", "'unsafe-inline'"],
  'script-src': ["'self'"],
  'connect-src': ["'self'"],
  'base-uri': ["'none'"],
  'object-src': ["'none'"],
  'frame-ancestors': ["'none'"],
};

/** A document computed on first use: every property read builds it once. */
function lazyDocument(build: () => object): object {
  let built: object | undefined;
  const target = () => (built ??= build());
  return new Proxy(
    {},
    {
      get: (_target, key): unknown => Reflect.get(target(), key),
      has: (_target, key) => Reflect.has(target(), key),
      ownKeys: () => Reflect.ownKeys(target()),
      getOwnPropertyDescriptor: (_target, key) => {
        const descriptor = Reflect.getOwnPropertyDescriptor(target(), key);
        return descriptor && { ...descriptor, configurable: true };
      },
    },
  );
}

export function openApiJsonRoute(document: () => object) {
  let json: string | undefined;
  return plainRoute({
    name: 'docs.openapi',
    method: 'GET',
    path: '/api/openapi.json',
    body: 'none',
    query: z.strictObject({}),
    policy: { auth: { kind: 'public', audience: 'storefront' }, csrf: 'none', cors: 'open', errors: [] },
    openapi: false,
    async handler(_ctx, _request, reply) {
      json ??= JSON.stringify(document());
      return reply.type('application/json; charset=utf-8').send(json);
    },
  });
}

export async function docsPlugin(app: FastifyInstance, opts: { document: () => object }): Promise<void> {
  await app.register(swagger, { mode: 'static', specification: { document: lazyDocument(opts.document) as never } });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: DOCS_CSP, uiConfig: { deepLinking: true } });
}
