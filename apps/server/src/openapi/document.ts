/**
 * The OpenAPI 3.1 document, generated from the router by trpc-to-openapi and then
 * corrected where the generator cannot know better: full `/api/...` paths, our error
 * body, 201/204 success statuses, 429 with its headers where a route is limited,
 * 413/415 where a body is accepted, and the Idempotency-Key header with 409/422 where a
 * route honours it.
 */
import type { AnyRouter } from '@trpc/server';
import { generateOpenApiDocument } from 'trpc-to-openapi';
import { z } from 'zod';
import { ZErrorBody, ZStoredFile } from '@svc/schemas';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import type { SvcMeta } from '../trpc/init.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export const API_BASE_PATH = '/api';

const ERROR_REF = { $ref: '#/components/schemas/Error' };

function errorResponse(description: string, headers?: Json): Json {
  return {
    description,
    ...(headers && { headers }),
    content: { 'application/json': { schema: ERROR_REF } },
  };
}

const RATE_LIMIT_HEADERS: Json = {
  'Retry-After': { description: 'Seconds until a request will be counted again', schema: { type: 'integer' } },
  'X-RateLimit-Limit': { description: 'Requests allowed in the window', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the window', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'Seconds until the oldest counted request leaves the window', schema: { type: 'integer' } },
  RateLimit: { description: 'IETF RateLimit field', schema: { type: 'string' } },
  'RateLimit-Policy': { description: 'IETF RateLimit-Policy field', schema: { type: 'string' } },
};

const IDEMPOTENCY_KEY_PARAMETER: Json = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes the request safe to retry: a repeat with the same key and body within 24 h answers the first answer again ' +
    '(with `Idempotent-Replayed: true`) and creates nothing. Scoped to the route and the store.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$' },
};

const REPLAYED_HEADERS: Json = {
  'Idempotent-Replayed': { description: 'Present when this is the stored answer to an earlier request with the same Idempotency-Key', schema: { type: 'string', enum: ['true'] } },
};

const DESCRIPTIONS: Record<string, string> = {
  '400': 'Invalid input',
  '401': 'Missing or invalid credentials',
  '403': 'Not allowed',
  '404': 'Not found',
  '409': 'Conflict with the current state',
  '413': 'Request body too large',
  '415': 'Body is not application/json',
  '429': 'Rate limit exceeded',
  '500': 'Internal server error',
};

const SECURITY_SCHEME = { apiKey: 'bearerAuth', session: 'sessionCookie', customer: 'customerCookie' } as const;

const COOKIE_SCHEMES: Json = {
  sessionCookie: {
    type: 'apiKey',
    in: 'cookie',
    name: 'svc_session',
    description: 'Seller session from POST /api/auth/login. Unsafe methods also need the X-CSRF-Token header.',
  },
  customerCookie: { type: 'apiKey', in: 'cookie', name: 'svc_customer', description: 'Customer session from POST /api/customer/auth/verify.' },
};

function metaByOperation(router: AnyRouter): Map<string, SvcMeta> {
  const map = new Map<string, SvcMeta>();
  const procedures = router._def.procedures as Record<string, { _def: { meta?: SvcMeta } }>;
  for (const procedure of Object.values(procedures)) {
    const meta = procedure._def.meta;
    if (meta?.openapi) map.set(`${meta.openapi.method.toLowerCase()} ${meta.openapi.path}`, meta);
  }
  return map;
}

/** Routes served by Fastify itself rather than by a procedure (multipart uploads). */
const PLAIN_ROUTES: ZodOpenApiPathsObject = {
  '/dashboard/stores/{storeId}/products/{productId}/files': {
    post: {
      operationId: 'catalog-uploadFile',
      summary: 'Upload a downloadable file for a product (multipart/form-data, one part named "file")',
      tags: ['dashboard: products'],
      security: [{ sessionCookie: [] }],
      requestParams: { path: z.object({ storeId: z.string(), productId: z.string() }) },
      requestBody: {
        required: true,
        content: { 'multipart/form-data': { schema: z.object({ file: z.string().meta({ format: 'binary' }) }) } },
      },
      responses: {
        201: { description: 'The stored file', content: { 'application/json': { schema: ZStoredFile } } },
        400: { description: 'No file attached' },
        401: { description: 'Missing or invalid credentials' },
        403: { description: 'Not allowed' },
        404: { description: 'Not found' },
        413: { description: 'File too large' },
        415: { description: 'Not multipart/form-data' },
      },
    },
  },
  '/orders/{orderId}/payment-proof': {
    post: {
      operationId: 'payments-uploadProof',
      summary: 'Upload proof of a manual payment (multipart/form-data, one part named "file"); the checkout token in ?token= or the svc_checkout cookie',
      tags: ['buyer'],
      requestParams: { path: z.object({ orderId: z.string() }), query: z.object({ token: z.string().optional() }) },
      requestBody: { required: true, content: { 'multipart/form-data': { schema: z.object({ file: z.string().meta({ format: 'binary' }) }) } } },
      responses: {
        201: { description: 'Stored; the seller reviews it and marks the order paid' },
        400: { description: 'No file, or the order is not awaiting payment' },
        401: { description: 'No checkout token' },
        403: { description: 'Wrong checkout token' },
        404: { description: 'Not found' },
        409: { description: 'Manual payment not chosen' },
        413: { description: 'File too large' },
      },
    },
  },
  '/orders/{orderId}/files/{fileId}': {
    get: {
      operationId: 'fulfilment-downloadFile',
      summary: 'Download a file of a paid order through the signed, expiring link from /delivery',
      tags: ['buyer'],
      requestParams: { path: z.object({ orderId: z.string(), fileId: z.string() }), query: z.object({ expires: z.string(), sig: z.string() }) },
      responses: { 200: { description: 'The file' }, 403: { description: 'Link expired or not valid' }, 404: { description: 'Not found' } },
    },
  },
  '/payments/{gateway}/webhook': {
    post: {
      operationId: 'payments-notification',
      summary: 'Inbound payment notification (stripe: Stripe-Signature; test: X-Test-Signature t=<unix>,v1=<hex>); verified on the raw bytes',
      tags: ['payments'],
      requestParams: { path: z.object({ gateway: z.enum(['stripe', 'test']) }) },
      responses: {
        200: { description: 'Handled', content: { 'application/json': { schema: z.object({ outcome: z.string() }) } } },
        400: { description: 'Signature or body not valid' },
        404: { description: 'Unknown or unconfigured gateway' },
      },
    },
  },
};

export function buildOpenApiDocument(router: AnyRouter, version = '1.0.0'): Json {
  const document = generateOpenApiDocument(router, {
    title: 'svc API',
    description: 'Merchant, buyer, theme and public routes of svc. Error bodies are `{ error, code, issues? }`.',
    version,
    baseUrl: '/',
    securitySchemes: {
      bearerAuth: { type: 'http', scheme: 'bearer', description: 'Merchant API key (`sk_...`)' },
    },
    paths: PLAIN_ROUTES,
  }) as Json;

  const metas = metaByOperation(router);
  const paths: Json = {};
  for (const [path, item] of Object.entries(document.paths ?? {}) as [string, Json][]) {
    for (const [method, operation] of Object.entries(item) as [string, Json][]) {
      if (typeof operation !== 'object' || !operation.responses) continue;
      const meta = metas.get(`${method} ${path}`);
      const responses: Json = {};
      for (const [status, response] of Object.entries(operation.responses) as [string, Json][]) {
        if (status.startsWith('2')) {
          if (meta?.successStatus === 204) responses['204'] = { description: 'No content' };
          else responses[String(meta?.successStatus ?? status)] = response;
        } else {
          responses[status] = errorResponse(DESCRIPTIONS[status] ?? response.description ?? 'Error');
        }
      }
      if (operation.requestBody?.content?.['application/json']) {
        responses['413'] = errorResponse(DESCRIPTIONS['413']!);
        responses['415'] = errorResponse(DESCRIPTIONS['415']!);
      }
      if (meta?.rateLimit) {
        const { max, windowMs } = meta.rateLimit;
        responses['429'] = errorResponse(`${DESCRIPTIONS['429']} (${max} per ${windowMs / 1000} s per client)`, RATE_LIMIT_HEADERS);
      }
      if (meta?.idempotent) {
        operation.parameters = [...(operation.parameters ?? []), IDEMPOTENCY_KEY_PARAMETER];
        for (const [status, response] of Object.entries(responses) as [string, Json][]) {
          if (status.startsWith('2')) responses[status] = { ...response, headers: { ...(response.headers ?? {}), ...REPLAYED_HEADERS } };
        }
        responses['409'] = errorResponse('A request with this Idempotency-Key is still being processed (`idempotency_key_in_use`); retry shortly', {
          'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } },
        });
        responses['422'] = errorResponse('This Idempotency-Key was already used with another body (`idempotency_key_reused`)');
      }
      if (meta?.auth) {
        operation.security = [{ [SECURITY_SCHEME[meta.auth]]: [] }];
        responses['401'] ??= errorResponse(DESCRIPTIONS['401']!);
        responses['403'] ??= errorResponse(DESCRIPTIONS['403']!);
      }
      operation.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
    }
    paths[`${API_BASE_PATH}${path}`] = item;
  }
  document.paths = paths;
  document.servers = [{ url: '/' }];
  document.components = {
    ...document.components,
    securitySchemes: { ...(document.components?.securitySchemes ?? {}), ...COOKIE_SCHEMES },
    schemas: {
      ...(document.components?.schemas ?? {}),
      Error: z.toJSONSchema(ZErrorBody, { target: 'draft-2020-12' }),
    },
  };
  delete document.components.schemas.Error.$schema;
  // The generator's own error components (`error.BAD_REQUEST`, ...) describe its body, not
  // ours, and nothing refers to them any more; their text also depends on generation order.
  for (const name of Object.keys(document.components.schemas)) {
    if (name.startsWith('error.')) delete document.components.schemas[name];
  }
  return document;
}

export function serialiseDocument(document: Json): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}
