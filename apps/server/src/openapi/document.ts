/**
 * The OpenAPI 3.1 document: the procedures' request and response schemas as trpc-to-openapi
 * generates them, and everything else from the route table: full `/api/...` paths, the success
 * status, every error status the route can answer (with the codes behind it, all in our error
 * body), security, 429 with its headers where a route is limited, the Idempotency-Key header and
 * its 409/422, and the plain API routes (payment notifications, uploads, downloads).
 */
import type { AnyRouter } from '@trpc/server';
import { generateOpenApiDocument } from 'trpc-to-openapi';
import { z } from 'zod';
import { ERROR_STATUS, ZErrorBody, type TErrorCode } from '@svc/schemas';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { PLAIN_ROUTES } from '../http/plain-routes.js';
import type { AuthSurface } from '../trpc/policy.js';
import { API_BASE_PATH, routeTable, type PlainRouteDeclaration, type RouteEntry } from '../trpc/route-table.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export { API_BASE_PATH };

const ERROR_REF = { $ref: '#/components/schemas/Error' };

const DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid input, or a rule of the route refuses it',
  401: 'Missing or invalid credentials',
  403: 'Not allowed',
  404: 'Not found',
  405: 'Method not allowed',
  409: 'Conflict with the current state',
  413: 'Request body too large',
  415: 'Body is not in a media type the route takes',
  422: 'Unprocessable',
  429: 'Rate limit exceeded',
  500: 'Internal server error',
  503: 'The database is unavailable; retry shortly',
};

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

const COOKIE_SCHEMES: Json = {
  sessionCookie: {
    type: 'apiKey',
    in: 'cookie',
    name: 'svc_session',
    description: 'Seller session from POST /api/auth/login. Unsafe methods also need the X-CSRF-Token header.',
  },
  customerCookie: { type: 'apiKey', in: 'cookie', name: 'svc_customer', description: 'Customer session from POST /api/customer/auth/verify.' },
};

/** The security requirement of an auth surface; none for public, buyer (its credentials vary) and signed routes. */
function securityOf(auth: AuthSurface): Json[] | undefined {
  switch (auth.kind) {
    case 'apiKey':
      return [{ bearerAuth: [] }];
    case 'session':
      return [{ sessionCookie: [] }];
    case 'customer':
      return [{ customerCookie: [] }];
    default:
      return undefined;
  }
}

function errorResponse(status: number, codes: TErrorCode[], headers?: Json): Json {
  return {
    description: `${DESCRIPTIONS[status] ?? 'Error'}: ${codes.map((code) => `\`${code}\``).join(', ')}`,
    ...(headers && { headers }),
    content: { 'application/json': { schema: ERROR_REF } },
  };
}

/** A plain route's operation for the generator, with the path relative to the API base. */
function plainPaths(routes: readonly PlainRouteDeclaration[]): ZodOpenApiPathsObject {
  const paths: ZodOpenApiPathsObject = {};
  for (const route of routes) {
    if (route.openapi === false) continue;
    const path = route.path.slice(API_BASE_PATH.length);
    const requestParams = route.query ? { ...route.openapi.requestParams, query: route.query } : route.openapi.requestParams;
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: { responses: {}, ...route.openapi, requestParams } };
  }
  return paths;
}

/** Rewrites an operation's responses from the route table. */
function describe(operation: Json, entry: RouteEntry): void {
  const { policy } = entry;
  const responses: Json = {};
  for (const [status, response] of Object.entries(operation.responses ?? {}) as [string, Json][]) {
    if (!status.startsWith('2')) continue;
    if (policy.successStatus === 204) responses['204'] = { description: 'No content' };
    else responses[String(policy.successStatus ?? status)] = response;
  }
  const limited = policy.rateLimit !== undefined || policy.auth.kind === 'apiKey';
  const byStatus = new Map<number, TErrorCode[]>();
  for (const code of entry.errorCodes) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  for (const [status, codes] of byStatus) {
    responses[String(status)] = errorResponse(status, codes, status === 429 && limited ? RATE_LIMIT_HEADERS : status === 409 && policy.idempotency ? { 'Retry-After': RATE_LIMIT_HEADERS['Retry-After'] } : undefined);
  }
  if (policy.rateLimit) {
    const { max, windowMs } = policy.rateLimit;
    responses['429'].description += ` (${max} per ${windowMs / 1000} s per client)`;
  }
  if (policy.idempotency) {
    operation.parameters = [...(operation.parameters ?? []), IDEMPOTENCY_KEY_PARAMETER];
    for (const [status, response] of Object.entries(responses) as [string, Json][]) {
      if (status.startsWith('2')) responses[status] = { ...response, headers: { ...(response.headers ?? {}), ...REPLAYED_HEADERS } };
    }
  }
  // Public, buyer and signed routes need no scheme: say so (`[]`) rather than inherit one.
  operation.security = securityOf(policy.auth) ?? [];
  operation.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
}

export function buildOpenApiDocument(router: AnyRouter, plainRoutes: readonly PlainRouteDeclaration[] = PLAIN_ROUTES, version = '1.0.0'): Json {
  const table = routeTable(router, plainRoutes);
  const document = generateOpenApiDocument(router, {
    title: 'svc API',
    description: 'Merchant, buyer, theme and public routes of svc. Error bodies are `{ error, code, issues? }`.',
    version,
    baseUrl: '/',
    securitySchemes: {
      bearerAuth: { type: 'http', scheme: 'bearer', description: 'Merchant API key (`sk_...`)' },
    },
    paths: plainPaths(plainRoutes),
  }) as Json;

  const paths: Json = {};
  for (const [path, item] of Object.entries(document.paths ?? {}) as [string, Json][]) {
    const full = `${API_BASE_PATH}${path}`;
    for (const [method, operation] of Object.entries(item) as [string, Json][]) {
      if (typeof operation !== 'object' || !operation.responses) continue;
      const entry = table.match(method.toUpperCase(), full);
      if (entry) describe(operation, entry);
    }
    paths[full] = item;
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
