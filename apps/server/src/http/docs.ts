/**
 * The OpenAPI document at /api/openapi.json, and the API reference at /docs by
 * @fastify/swagger-ui (fed by @fastify/swagger in static mode with our document). Every asset is
 * served from this origin; nothing from a CDN. The document is built on first use, not at start.
 *
 * The reference opens on the merchant API and offers the rest as Swagger UI's definitions (its
 * `urls`), one per audience, each a part of the one document at /api/openapi/{part}. The whole
 * document in one page hid most of it: past 150 tags and operations Swagger UI renders only the
 * rows in view (so a page showed auth and two public routes, and find-in-page found nothing
 * else), and its first 40 rows were the dashboard's. Each part stays under that, so every one of
 * its operations is on the page; `All operations` is the whole document.
 */
import { z } from 'zod';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../lib/errors.js';
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

/** The reference's parts by who reads them, in the order it offers them; an operation is in the first whose tags match. */
export const REFERENCE_PARTS = [
  { part: 'merchant', name: 'Merchant API', tagged: (tag: string) => tag.startsWith('merchant') },
  { part: 'licenses', name: 'License API', tagged: (tag: string) => tag === 'licenses' },
  {
    part: 'dashboard',
    name: 'Dashboard and seller sign-in',
    tagged: (tag: string) => tag === 'auth' || tag.startsWith('dashboard'),
  },
  // Everything else: the public catalog, themes, checkout and the buyer's routes, payments.
  { part: 'storefront', name: 'Storefront, themes and buyers', tagged: () => true },
] as const;

type Operations = Record<string, { tags?: string[] }>;
interface OpenApiDocument {
  info: { title: string };
  paths: Record<string, Operations>;
  webhooks?: object;
}

/** One part of the document: its operations (a path keeps only those), the events with the merchant API. */
export function referencePart(document: OpenApiDocument, part: string): OpenApiDocument | undefined {
  const index = REFERENCE_PARTS.findIndex((entry) => entry.part === part);
  if (index < 0) return undefined;
  const partOf = (operation: { tags?: string[] }) =>
    REFERENCE_PARTS.findIndex((entry) => (operation.tags ?? []).some((tag) => entry.tagged(tag)));
  const paths: Record<string, Operations> = {};
  for (const [path, item] of Object.entries(document.paths)) {
    // An operation has responses; a path's other fields (its parameters) go with any it keeps.
    const isOperation = (value: unknown): value is { tags?: string[] } =>
      typeof value === 'object' && value !== null && 'responses' in value;
    const kept = Object.entries(item).filter(([, value]) => !isOperation(value) || partOf(value) === index);
    if (kept.some(([, value]) => isOperation(value))) paths[path] = Object.fromEntries(kept);
  }
  const { webhooks, ...rest } = document;
  return {
    ...rest,
    info: { ...document.info, title: `${document.info.title}: ${REFERENCE_PARTS[index]!.name}` },
    paths,
    ...(part === 'merchant' && webhooks ? { webhooks } : {}),
  };
}

export function openApiPartRoute(document: () => object) {
  const parts = new Map<string, string>();
  return plainRoute({
    name: 'docs.openapiPart',
    method: 'GET',
    path: '/api/openapi/{part}',
    body: 'none',
    query: z.strictObject({}),
    policy: { auth: { kind: 'public', audience: 'storefront' }, csrf: 'none', cors: 'open', errors: ['not_found'] },
    openapi: false,
    async handler(ctx, _request, reply) {
      const part = ctx.params.part!;
      let json = parts.get(part);
      if (json === undefined) {
        const built = referencePart(document() as OpenApiDocument, part);
        if (!built) throw new AppError('not_found', 'There is no such part of the reference.');
        json = JSON.stringify(built);
        parts.set(part, json);
      }
      return reply.type('application/json; charset=utf-8').send(json);
    },
  });
}

export async function docsPlugin(app: FastifyInstance, opts: { document: () => object }): Promise<void> {
  await app.register(swagger, { mode: 'static', specification: { document: lazyDocument(opts.document) as never } });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: DOCS_CSP,
    uiConfig: {
      deepLinking: true,
      // With `urls`, Swagger UI loads the primary definition and offers the others in its top bar.
      urls: [
        ...REFERENCE_PARTS.map(({ part, name }) => ({ url: `/api/openapi/${part}`, name })),
        { url: '/api/openapi.json', name: 'All operations' },
      ],
      'urls.primaryName': REFERENCE_PARTS[0].name,
    } as never,
  });
}
