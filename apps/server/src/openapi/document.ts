/**
 * The OpenAPI 3.1 document: the procedures' request and response schemas as trpc-to-openapi
 * generates them, and everything else from the route table: full `/api/...` paths, the success
 * status, every error status the route can answer (with the codes behind it, all in our error
 * body), security, 429 with its headers where a route is limited, the Idempotency-Key header and
 * its 409/422, and the plain API routes (payment notifications, uploads, downloads).
 */
import type { AnyProcedure, AnyRouter } from '@trpc/server';
import { generateOpenApiDocument } from 'trpc-to-openapi';
import { z } from 'zod';
import {
  ERROR_STATUS,
  EVENT_PAYLOADS,
  eventEnvelope,
  ZErrorBody,
  type TErrorCode,
  type TEventType,
} from '@svc/schemas';
import type { oas31, ZodOpenApiPathsObject } from 'zod-openapi';
import { PLAIN_ROUTES } from '../http/plain-routes.js';
import type { SvcMeta } from '../trpc/init.js';
import type { AuthSurface } from '../trpc/policy.js';
import {
  API_BASE_PATH,
  routeTable,
  type PlainRouteDeclaration,
  type RouteEntry,
  type RouteTable,
} from '../api/route-table.js';

/** Headers as this module writes them (never references). */
type Headers = Record<string, oas31.HeaderObject>;
/** Responses as this module writes them (never references). */
type Responses = Record<string, oas31.ResponseObject>;

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
  502: 'The payment gateway refused or did not answer; nothing was changed',
  503: 'The database is unavailable; retry shortly',
};

const RETRY_AFTER: oas31.HeaderObject = {
  description: 'Seconds until a request will be counted again',
  schema: { type: 'integer' },
};

const RATE_LIMIT_HEADERS: Headers = {
  'Retry-After': RETRY_AFTER,
  'X-RateLimit-Limit': { description: 'Requests allowed in the window', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the window', schema: { type: 'integer' } },
  'X-RateLimit-Reset': {
    description: 'Seconds until the oldest counted request leaves the window',
    schema: { type: 'integer' },
  },
  RateLimit: { description: 'IETF RateLimit field', schema: { type: 'string' } },
  'RateLimit-Policy': { description: 'IETF RateLimit-Policy field', schema: { type: 'string' } },
};

/** The rate-limit headers every answer of a limited route carries once its budget was counted (Retry-After only on 429). */
const BUDGET_HEADERS: Headers = Object.fromEntries(
  Object.entries(RATE_LIMIT_HEADERS).filter(([name]) => name !== 'Retry-After'),
);

const CSRF_PARAMETER: oas31.ParameterObject = {
  name: 'X-CSRF-Token',
  in: 'header',
  required: true,
  description:
    "The seller session's CSRF token (from POST /api/auth/login or GET /api/auth/session); without it the call answers 403 `csrf_failed`.",
  schema: { type: 'string', minLength: 1, maxLength: 256 },
};

const STAFF_CSRF_PARAMETER: oas31.ParameterObject = {
  ...CSRF_PARAMETER,
  required: false,
  description: 'Needed (403 `csrf_failed` without it) only when a staff seller session opens the order.',
};

const CHECKOUT_COOKIE_PARAMETER: oas31.ParameterObject = {
  name: 'svc_checkout',
  in: 'cookie',
  required: false,
  description:
    'The checkout cookie set by POST /api/checkout/enter: opens the order it was set for, in place of its checkout token.',
  schema: { type: 'string', maxLength: 512 },
};

const CHECKOUT_SET_COOKIE: Headers = {
  'Set-Cookie': {
    description:
      '`svc_checkout=<value>; Path=/; HttpOnly; SameSite=Lax` (Secure in production): lets the buyer come back to the order',
    schema: { type: 'string' },
  },
};

const IDEMPOTENCY_KEY_PARAMETER: oas31.ParameterObject = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes the request safe to retry: a repeat with the same key and body within 24 h answers the first answer again ' +
    '(with `Idempotent-Replayed: true`) and creates nothing. Scoped to the route and the store.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$' },
};

const REPLAYED_HEADERS: Headers = {
  'Idempotent-Replayed': {
    description: 'Present when this is the stored answer to an earlier request with the same Idempotency-Key',
    schema: { type: 'string', enum: ['true'] },
  },
};

const CSV_HEADERS: Headers = {
  'Content-Disposition': {
    description: "With `format=csv`: `attachment; filename*=UTF-8''<name>.csv`",
    schema: { type: 'string' },
  },
};

const COOKIE_SCHEMES: Record<string, oas31.SecuritySchemeObject> = {
  sessionCookie: {
    type: 'apiKey',
    in: 'cookie',
    name: 'svc_session',
    description: 'Seller session from POST /api/auth/login. Unsafe methods also need the X-CSRF-Token header.',
  },
  customerCookie: {
    type: 'apiKey',
    in: 'cookie',
    name: 'svc_customer',
    description: 'Customer session from POST /api/customer/auth/verify.',
  },
};

/** The security requirement of an auth surface; none for public, buyer (its credentials vary) and signed routes. */
function securityOf(auth: AuthSurface): oas31.SecurityRequirementObject[] | undefined {
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

function errorResponse(status: number, codes: TErrorCode[], headers?: Headers): oas31.ResponseObject {
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
    const requestParams = route.query
      ? { ...route.openapi.requestParams, query: route.query }
      : route.openapi.requestParams;
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: { responses: {}, ...route.openapi, requestParams } };
  }
  return paths;
}

/** Rewrites an operation's responses from the route table. */
function describe(operation: oas31.OperationObject, entry: RouteEntry): void {
  const { policy } = entry;
  const responses: Responses = {};
  // The generator's responses are objects, never references.
  for (const [status, response] of Object.entries<oas31.ResponseObject>(operation.responses ?? {})) {
    // A conditional GET's 304 (a cacheable plain route's own) and a redirect a plain route
    // declares (a download sent to the object store's presigned URL) stay as declared.
    if (status === '304' || status === '302') responses[status] = response;
    if (!status.startsWith('2')) continue;
    if (policy.successStatus === 204) responses['204'] = { description: 'No content' };
    else responses[String(policy.successStatus ?? status)] = response;
  }
  if (policy.csv) {
    // `format=csv`: the same rows as CSV, a download (RoutePolicy.csv, http/rest.ts).
    for (const [status, response] of Object.entries(responses)) {
      if (!status.startsWith('2')) continue;
      responses[status] = {
        ...response,
        headers: { ...(response.headers ?? {}), ...CSV_HEADERS },
        content: { ...(response.content ?? {}), 'text/csv': { schema: { type: 'string' } } },
      };
    }
  }
  const limited = policy.rateLimit !== undefined || policy.auth.kind === 'apiKey';
  const byStatus = new Map<number, TErrorCode[]>();
  for (const code of entry.errorCodes)
    byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  for (const [status, codes] of byStatus) {
    responses[String(status)] = errorResponse(
      status,
      codes,
      status === 429 && limited
        ? RATE_LIMIT_HEADERS
        : status === 409 && policy.idempotency
          ? { 'Retry-After': RETRY_AFTER }
          : undefined,
    );
  }
  if (policy.rateLimit) {
    const { max, windowMs } = policy.rateLimit;
    const tooMany = responses['429']!;
    tooMany.description += ` (${max} per ${windowMs / 1000} s per client)`;
    // The embed's documented legacy shape: `{ "error": "Too many requests. Please try again later." }`, no code.
    if (policy.rateLimit.bareBody)
      tooMany.content = {
        'application/json': { schema: { $ref: '#/components/schemas/BareRateLimitError' } },
      };
  }
  if (limited) {
    // The budget headers go with every answer once the limit counted the request: required on
    // success and 429, possible (not required) on errors found before or after counting.
    for (const [status, response] of Object.entries(responses)) {
      if (status === '429') continue;
      const required = status.startsWith('2');
      const headers = Object.fromEntries(
        Object.entries(BUDGET_HEADERS).map(([name, header]) => [name, { ...header, required }]),
      );
      responses[status] = { ...response, headers: { ...(response.headers ?? {}), ...headers } };
    }
    responses['429']!.headers = Object.fromEntries(
      Object.entries(RATE_LIMIT_HEADERS).map(([name, header]) => [name, { ...header, required: true }]),
    );
  }
  const unsafe = entry.method !== 'GET';
  if (unsafe && policy.csrf === 'required') {
    operation.parameters = [
      ...(operation.parameters ?? []),
      policy.auth.kind === 'session' ? CSRF_PARAMETER : STAFF_CSRF_PARAMETER,
    ];
  }
  if (policy.auth.kind === 'buyer' || entry.name === 'checkout.session')
    operation.parameters = [...(operation.parameters ?? []), CHECKOUT_COOKIE_PARAMETER];
  if (entry.name === 'checkout.enter') {
    for (const [status, response] of Object.entries(responses)) {
      if (status.startsWith('2'))
        responses[status] = { ...response, headers: { ...(response.headers ?? {}), ...CHECKOUT_SET_COOKIE } };
    }
  }
  if (policy.idempotency) {
    operation.parameters = [...(operation.parameters ?? []), IDEMPOTENCY_KEY_PARAMETER];
    for (const [status, response] of Object.entries(responses)) {
      if (status.startsWith('2'))
        responses[status] = { ...response, headers: { ...(response.headers ?? {}), ...REPLAYED_HEADERS } };
    }
  }
  // Public, buyer and signed routes need no scheme: say so (`[]`) rather than inherit one.
  operation.security = securityOf(policy.auth) ?? [];
  operation.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
}

const SIGNATURE_PARAMETERS: oas31.ParameterObject[] = [
  {
    name: 'X-Service-Signature',
    in: 'header',
    required: true,
    description: "`t=<unix>,v1=<hex>`: HMAC-SHA256 of `<t>.<raw body>` under the endpoint's secret",
    schema: { type: 'string' },
  },
  { name: 'X-Service-Event', in: 'header', required: true, description: 'The event type', schema: { type: 'string' } },
  {
    name: 'X-Service-Event-Id',
    in: 'header',
    required: true,
    description: "The event id (the body's `id`), the same on every attempt",
    schema: { type: 'string' },
  },
  {
    name: 'X-Service-Delivery-Id',
    in: 'header',
    required: true,
    description: "This attempt's id",
    schema: { type: 'string' },
  },
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description: 'Standard Webhooks: the event id',
    schema: { type: 'string' },
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description: 'Standard Webhooks: unix seconds of the signature',
    schema: { type: 'string' },
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description: 'Standard Webhooks: `v1,<base64>` HMAC-SHA256 of `<id>.<timestamp>.<body>`',
    schema: { type: 'string' },
  },
];

/**
 * OAS 3.1 `webhooks`: what a store's endpoint receives for each event type, the body built around
 * the payload schemas the outbox writer validates every event against (EVENT_PAYLOADS).
 */
function webhooksSection(): oas31.PathsObject {
  const section: oas31.PathsObject = {};
  for (const type of Object.keys(EVENT_PAYLOADS).sort() as TEventType[]) {
    const schema = z.toJSONSchema(eventEnvelope(type), {
      target: 'draft-2020-12',
      io: 'output',
      unrepresentable: 'any',
    });
    delete schema.$schema;
    section[type] = {
      post: {
        operationId: `event-${type.replace('.', '-')}`,
        summary: `The ${type} event`,
        description:
          type === 'webhook.test'
            ? 'Sent only by the test operation.'
            : `Sent to every enabled endpoint of the store that subscribes to ${type}.`,
        security: [],
        parameters: SIGNATURE_PARAMETERS,
        requestBody: { required: true, content: { 'application/json': { schema: schema as oas31.SchemaObject } } },
        responses: { '200': { description: 'Any 2xx acknowledges the event; anything else is retried with backoff' } },
      },
    };
  }
  return section;
}

/**
 * The procedures as the generator reads them, a storeAccess procedure's dashboard route among
 * them: its procedure again, with the merchant route's schemas and summary, at the dashboard
 * path, under the dashboard's tags and the operationId `<namespace>-dashboard<Name>`
 * (`orders-dashboardGet` for `orders.get`: the ids these routes had as procedures of their own).
 * The generator reads only `_def` (meta, inputs, output, type) of each procedure in the record.
 */
function documentedProcedures(table: RouteTable): AnyRouter {
  const procedures: Record<string, AnyProcedure> = {};
  for (const entry of table.procedures) {
    if (entry.credential !== 'session') {
      procedures[entry.name] = entry.procedure!;
      continue;
    }
    const def = entry.procedure!._def as unknown as { meta: SvcMeta };
    const split = entry.name.lastIndexOf('.');
    const procedure = entry.name.slice(split + 1);
    const name = `${entry.name.slice(0, split)}.dashboard${procedure[0]!.toUpperCase()}${procedure.slice(1)}`;
    if (table.procedure(name)) throw new Error(`${entry.name}: its dashboard route's operationId is ${name}'s`);
    const openapi = {
      ...def.meta.openapi!,
      path: entry.path.slice(API_BASE_PATH.length) as `/${string}`,
      tags: def.meta.dashboard!.tags,
    };
    procedures[name] = { _def: { ...def, meta: { ...def.meta, openapi } } } as unknown as AnyProcedure;
  }
  return { _def: { procedures } } as unknown as AnyRouter;
}

export function buildOpenApiDocument(
  router: AnyRouter,
  plainRoutes: readonly PlainRouteDeclaration[] = PLAIN_ROUTES,
  version = '1.0.0',
): oas31.OpenAPIObject {
  const table = routeTable(router, plainRoutes);
  const document: oas31.OpenAPIObject = generateOpenApiDocument(documentedProcedures(table), {
    title: 'svc API',
    description: 'Merchant, buyer, theme and public routes of svc. Error bodies are `{ error, code, issues? }`.',
    version,
    baseUrl: '/',
    securitySchemes: {
      bearerAuth: {
        type: 'http',
        scheme: 'bearer',
        description: 'Merchant API key (`sk_live_...` or `sk_test_...`; a test key reads and writes only test objects)',
      },
    },
    paths: plainPaths(plainRoutes),
  });

  const paths: oas31.PathsObject = {};
  for (const [path, item] of Object.entries<oas31.PathItemObject>(document.paths ?? {})) {
    const full = `${API_BASE_PATH}${path}`;
    for (const [method, operation] of Object.entries(item)) {
      if (!isOperation(operation)) continue;
      const entry = table.match(method.toUpperCase(), full);
      if (entry) describe(operation, entry);
    }
    paths[full] = item;
  }
  // The document itself (http/docs.ts serves it; it is built from the document, so it is not in the route table).
  paths[`${API_BASE_PATH}/openapi.json`] = {
    get: {
      operationId: 'docs-openapi',
      summary: 'This OpenAPI document',
      tags: ['docs'],
      security: [],
      responses: {
        '200': {
          description: 'The OpenAPI 3.1 document',
          content: { 'application/json': { schema: { type: 'object', required: ['openapi', 'info', 'paths'] } } },
        },
        '400': errorResponse(400, ['validation_failed']),
        '413': errorResponse(413, ['payload_too_large']),
        '500': errorResponse(500, ['internal_error']),
      },
    },
  };
  document.paths = paths;
  document.webhooks = webhooksSection();
  document.servers = [{ url: '/' }];
  const errorSchema = z.toJSONSchema(ZErrorBody, { target: 'draft-2020-12' });
  delete errorSchema.$schema;
  const schemas: Record<string, oas31.SchemaObject | oas31.ReferenceObject> = {
    ...(document.components?.schemas ?? {}),
    Error: errorSchema as oas31.SchemaObject,
    BareRateLimitError: {
      type: 'object',
      description: 'The 429 body of routes that keep the legacy shape (the embed checkout): a message and no code',
      properties: { error: { type: 'string', enum: ['Too many requests. Please try again later.'] } },
      required: ['error'],
      additionalProperties: false,
    },
  };
  // The generator's own error components (`error.BAD_REQUEST`, ...) describe its body, not
  // ours, and nothing refers to them any more; their text also depends on generation order.
  for (const name of Object.keys(schemas)) {
    if (name.startsWith('error.')) delete schemas[name];
  }
  document.components = {
    ...document.components,
    securitySchemes: { ...(document.components?.securitySchemes ?? {}), ...COOKIE_SCHEMES },
    schemas,
  };
  return document;
}

/** A member of a path item that is an operation (the others are its summary, servers and parameters). */
function isOperation(value: unknown): value is oas31.OperationObject {
  return typeof value === 'object' && value !== null && 'responses' in value && Boolean(value.responses);
}

export function serialiseDocument(document: oas31.OpenAPIObject): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}
