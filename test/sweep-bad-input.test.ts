/**
 * Black-box bad-input sweep driven by `openapi/openapi.json` (issue 9, part 4).
 *
 * For every operation of the document (path x method) the sweep authenticates as the
 * operation needs (seller session + CSRF, a Bearer key with every scope, a customer session,
 * or nothing), fills the path with real ids of a store it owns, and sends variants made from
 * the operation's own request schema: each field of the wrong type, each required field
 * missing, an unknown field, strings and arrays past their limits (or 1 MB / 10,000 items
 * where there is no limit), numbers out of range, unknown enum values, bodies that are not
 * objects (`[]`, `42`, `null`), invalid JSON and `__proto__` keys, other content types, an
 * empty body, a body over BODY_LIMIT_BYTES (2 MiB), bad path ids (unknown, punctuation and
 * unicode, too long), bad query parameters (wrong types, negative, huge, fractions, unknown
 * enum values, repeated, 5,000 characters, unknown names) and bad Idempotency-Key headers.
 * A URL over Node's 16 KB request-line limit is answered 413 `payload_too_large` in our body.
 * Query parameters the document marks as JSON (`contentMediaType: application/json`, such as the
 * cart) get what a JSON body gets inside the JSON they carry: each unstorable string in every
 * string and key, each unreadable number literal in every number, nesting past the limit; over
 * REST and over /trpc alike, never echoed back.
 * Every request comes from a fresh RFC 5737 address (X-Forwarded-For, trusted from 127.0.0.1)
 * and the merchant per-key budget is raised, so no answer is a 429.
 *
 * Every answer must be a 4xx in our error body `{ error, code, issues? }` (a code of
 * ERROR_STATUS), JSON, with no stack, file path or SQL in it; where the variant says which
 * field is wrong, a 400 `validation_failed` naming that field. The server logs no error line.
 *
 * Routes outside the JSON procedures get their own variants (still every one of them):
 * - multipart uploads (product files, payment proof): JSON, text and empty bodies, broken
 *   multipart, a part that is not a file, a second part after the file, a file over FILE_MAX_BYTES;
 * - the gateway receiver `POST /api/payments/{gateway}/webhook` (raw bytes, any content
 *   type, signature first): unknown gateway, no or wrong signature, signed bodies that are
 *   not JSON or not a notification, a body over its 1 MiB limit (a genuine notification for
 *   an unknown order is answered 200 by design, so it is not among them);
 * - the signed file link `GET /api/orders/{orderId}/files/{fileId}`: bad expiry and signature.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { API_KEY_SCOPES, ERROR_CODES } from '@svc/schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct, importKeys } from './support/catalog.js';
import { buy, TEST_GATEWAY_SECRET } from './support/payments.js';
import {
  addStaff,
  clientIp,
  createKeyFor,
  createStoreFor,
  dashboard,
  registerSeller,
  uniqueEmail,
  type Seller,
} from './support/seller.js';
import { REPO_ROOT, startServer } from './support/server.js';
import { insertSubscriptions } from './support/subscriptions.js';

// ---------------------------------------------------------------------------------------------
// The document

interface JsonSchema {
  type?: string;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  pattern?: string;
  format?: string;
  default?: unknown;
  /** `application/json` on a string that carries JSON (a query parameter such as the cart). */
  contentMediaType?: string;
  /** The shape of the JSON such a string carries. */
  contentSchema?: JsonSchema;
}

interface Parameter {
  in: 'path' | 'query' | 'header';
  name: string;
  required?: boolean;
  schema: JsonSchema;
}

interface Operation {
  operationId: string | undefined;
  method: string;
  path: string;
  key: string;
  parameters: Parameter[];
  security: string | null;
  jsonBody: JsonSchema | null;
  multipart: boolean;
  limited: boolean;
}

const DOCUMENT = JSON.parse(readFileSync(path.join(REPO_ROOT, 'openapi/openapi.json'), 'utf8')) as {
  paths: Record<
    string,
    Record<
      string,
      {
        operationId?: string;
        parameters?: Parameter[];
        security?: Array<Record<string, unknown>>;
        requestBody?: { content: Record<string, { schema: JsonSchema }> };
        responses: Record<string, unknown>;
      }
    >
  >;
};

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const OPERATIONS: Operation[] = Object.entries(DOCUMENT.paths).flatMap(([route, item]) =>
  Object.entries(item)
    .filter(([method]) => METHODS.includes(method))
    .map(([method, op]) => ({
      operationId: op.operationId,
      method: method.toUpperCase(),
      path: route,
      key: `${method.toUpperCase()} ${route}`,
      parameters: op.parameters ?? [],
      security: op.security?.[0] ? Object.keys(op.security[0])[0]! : null,
      jsonBody: op.requestBody?.content['application/json']?.schema ?? null,
      multipart: Boolean(op.requestBody?.content['multipart/form-data']),
      limited: Boolean(op.responses['429']),
    })),
);

/** The query parameters that carry JSON, as the document marks them, with their operation. */
const JSON_QUERY_PARAMETERS = OPERATIONS.flatMap((op) =>
  op.parameters
    .filter((p) => p.in === 'query' && p.schema.contentMediaType === 'application/json')
    .map((param) => ({ op, param })),
);

/** Routes with body rules of their own; they get their own variants below (never skipped). */
const MULTIPART_UPLOADS = [
  'POST /api/dashboard/stores/{storeId}/products/{productId}/files',
  'POST /api/dashboard/stores/{storeId}/products/{productId}/images',
  'POST /api/merchant/v1/stores/{storeId}/products/{productId}/images',
  'POST /api/dashboard/stores/{storeId}/logo',
  'POST /api/merchant/v1/stores/{storeId}/logo',
  'POST /api/orders/{orderId}/payment-proof',
];
/** A 1x1 PNG: a product image the sweep's product keeps (bad requests must leave it in place). */
const TINY_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGNgYGAAAAAEAAH2FzhVAAAAAElFTkSuQmCC',
  'base64',
);
const GATEWAY_RECEIVER = 'POST /api/payments/{gateway}/webhook';
const SIGNED_FILE_LINK = 'GET /api/orders/{orderId}/files/{fileId}';
const OWN_RULES = [...MULTIPART_UPLOADS, GATEWAY_RECEIVER, SIGNED_FILE_LINK];
/** Logging out with a valid empty body would end the session it is called with: they get a throwaway one. */
const LOGOUTS = ['POST /api/auth/logout', 'POST /api/customer/auth/logout'];

const BODY_LIMIT = 1024 * 1024;
const FILE_MAX = 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// The world the sweep owns

let server: Awaited<ReturnType<typeof startServer>>;
let seller: Seller;
let spareSession: Seller;
const ids: Record<string, string> = {};
let merchantKey = '';
/** A test-mode key (sk_test_): the test-data routes take no live key. */
let testKey = '';
let customerCookie = '';
let spareCustomerCookie = '';
let orderToken = '';
let pendingToken = '';
let buyerEmail = '';

function headersFor(op: Operation, extra: Record<string, string> = {}): Record<string, string> {
  const headers: Record<string, string> = { 'x-forwarded-for': clientIp(), accept: 'application/json', ...extra };
  const logout = LOGOUTS.includes(op.key);
  if (op.security === 'sessionCookie' || op.key === 'POST /api/auth/logout') {
    const who = logout ? spareSession : seller;
    headers.cookie = who.cookie;
    if (op.method !== 'GET') headers['x-csrf-token'] = who.csrfToken;
  } else if (op.security === 'bearerAuth') {
    headers.authorization = `Bearer ${op.path.includes('/test-data') ? testKey : merchantKey}`;
  } else if (op.security === 'customerCookie' || op.key === 'POST /api/customer/auth/logout') {
    headers.cookie = logout ? spareCustomerCookie : customerCookie;
  }
  return headers;
}

/** The real id for a path parameter of this operation. */
function pathValue(op: Operation, name: string): string {
  if (name === 'keyId') return op.path.startsWith('/api/dashboard/api-keys') ? ids.spareApiKey! : ids.licenseKey!;
  if (name === 'orderId') return op.path.includes('payment-proof') ? ids.pendingOrder! : ids.order!;
  if (name === 'gateway') return 'test';
  const value = ids[name];
  if (!value) throw new Error(`no id for path parameter ${name} of ${op.key}`);
  return value;
}

function fillPath(op: Operation, overrides: Record<string, string> = {}): string {
  return op.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(overrides[name] ?? pathValue(op, name)));
}

/** A valid body for each JSON operation: variants change one thing at a time. */
function baseBody(op: Operation): Record<string, unknown> {
  const cart = [{ productId: ids.productId!, quantity: 1 }];
  const table: Record<string, Record<string, unknown>> = {
    'POST /api/auth/register': { email: uniqueEmail('sweep'), password: 'a-long-password-1' },
    'POST /api/auth/login': { email: seller.email, password: 'wrong-password-123' },
    'POST /api/auth/forgot': { email: seller.email },
    'POST /api/auth/reset': { token: 'x'.repeat(40), password: 'a-long-password-1' },
    'POST /api/dashboard/stores': { name: 'Other', subdomain: `sweep-${randomBytes(4).toString('hex')}` },
    'PATCH /api/dashboard/stores/{storeId}': { name: 'Shop' },
    'POST /api/dashboard/stores/{storeId}/members': { email: uniqueEmail('nobody'), permissions: ['viewOrders'] },
    'PATCH /api/dashboard/stores/{storeId}/members/{memberId}': { permissions: ['viewOrders'] },
    'POST /api/dashboard/api-keys': { name: 'k', scopes: ['order:read'], storeIds: [ids.storeId!] },
    'PATCH /api/merchant/v1/stores/{storeId}/orders/{orderId}': { note: 'n' },
    'PATCH /api/merchant/v1/stores/{storeId}': { name: 'Shop' },
    'PATCH /api/dashboard/stores/{storeId}/orders/{orderId}': { note: 'n' },
    'POST /api/dashboard/stores/{storeId}/orders/{orderId}/mark-delivered': { content: 'c' },
    'POST /api/customer/auth/start': { storeId: ids.storeId!, email: buyerEmail },
    'POST /api/customer/auth/verify': { storeId: ids.storeId!, email: buyerEmail, code: '000000' },
    'POST /api/dashboard/stores/{storeId}/products': { name: 'P', price: 1, deliveryMethods: ['manualDelivery'] },
    'PATCH /api/dashboard/stores/{storeId}/products/{productId}': { name: 'P' },
    'POST /api/dashboard/stores/{storeId}/products/{productId}/license-keys': { keys: ['K'] },
    'POST /api/v1/checkout': { shopId: ids.storeId!, cart, email: buyerEmail },
    'POST /api/embed/checkout': { shopId: ids.storeId!, cart, email: buyerEmail },
    'POST /api/orders/create': { storeId: ids.storeId!, cart, email: buyerEmail },
    'POST /api/checkout/enter': { orderId: ids.pendingOrder!, token: pendingToken },
    'POST /api/checkout/start': { orderId: ids.pendingOrder!, token: pendingToken, paymentMethod: 'manual' },
    'POST /api/dashboard/stores/{storeId}/coupons': { code: 'SWEEP', discountType: 'percent', discountValue: 10 },
    'PATCH /api/dashboard/stores/{storeId}/coupons/{couponId}': { active: true },
    'POST /api/coupons/validate': { storeId: ids.storeId!, code: 'SAVE10' },
    'POST /api/dashboard/stores/{storeId}/blacklist': { kind: 'email', value: 'x@example.test' },
    'POST /api/checkout/client-gate': { storeId: ids.storeId! },
    'POST /api/feedback/create': { orderId: ids.order!, token: orderToken, rating: 5, text: 'ok' },
    'POST /api/track': { storeId: ids.storeId!, type: 'page_view' },
    'POST /api/orders/{orderId}/try-assign-keys': { token: orderToken },
    'POST /api/tickets': { orderId: ids.order!, token: orderToken, subject: 's', message: 'm' },
    'POST /api/tickets/{ticketId}/messages': { token: orderToken, message: 'm' },
    'PATCH /api/dashboard/stores/{storeId}/tickets/{ticketId}': { status: 'open' },
    'POST /api/dashboard/stores/{storeId}/tickets/{ticketId}/messages': { message: 'm' },
    'POST /api/merchant/v1/stores/{storeId}/webhooks': {
      name: 'w',
      url: 'http://127.0.0.1:9/h',
      events: ['order.created'],
    },
    'PATCH /api/merchant/v1/stores/{storeId}/webhooks/{webhookId}': { name: 'w' },
    'POST /api/merchant/v1/stores/{storeId}/webhooks/{webhookId}/replay': {
      from: '2020-01-01T00:00:00Z',
      to: '2020-01-02T00:00:00Z',
    },
    'POST /api/dashboard/stores/{storeId}/webhooks': {
      name: 'w',
      url: 'http://127.0.0.1:9/h',
      events: ['order.created'],
    },
    'PATCH /api/dashboard/stores/{storeId}/webhooks/{webhookId}': { name: 'w' },
    'POST /api/dashboard/stores/{storeId}/webhooks/{webhookId}/replay': {
      from: '2020-01-01T00:00:00Z',
      to: '2020-01-02T00:00:00Z',
    },
    'POST /api/dashboard/stores/{storeId}/webhooks/{webhookId}/resend': { eventId: ids.eventId! },
  };
  return structuredClone(table[op.key] ?? (generated(op.jsonBody ?? {}) as Record<string, unknown>));
}

/** A value the schema accepts, for operations the table above does not know yet. */
function generated(schema: JsonSchema): unknown {
  const s = schema.anyOf?.find((option) => option.type !== 'null') ?? schema;
  if (s.enum) return s.enum[0];
  switch (s.type) {
    case 'object':
      return Object.fromEntries((s.required ?? []).map((name) => [name, generated(s.properties?.[name] ?? {})]));
    case 'array':
      return Array.from({ length: s.minItems ?? 0 }, () => generated(s.items ?? {}));
    case 'integer':
    case 'number':
      return Math.max(s.minimum ?? 1, 1);
    case 'boolean':
      return true;
    default:
      if (s.format === 'date-time') return '2020-01-01T00:00:00Z';
      if (s.pattern === '^[a-z0-9]+$') return 'a'.repeat(Math.max(s.minLength ?? 1, 24));
      return 'a'.repeat(Math.max(s.minLength ?? 1, 1));
  }
}

// ---------------------------------------------------------------------------------------------
// Variants

interface Variant {
  op: Operation;
  label: string;
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string | Buffer | FormData;
  /** Status the variant must get; undefined: any 4xx. */
  status?: number;
  /** Code the answer must carry; undefined: any of ours. */
  codes?: string[];
  /** A field the issues must name (exactly, or as a prefix of a nested path). */
  field?: string;
  /** Refused before any procedure runs (parser, content type, body shape): safe on DELETE too. */
  transport?: boolean;
  /** A value the answer must not give back (in any string or field name of its body). */
  echo?: string;
}

/** Stands in a body for a number literal JSON.stringify cannot write (`1e309`, `-0`). */
const RAW_NUMBER = '__raw_number__';

/**
 * Text PostgreSQL cannot store: sent in every string the sweep reaches (JSON bodies and the JSON
 * inside query parameters). It once reached the database: a 500 with the SQL logged.
 */
const UNSTORABLE_STRINGS: Array<[string, string]> = [
  ['a NUL character', 'a\u0000b'],
  ['a lone surrogate', 'a\uD800b'],
  ['a lone low surrogate', 'a\uDC00b'],
];

/** Number literals that parse to what no field takes (Infinity, -0, a float off by an ulp). */
const UNREADABLE_NUMBERS = ['1e309', '-0', '0.30000000000000004'];

const TYPE_SAMPLES: Record<string, unknown> = {
  string: 'wrong',
  number: 12345.5,
  object: { nested: true },
  array: ['x'],
  null: null,
  boolean: true,
};

function acceptedTypes(schema: JsonSchema): Set<string> {
  const options = schema.anyOf ?? [schema];
  const types = new Set<string>();
  for (const option of options) {
    if (option.type === 'integer') types.add('number');
    if (option.type) types.add(option.type);
    if (!option.type) for (const t of Object.keys(TYPE_SAMPLES)) types.add(t);
    // A record (free keys) takes an empty-ish object; an enum string takes no other string.
  }
  return types;
}

function setAt(
  target: Record<string, unknown>,
  pathParts: Array<string | number>,
  value: unknown,
  remove = false,
): void {
  let cursor: Record<string | number, unknown> = target;
  for (const part of pathParts.slice(0, -1)) cursor = cursor[part] as Record<string | number, unknown>;
  const last = pathParts[pathParts.length - 1]!;
  if (remove) delete cursor[last];
  else cursor[last] = value;
}

/** Each field of the schema (nested objects and the first element of arrays of objects), with the base's value. */
function fieldsOf(
  schema: JsonSchema,
  base: unknown,
  prefix: Array<string | number> = [],
): Array<{ path: Array<string | number>; schema: JsonSchema; required: boolean }> {
  const s = schema.anyOf?.find((option) => option.type === 'object' || option.type === 'array') ?? schema;
  const out: Array<{ path: Array<string | number>; schema: JsonSchema; required: boolean }> = [];
  if (s.type !== 'object' || !s.properties) return out;
  for (const [name, child] of Object.entries(s.properties)) {
    const here = [...prefix, name];
    out.push({ path: here, schema: child, required: (s.required ?? []).includes(name) });
    const value = (base as Record<string, unknown> | undefined)?.[name];
    if (child.type === 'object' && child.properties && value && typeof value === 'object')
      out.push(...fieldsOf(child, value, here));
    if (child.type === 'array' && child.items?.type === 'object' && Array.isArray(value) && value.length > 0) {
      out.push(...fieldsOf(child.items, value[0], [...here, 0]));
    }
  }
  return out;
}

function itemFor(schema: JsonSchema, current: unknown): unknown {
  if (Array.isArray(current) && current.length > 0) return current[0];
  return generated(schema.items ?? {});
}

/** The base body as JSON text with one more key first (a key JSON.stringify would not write). */
function withLeadingKey(base: Record<string, unknown>, member: string): string {
  const rest = JSON.stringify(base).slice(1);
  return `{${member}${rest === '}' ? '' : ','}${rest}`;
}

function bodyVariants(op: Operation, url: string): Variant[] {
  const out: Variant[] = [];
  const schema = op.jsonBody;
  const base = schema ? baseBody(op) : {};
  const json = (label: string, body: unknown, expect: Partial<Variant> = {}): Variant => ({
    op,
    label,
    url,
    method: op.method,
    headers: headersFor(op, { 'content-type': 'application/json' }),
    body: JSON.stringify(body),
    ...expect,
  });
  const invalid = (field: string) => ({ status: 400, codes: ['validation_failed'], field });

  if (schema) {
    for (const field of fieldsOf(schema, base)) {
      const name = field.path.join('.');
      const accepted = acceptedTypes(field.schema);
      for (const [type, sample] of Object.entries(TYPE_SAMPLES)) {
        if (accepted.has(type)) continue;
        const body = structuredClone(base);
        setAt(body, field.path, sample);
        out.push(json(`${name}: ${type} instead of ${[...accepted].join('|')}`, body, invalid(name)));
      }
      if (field.required) {
        const body = structuredClone(base);
        setAt(body, field.path, undefined, true);
        out.push(json(`${name}: missing`, body, invalid(name)));
      }
      const s = field.schema.anyOf?.find((option) => option.type !== 'null') ?? field.schema;
      if (s.type === 'string' && !s.enum) {
        const long = s.maxLength !== undefined ? 'x'.repeat(s.maxLength + 1) : 'x'.repeat(1_000_000);
        const body = structuredClone(base);
        setAt(body, field.path, long);
        out.push(json(`${name}: ${long.length} characters (max ${s.maxLength ?? 'none'})`, body, invalid(name)));
        if ((s.minLength ?? 0) > 0) {
          const short = structuredClone(base);
          setAt(short, field.path, 'x'.repeat(s.minLength! - 1));
          out.push(json(`${name}: shorter than ${s.minLength}`, short, invalid(name)));
        }
      }
      if (s.type === 'string' && s.enum) {
        const body = structuredClone(base);
        setAt(body, field.path, 'not_a_known_value');
        out.push(json(`${name}: unknown enum value`, body, invalid(name)));
      }
      if (s.type === 'string') {
        // Text PostgreSQL cannot store: it once reached the database (a 500 with the SQL logged).
        for (const [label, value] of UNSTORABLE_STRINGS) {
          const body = structuredClone(base);
          setAt(body, field.path, value);
          out.push(json(`${name}: ${label}`, body, invalid(name)));
        }
      }
      if (s.type === 'integer' || s.type === 'number') {
        // Numbers JSON.stringify cannot write: the literal goes into the text.
        for (const literal of UNREADABLE_NUMBERS) {
          const body = structuredClone(base);
          setAt(body, field.path, RAW_NUMBER);
          out.push({
            ...json(`${name}: ${literal}`, body, invalid(name)),
            body: JSON.stringify(body).replace(`"${RAW_NUMBER}"`, literal),
          });
        }
      }
      if (s.type === 'integer' || s.type === 'number') {
        for (const [label, value] of [
          ['negative', -1],
          ['huge', 1e300],
          ...(s.type === 'integer' ? [['fraction', 1.5]] : []),
          ...(s.maximum !== undefined ? [['over maximum', s.maximum + 1]] : []),
        ] as Array<[string, number]>) {
          if (
            s.minimum !== undefined &&
            value >= s.minimum &&
            (s.maximum === undefined || value <= s.maximum) &&
            !(s.type === 'integer' && !Number.isInteger(value))
          )
            continue;
          const body = structuredClone(base);
          setAt(body, field.path, value);
          out.push(json(`${name}: ${label} number`, body, invalid(name)));
        }
      }
      if (s.type === 'array') {
        const current = field.path.reduce<unknown>(
          (value, part) => (value as Record<string | number, unknown> | undefined)?.[part],
          base,
        );
        const item = itemFor(s, current);
        const counts = new Set<number>();
        if (s.maxItems !== undefined) counts.add(s.maxItems + 1);
        if (s.maxItems === undefined || s.maxItems < 10_000) counts.add(10_000);
        for (const count of counts) {
          const body = structuredClone(base);
          setAt(
            body,
            field.path,
            Array.from({ length: count }, () => item),
          );
          out.push(json(`${name}: ${count} items (max ${s.maxItems ?? 'none'})`, body, invalid(name)));
        }
        if ((s.minItems ?? 0) > 0) {
          const body = structuredClone(base);
          setAt(body, field.path, []);
          out.push(json(`${name}: empty array (min ${s.minItems})`, body, invalid(name)));
        }
      }
    }
    // An empty body sent as JSON is not `{}` (it once counted as one).
    out.push({
      op,
      label: 'empty body',
      url,
      method: op.method,
      headers: headersFor(op, { 'content-type': 'application/json' }),
      body: '',
      status: 400,
      codes: ['validation_failed'],
    });
    if ((schema.required ?? []).length > 0)
      out.push(json('empty object', {}, { status: 400, codes: ['validation_failed'] }));
  }
  // Refused before parsing into objects (nesting 10,000 deep once overflowed the adapter's stack: a 500 everywhere).
  for (const [label, member] of [
    ['nested 10,000 deep', `"deep":${'['.repeat(10_000)}${']'.repeat(10_000)}`],
    ['an array of 100,000 elements', `"big":[${Array.from({ length: 100_000 }, () => '0').join(',')}]`],
  ]) {
    out.push({
      op,
      label: label!,
      url,
      method: op.method,
      headers: headersFor(op, { 'content-type': 'application/json' }),
      body: withLeadingKey(base, member!),
      status: 400,
      codes: ['validation_failed'],
      transport: true,
    });
  }
  out.push(json('unknown field', { ...base, unexpectedField: 1 }, invalid('unexpectedField')));
  for (const [label, raw] of [
    ['array body', '[]'],
    ['number body', '42'],
    ['null body', 'null'],
  ]) {
    // A body that is not an object: it cannot be any route's input (finding: it used to be dropped).
    out.push({
      op,
      label: label!,
      url,
      method: op.method,
      headers: headersFor(op, { 'content-type': 'application/json' }),
      body: raw,
      status: 400,
      codes: ['validation_failed'],
      field: '',
      transport: true,
    });
  }
  for (const [label, raw] of [
    ['invalid JSON', '{"a": tru'],
    ['JSON with __proto__', withLeadingKey(base, '"__proto__":{"admin":true}')],
  ]) {
    out.push({
      op,
      label: label!,
      url,
      method: op.method,
      headers: headersFor(op, { 'content-type': 'application/json' }),
      body: raw,
      status: 400,
      codes: ['invalid_json'],
      transport: true,
    });
  }
  out.push({
    op,
    label: 'text/plain body',
    url,
    method: op.method,
    headers: headersFor(op, { 'content-type': 'text/plain' }),
    body: JSON.stringify(base),
    status: 415,
    codes: ['unsupported_media_type'],
    transport: true,
  });
  out.push({
    op,
    label: 'form body',
    url,
    method: op.method,
    headers: headersFor(op, { 'content-type': 'application/x-www-form-urlencoded' }),
    body: 'a=b&c=d',
    status: 415,
    codes: ['unsupported_media_type'],
    transport: true,
  });
  out.push({
    op,
    label: 'body over the limit (2 MiB)',
    url,
    method: op.method,
    headers: headersFor(op, { 'content-type': 'application/json' }),
    body: JSON.stringify({ ...base, pad: 'x'.repeat(2 * BODY_LIMIT) }),
    status: 413,
    codes: ['payload_too_large'],
    transport: true,
  });
  return out;
}

const BAD_PATH_IDS: Array<[string, string]> = [
  ['unknown id', 'zzzzzzzzzzzzzzzzzzzzzzzz'],
  ['punctuation and unicode', "ünï'; drop table--"],
];

function pathVariants(op: Operation): Variant[] {
  const out: Variant[] = [];
  const hasBody = op.method !== 'GET' && op.method !== 'DELETE';
  const body = op.jsonBody ? JSON.stringify(baseBody(op)) : undefined;
  for (const param of op.parameters.filter((p) => p.in === 'path')) {
    const bad: Array<[string, string]> = [...BAD_PATH_IDS];
    bad.push(
      param.schema.maxLength !== undefined
        ? [`past maxLength ${param.schema.maxLength}`, 'a'.repeat(param.schema.maxLength + 1)]
        : ['300 characters', 'a'.repeat(300)],
    );
    for (const [label, value] of bad) {
      out.push({
        op,
        label: `path ${param.name}: ${label}`,
        url: fillPath(op, { [param.name]: value }),
        method: op.method,
        headers: headersFor(op, hasBody && body ? { 'content-type': 'application/json' } : {}),
        body: hasBody ? body : undefined,
      });
    }
    // Not percent-encoded UTF-8 (the router's own FST_ERR_BAD_URL body once answered it) and an encoded NUL.
    for (const raw of ['%ff', '%00', '%ED%A0%80']) {
      out.push({
        op,
        label: `path ${param.name}: ${raw}`,
        url: fillPath(op).replace(encodeURIComponent(pathValue(op, param.name)), raw),
        method: op.method,
        headers: headersFor(op, hasBody && body ? { 'content-type': 'application/json' } : {}),
        body: hasBody ? body : undefined,
        status: 400,
        codes: ['validation_failed'],
      });
    }
  }
  return out;
}

const isJson = (param: Parameter) => param.schema.contentMediaType === 'application/json';

/** As generated(), with one item in every array and every property: a leaf wherever the schema has one. */
function filled(schema: JsonSchema): unknown {
  const s = schema.anyOf?.find((option) => option.type !== 'null') ?? schema;
  if (s.type === 'array') return Array.from({ length: Math.max(s.minItems ?? 0, 1) }, () => filled(s.items ?? {}));
  if (s.type === 'object')
    return Object.fromEntries(Object.entries(s.properties ?? {}).map(([name, child]) => [name, filled(child)]));
  return generated(s);
}

/** A valid value of a query parameter that carries JSON: the store's own cart, else one its content schema takes. */
function jsonQueryBase(param: Parameter): unknown {
  if (param.name === 'cart') return [{ productId: ids.productId!, quantity: 1 }];
  return filled(param.schema.contentSchema ?? {});
}

/** A query string every variant starts from: the required parameters, valid. */
function validQuery(op: Operation): Record<string, string> {
  const valid: Record<string, string> = {};
  for (const p of op.parameters.filter((q) => q.in === 'query' && q.required))
    valid[p.name] = isJson(p) ? JSON.stringify(jsonQueryBase(p)) : p.name === 'storeId' ? ids.storeId! : 'x';
  if (op.key.startsWith('GET /api/orders/{orderId}/') || op.key === 'GET /api/tickets/{ticketId}')
    valid.token = orderToken;
  return valid;
}

interface JsonCase {
  label: string;
  /** The parameter's value: JSON text. */
  text: string;
  /** Where the answer must say the fault is. */
  field: string;
  echo?: string;
}

/**
 * The JSON a parameter carries with one thing wrong, in each place it can be: each unstorable
 * string in every string and as a field name of every object, each unreadable number literal in
 * every number, and nesting past the limit.
 */
function jsonQueryCases(param: Parameter): JsonCase[] {
  const base = jsonQueryBase(param);
  const out: JsonCase[] = [];
  const at = (where: Array<string | number>, value: unknown): unknown => {
    if (where.length === 0) return value;
    const copy = structuredClone(base) as Record<string, unknown>;
    setAt(copy, where, value);
    return copy;
  };
  const visit = (value: unknown, where: Array<string | number>) => {
    const name = [param.name, ...where].join('.');
    if (typeof value === 'string') {
      for (const [label, bad] of UNSTORABLE_STRINGS)
        out.push({ label: `${name}: ${label}`, text: JSON.stringify(at(where, bad)), field: name, echo: bad });
    } else if (typeof value === 'number') {
      for (const literal of UNREADABLE_NUMBERS)
        out.push({
          label: `${name}: ${literal}`,
          text: JSON.stringify(at(where, RAW_NUMBER)).replace(`"${RAW_NUMBER}"`, literal),
          field: name,
        });
    } else if (Array.isArray(value)) {
      value.forEach((item, i) => visit(item, [...where, i]));
    } else if (value !== null && typeof value === 'object') {
      for (const [label, bad] of UNSTORABLE_STRINGS)
        out.push({
          label: `${name}: ${label} in a field name`,
          text: JSON.stringify(at(where, { [bad]: 1, ...value })),
          field: name,
          echo: bad,
        });
      for (const [key, child] of Object.entries(value)) visit(child, [...where, key]);
    }
  };
  visit(base, []);
  out.push({ label: `${param.name}: nested 40 deep`, text: `${'['.repeat(40)}${']'.repeat(40)}`, field: param.name });
  return out;
}

function queryVariants(op: Operation, url: string): Variant[] {
  const out: Variant[] = [];
  const query = op.parameters.filter((p) => p.in === 'query');
  const valid = validQuery(op);
  const withQuery = (params: Record<string, string | string[]>) => {
    const search = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) for (const one of Array.isArray(v) ? v : [v]) search.append(k, one);
    return `${url}?${search.toString()}`;
  };
  const send = (label: string, params: Record<string, string | string[]>, field?: string): Variant => ({
    op,
    label,
    url: withQuery(params),
    method: op.method,
    headers: headersFor(op),
    status: 400,
    codes: ['validation_failed'],
    field,
  });
  for (const p of query) {
    const s = p.schema;
    const values: Array<[string, string | string[]]> = [
      ['repeated', ['1', '2']],
      ['5,000 characters', 'x'.repeat(5_000)],
    ];
    if (s.type === 'integer' || s.type === 'number') {
      values.push(
        ['not a number', 'abc'],
        ['negative', '-1'],
        ['zero', '0'],
        ['fraction', '1.5'],
        ['huge', '99999999999999999999'],
        ['exponent', '1e3'],
        ['hex', '0x10'],
      );
    }
    if (s.enum) values.push(['unknown enum value', 'not_a_status']);
    if (s.format === 'date-time') values.push(['not a timestamp', 'yesterday']);
    if (s.maxLength !== undefined) values.push([`past maxLength ${s.maxLength}`, 'x'.repeat(s.maxLength + 1)]);
    if ((s.minLength ?? 0) > 1) values.push([`shorter than ${s.minLength}`, 'x']);
    // An empty value (`?limit=`) counts as absent in the REST adapter; not swept.
    for (const [label, value] of values)
      out.push(send(`query ${p.name}: ${label}`, { ...valid, [p.name]: value }, p.name));
    if (p.required) {
      const without = { ...valid };
      delete without[p.name];
      out.push(send(`query ${p.name}: missing`, without, p.name));
    }
  }
  if (op.key === 'GET /api/v1/cart') {
    for (const [label, cart] of [
      ['cart not JSON', '[{'],
      ['cart an object', '{"a":1}'],
      ['cart line with a string quantity', JSON.stringify([{ productId: ids.productId, quantity: '1' }])],
      ['cart of 10,000 lines', JSON.stringify(Array.from({ length: 10_000 }, () => ({ productId: 'p', quantity: 1 })))],
    ]) {
      out.push({
        ...send(`query ${label}`, { ...valid, cart: cart! }),
        codes: ['validation_failed'],
        field: undefined,
      });
    }
  }
  for (const p of query.filter(isJson)) {
    for (const c of jsonQueryCases(p))
      out.push({ ...send(`query ${c.label}`, { ...valid, [p.name]: c.text }, c.field), echo: c.echo });
  }
  if (op.method === 'GET')
    out.push(send('unknown query parameter', { ...valid, unexpectedParam: '1' }, 'unexpectedParam'));
  for (const p of query) {
    for (const raw of ['%ff', '%00', '%ED%A0%80']) {
      const search = new URLSearchParams({ ...valid });
      search.delete(p.name);
      const rest = search.toString();
      out.push({
        op,
        label: `query ${p.name}: ${raw}`,
        url: `${url}?${rest ? `${rest}&` : ''}${p.name}=${raw}`,
        method: op.method,
        headers: headersFor(op),
        status: 400,
        codes: ['validation_failed'],
      });
    }
  }
  return out;
}

function headerVariants(op: Operation, url: string): Variant[] {
  const body = op.jsonBody ? baseBody(op) : undefined;
  return op.parameters
    .filter((p) => p.in === 'header')
    .flatMap((p) => {
      // X-CSRF-Token is a credential: a wrong one is 403 csrf_failed where the route requires it
      // (where it is optional, a buyer's own token already opens the order and it is not read).
      const credential = p.name.toLowerCase() === 'x-csrf-token';
      if (credential && !p.required) return [];
      return [
        ['300 characters', 'k'.repeat(300)],
        ['empty', ''],
        ['non-ASCII (latin-1)', 'schl\u00fcssel'],
      ].map(([label, value]) => ({
        op,
        label: `header ${p.name}: ${label}`,
        url,
        method: op.method,
        headers: headersFor(op, {
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          [p.name]: value!,
        }),
        body: body === undefined ? undefined : JSON.stringify(body),
        ...(credential
          ? { status: 403, codes: ['csrf_failed'] }
          : { status: 400, codes: ['validation_failed'], field: p.name }),
      }));
    });
}

function multipartVariants(op: Operation, url: string): Variant[] {
  const out: Variant[] = [];
  const h = (extra: Record<string, string> = {}) => headersFor(op, extra);
  const form = (parts: Array<[string, Blob | string, string?]>) => {
    const f = new FormData();
    for (const [name, value, filename] of parts) {
      if (typeof value === 'string') f.append(name, value);
      else f.append(name, value, filename);
    }
    return f;
  };
  out.push({
    op,
    label: 'JSON body',
    url,
    method: 'POST',
    headers: h({ 'content-type': 'application/json' }),
    body: '{"file":"x"}',
    status: 415,
    codes: ['unsupported_media_type'],
  });
  out.push({
    op,
    label: 'text/plain body',
    url,
    method: 'POST',
    headers: h({ 'content-type': 'text/plain' }),
    body: 'hello',
    status: 415,
    codes: ['unsupported_media_type'],
  });
  out.push({ op, label: 'no body', url, method: 'POST', headers: h(), status: 415, codes: ['unsupported_media_type'] });
  out.push({
    op,
    label: 'broken multipart',
    url,
    method: 'POST',
    headers: h({ 'content-type': 'multipart/form-data; boundary=zzz' }),
    body: '--zzz\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nunterminated',
  });
  out.push({
    op,
    label: 'multipart without a boundary',
    url,
    method: 'POST',
    headers: h({ 'content-type': 'multipart/form-data' }),
    body: 'whatever',
  });
  out.push({
    op,
    label: 'multipart with a field, no file',
    url,
    method: 'POST',
    headers: h(),
    body: form([['note', 'hello']]),
  });
  out.push({
    op,
    label: 'multipart with an empty body',
    url,
    method: 'POST',
    headers: h({ 'content-type': 'multipart/form-data; boundary=zzz' }),
    body: '--zzz--\r\n',
  });
  const small = () => new Blob([Buffer.from('file contents')], { type: 'text/plain' });
  out.push({
    op,
    label: 'multipart with two file parts',
    url,
    method: 'POST',
    headers: h(),
    body: form([
      ['file', small(), 'a.txt'],
      ['file', small(), 'b.txt'],
    ]),
    status: 400,
    codes: ['validation_failed'],
  });
  out.push({
    op,
    label: 'multipart with a file, then a field',
    url,
    method: 'POST',
    headers: h(),
    body: form([
      ['file', small(), 'a.txt'],
      ['note', 'hello'],
    ]),
    status: 400,
    codes: ['validation_failed'],
  });
  out.push({
    op,
    label: 'multipart file over FILE_MAX_BYTES',
    url,
    method: 'POST',
    headers: h(),
    body: form([['file', new Blob([Buffer.alloc(2 * FILE_MAX, 1)], { type: 'application/pdf' }), 'big.pdf']]),
    status: 413,
    codes: ['payload_too_large'],
  });
  return out;
}

function gatewayVariants(op: Operation): Variant[] {
  const url = fillPath(op);
  const sign = (body: string) => {
    const t = Math.floor(Date.now() / 1000);
    return `t=${t},v1=${createHmac('sha256', TEST_GATEWAY_SECRET).update(`${t}.${body}`).digest('hex')}`;
  };
  const v = (
    label: string,
    body: string | undefined,
    headers: Record<string, string>,
    expect: Partial<Variant> = {},
    target = url,
  ): Variant => ({
    op,
    label,
    url: target,
    method: 'POST',
    headers: { 'x-forwarded-for': clientIp(), ...headers },
    body,
    ...expect,
  });
  const signedBodies: Array<[string, string]> = [
    ['signed invalid JSON', '{"id": tru'],
    ['signed array', '[]'],
    ['signed empty object', '{}'],
    [
      'signed amount as a string',
      JSON.stringify({ id: 'tevt_1', type: 'payment.succeeded', orderId: ids.order, amount: '10', currency: 'USD' }),
    ],
    [
      'signed unknown type',
      JSON.stringify({ id: 'tevt_2', type: 'payment.exploded', orderId: ids.order, amount: 10, currency: 'USD' }),
    ],
    [
      'signed 1 MB id',
      JSON.stringify({
        id: 'x'.repeat(1_000_000),
        type: 'payment.succeeded',
        orderId: ids.order,
        amount: 10,
        currency: 'USD',
      }),
    ],
    [
      'signed negative amount',
      JSON.stringify({
        id: 'tevt_4',
        type: 'payment.succeeded',
        orderId: ids.pendingOrder,
        amount: -5,
        currency: 'USD',
      }),
    ],
    [
      'signed huge amount',
      JSON.stringify({
        id: 'tevt_5',
        type: 'payment.succeeded',
        orderId: ids.pendingOrder,
        amount: 1e300,
        currency: 'USD',
      }),
    ],
    [
      'signed id with a NUL',
      JSON.stringify({
        id: 'tevt\u00006',
        type: 'payment.succeeded',
        orderId: ids.pendingOrder,
        amount: 10,
        currency: 'USD',
      }),
    ],
    [
      'signed id with a lone surrogate',
      JSON.stringify({
        id: 'tevt\uD8007',
        type: 'payment.succeeded',
        orderId: ids.pendingOrder,
        amount: 10,
        currency: 'USD',
      }),
    ],
    // Not 10.00: read exactly, it is a fraction of a cent short.
    [
      'signed amount 9.999999999999998',
      JSON.stringify({
        id: 'tevt_8',
        type: 'payment.succeeded',
        orderId: ids.pendingOrder,
        amount: 9.999999999999998,
        currency: 'USD',
      }),
    ],
    [
      'signed amount 1e309',
      `{"id":"tevt_9","type":"payment.succeeded","orderId":"${ids.pendingOrder}","amount":1e309,"currency":"USD"}`,
    ],
    ['signed body nested 10,000 deep', `{"id":"tevt_10","deep":${'['.repeat(10_000)}${']'.repeat(10_000)}}`],
  ];
  return [
    v(
      'unknown gateway',
      '{}',
      { 'content-type': 'application/json' },
      { status: 404, codes: ['not_found'] },
      op.path.replace('{gateway}', 'nope'),
    ),
    v('no signature', '{}', { 'content-type': 'application/json' }, { status: 400, codes: ['signature_invalid'] }),
    v(
      'wrong signature',
      '{}',
      { 'content-type': 'application/json', 'x-test-signature': 't=1,v1=00' },
      { status: 400, codes: ['signature_invalid'] },
    ),
    v(
      'garbage signature',
      '{}',
      { 'content-type': 'application/json', 'x-test-signature': 'x'.repeat(5000) },
      { status: 400, codes: ['signature_invalid'] },
    ),
    v('empty body', '', { 'x-test-signature': sign('') }),
    v('text body', 'hello', { 'content-type': 'text/plain', 'x-test-signature': sign('hello') }),
    v(
      'stripe without a signature',
      '{}',
      { 'content-type': 'application/json' },
      {},
      op.path.replace('{gateway}', 'stripe'),
    ),
    v(
      'body over the limit (2 MiB)',
      'x'.repeat(2 * BODY_LIMIT),
      { 'content-type': 'application/json' },
      { status: 413, codes: ['payload_too_large'] },
    ),
    ...signedBodies.map(([label, body]) =>
      v(label, body, { 'content-type': 'application/json', 'x-test-signature': sign(body) }),
    ),
  ];
}

function fileLinkVariants(op: Operation): Variant[] {
  const url = fillPath(op);
  const expires = String(Math.floor(Date.now() / 1000) + 3600);
  return (
    [
      ['no expiry, no signature', ''],
      ['expiry not a number', `?expires=abc&sig=${'0'.repeat(64)}`],
      ['expired', `?expires=1&sig=${'0'.repeat(64)}`],
      ['huge expiry', `?expires=${'9'.repeat(400)}&sig=${'0'.repeat(64)}`],
      ['wrong signature', `?expires=${expires}&sig=${'0'.repeat(64)}`],
      ['5,000-character signature', `?expires=${expires}&sig=${'a'.repeat(5000)}`],
      ['repeated parameters', `?expires=${expires}&expires=1&sig=a&sig=b`],
    ] as Array<[string, string]>
  ).map(([label, query]) => ({ op, label, url: `${url}${query}`, method: 'GET', headers: headersFor(op) }));
}

/** Node refuses a request line and headers over 16 KB before routing: 413 in our body. */
const MAX_REQUEST_LINE = 16 * 1024;

function variantsFor(op: Operation): Variant[] {
  return rawVariantsFor(op).map((v) =>
    v.url.length > MAX_REQUEST_LINE ? { ...v, status: 413, codes: ['payload_too_large'], field: undefined } : v,
  );
}

function rawVariantsFor(op: Operation): Variant[] {
  if (MULTIPART_UPLOADS.includes(op.key)) {
    // The proof upload authenticates with the checkout token in the query.
    const url = op.path.includes('payment-proof') ? `${fillPath(op)}?token=${pendingToken}` : fillPath(op);
    return [...multipartVariants(op, url), ...pathVariants(op)];
  }
  if (op.key === GATEWAY_RECEIVER) return gatewayVariants(op);
  if (op.key === SIGNED_FILE_LINK) return [...fileLinkVariants(op), ...pathVariants(op)];
  const url = fillPath(op);
  const out = [...pathVariants(op), ...queryVariants(op, url), ...headerVariants(op, url)];
  if (op.method !== 'GET') out.push(...bodyVariants(op, url).filter((v) => op.method !== 'DELETE' || v.transport));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Sending and checking

const ERROR_CODE_SET = new Set<string>(ERROR_CODES);
const LEAK = [
  /\bat [\w.<>]+ \(/, // stack frame
  /\bat (?:async )?\/?[\w/.-]+:\d+:\d+/,
  /(?:\/work\/|node_modules|apps\/server|\/dist\/|\.ts:\d+|\.js:\d+)/,
  /\b(?:select|insert|update|delete)\b[^"]{0,80}\b(?:from|into|set|where)\b/i,
  /\b(?:postgres|pg_|relation "|violates|syntax error at|ECONNREFUSED|TypeError|ReferenceError|ZodError|TRPCError)\b/,
];

interface Outcome {
  variant: Variant;
  status: number;
  text: string;
  problems: string[];
}

function check(variant: Variant, status: number, contentType: string, text: string): string[] {
  const problems: string[] = [];
  if (status < 400 || status > 499) problems.push(`status ${status}`);
  if (status === 429) problems.push('429 although every request came from a fresh address');
  if (variant.status !== undefined && status !== variant.status)
    problems.push(`expected ${variant.status}, got ${status}`);
  if (!/^application\/json\b/.test(contentType)) problems.push(`content-type ${contentType || '(none)'}`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    problems.push('body is not JSON');
    return problems;
  }
  const b = body as { error?: unknown; code?: unknown; issues?: unknown };
  const keys = Object.keys(b ?? {});
  if (!b || typeof b !== 'object' || Array.isArray(b)) problems.push('body is not an object');
  else {
    if (keys.some((k) => !['error', 'code', 'issues'].includes(k))) problems.push(`body keys ${keys.join(',')}`);
    if (typeof b.error !== 'string' || b.error.length === 0) problems.push('no error text');
    if (typeof b.code !== 'string' || !ERROR_CODE_SET.has(b.code)) problems.push(`code ${String(b.code)}`);
    if (variant.codes && !variant.codes.includes(String(b.code)))
      problems.push(`expected code ${variant.codes.join('|')}, got ${String(b.code)}`);
    if (b.issues !== undefined) {
      const issues = b.issues as Array<Record<string, unknown>>;
      if (
        !Array.isArray(issues) ||
        issues.some(
          (i) =>
            typeof i !== 'object' ||
            !i ||
            Object.keys(i).sort().join() !== 'message,path' ||
            typeof i.path !== 'string' ||
            typeof i.message !== 'string',
        )
      ) {
        problems.push('issues not [{ path, message }]');
      } else if (
        variant.field !== undefined &&
        !issues.some((i) => i.path === variant.field || String(i.path).startsWith(`${variant.field}.`))
      ) {
        problems.push(`issues do not name ${variant.field}: ${JSON.stringify(issues).slice(0, 200)}`);
      }
    } else if (variant.field !== undefined) problems.push(`no issues naming ${variant.field}`);
  }
  if (variant.echo !== undefined && stringsOf(body).some((s) => s.includes(variant.echo!)))
    problems.push('gives the bad input back');
  for (const pattern of LEAK) if (pattern.test(text)) problems.push(`leak ${pattern}`);
  return problems;
}

/** Every string of a JSON value, field names included. */
function stringsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsOf);
  if (value !== null && typeof value === 'object')
    return Object.entries(value).flatMap(([key, child]) => [key, ...stringsOf(child)]);
  return [];
}

async function send(variant: Variant, attempt = 1): Promise<Outcome> {
  let response: Response;
  try {
    response = await fetch(`${server.url}${variant.url}`, {
      method: variant.method,
      headers: variant.headers,
      body: variant.body as RequestInit['body'],
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    // A kept-alive socket the server had just closed (after a 413 it closes the connection):
    // one retry on a fresh one. A server that died would fail again.
    if (attempt === 1) return send(variant, 2);
    return { variant, status: 0, text: '', problems: [`no answer: ${(error as Error).message}`] };
  }
  const text = await response.text();
  return {
    variant,
    status: response.status,
    text,
    problems: check(variant, response.status, response.headers.get('content-type') ?? '', text),
  };
}

async function sweep(variants: Variant[], concurrency = 8): Promise<Outcome[]> {
  const results: Outcome[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < variants.length) {
        const variant = variants[next++]!;
        results.push(await send(variant));
      }
    }),
  );
  return results;
}

function report(outcomes: Outcome[]): string {
  return outcomes
    .filter((o) => o.problems.length > 0)
    .map(
      (o) =>
        `${o.variant.op.key} [${o.variant.label}] -> ${o.status}: ${o.problems.join('; ')} :: ${o.text.slice(0, 200)}`,
    )
    .join('\n');
}

// ---------------------------------------------------------------------------------------------
// Setup

async function ok(response: Response, status: number, what: string) {
  const text = await response.text();
  expect(response.status, `${what}: ${text}`).toBe(status);
  return text ? JSON.parse(text) : undefined;
}

async function customerSession(storeId: string, email: string): Promise<string> {
  const start = await fetch(`${server.url}/api/customer/auth/start`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp() },
    body: JSON.stringify({ storeId, email }),
  });
  await ok(start, 204, 'customer code');
  const mailbox = await (await fetch(`${server.url}/dev/mailbox.json`)).json();
  const mail = (mailbox.emails as Array<{ to: string; text: string }>).find((m) => m.to.includes(email));
  const code = /\b(\d{6})\b/.exec(mail?.text ?? '')?.[1];
  expect(code, 'a sign-in code in the mailbox').toBeDefined();
  const verify = await fetch(`${server.url}/api/customer/auth/verify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp() },
    body: JSON.stringify({ storeId, email, code }),
  });
  await ok(verify, 200, 'customer verify');
  return verify.headers
    .getSetCookie()
    .find((c) => c.startsWith('svc_customer='))!
    .split(';')[0]!;
}

async function placeOrder(email: string): Promise<{ id: string; token: string }> {
  const response = await fetch(`${server.url}/api/orders/create`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp() },
    body: JSON.stringify({ storeId: ids.storeId, cart: [{ productId: ids.productId, quantity: 1 }], email }),
  });
  const body = await ok(response, 201, 'order');
  return { id: body.order.id, token: body.checkoutToken };
}

beforeAll(async () => {
  server = await startServer({
    TEST_GATEWAY_SECRET,
    FILE_MAX_BYTES: String(FILE_MAX),
    MERCHANT_RATE_LIMIT_PER_MINUTE: '1000000',
  });
  seller = await registerSeller(server.url);
  spareSession = await registerSeller(server.url);
  const store = await createStoreFor(seller);
  ids.storeId = store.id;
  ids.subdomain = store.subdomain;
  ids.memberId = await addStaff(seller, store.id, await registerSeller(server.url), ['viewOrders']);
  merchantKey = (await createKeyFor(seller, { scopes: [...API_KEY_SCOPES], storeIds: [store.id] })).key;
  ids.spareApiKey = (await createKeyFor(seller, { scopes: ['order:read'], storeIds: [store.id] })).id;
  const product = await createProduct(seller, store.id, {
    name: 'Sweep product',
    price: 10,
    deliveryMethods: ['licenseKeys', 'downloadFiles'],
  });
  ids.productId = product.id;
  await importKeys(seller, store.id, product.id, ['SWEEP-KEY-1', 'SWEEP-KEY-2', 'SWEEP-KEY-3', 'SWEEP-KEY-4']);
  const keys = await ok(
    await dashboard(seller, 'GET', `/api/dashboard/stores/${store.id}/products/${product.id}/license-keys`),
    200,
    'keys',
  );
  ids.licenseKey = keys.keys[0].id;
  const form = new FormData();
  form.append('file', new Blob([Buffer.from('file contents')], { type: 'text/plain' }), 'goods.txt');
  const uploaded = await fetch(`${server.url}/api/dashboard/stores/${store.id}/products/${product.id}/files`, {
    method: 'POST',
    headers: { cookie: seller.cookie, 'x-csrf-token': seller.csrfToken },
    body: form,
  });
  ids.fileId = (await ok(uploaded, 201, 'file')).id;
  const picture = new FormData();
  picture.append('file', new Blob([new Uint8Array(TINY_PNG)], { type: 'image/png' }), 'picture.png');
  const pictured = await fetch(`${server.url}/api/dashboard/stores/${store.id}/products/${product.id}/images`, {
    method: 'POST',
    headers: { cookie: seller.cookie, 'x-csrf-token': seller.csrfToken },
    body: picture,
  });
  ids.imageId = (await ok(pictured, 201, 'image')).images[0].id;
  ids.couponId = (
    await ok(
      await dashboard(seller, 'POST', `/api/dashboard/stores/${store.id}/coupons`, {
        code: 'SAVE10',
        discountType: 'percent',
        discountValue: 10,
      }),
      201,
      'coupon',
    )
  ).id;
  ids.entryId = (
    await ok(
      await dashboard(seller, 'POST', `/api/dashboard/stores/${store.id}/blacklist`, {
        kind: 'email',
        value: 'blocked@example.test',
      }),
      201,
      'blacklist',
    )
  ).id;
  const hook = await ok(
    await dashboard(seller, 'POST', `/api/dashboard/stores/${store.id}/webhooks`, {
      name: 'hook',
      url: 'http://127.0.0.1:9/hook',
      events: ['product.deleted'],
    }),
    201,
    'webhook',
  );
  ids.webhookId = hook.id;
  ids.secretPrefix = hook.secretPrefix;
  ids.deliveryId = (
    await ok(
      await dashboard(seller, 'POST', `/api/dashboard/stores/${store.id}/webhooks/${ids.webhookId}/test`),
      200,
      'ping',
    )
  ).delivery.id;
  buyerEmail = uniqueEmail('buyer');
  const paid = await buy(server.url, { storeId: ids.storeId, productId: ids.productId, email: buyerEmail });
  ids.order = paid.id;
  orderToken = paid.token;
  // The paid order's key is a license with one instance (the license routes' ids).
  const sold = (await ok(await fetch(`${server.url}/api/orders/${paid.id}/keys?token=${paid.token}`), 200, 'keys'))
    .keys[0].key as string;
  const activated = await fetch(`${server.url}/api/v1/licenses/activate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp() },
    body: JSON.stringify({ productId: ids.productId, key: sold, instanceName: 'sweep' }),
  });
  const license = await ok(activated, 200, 'activation');
  ids.licenseId = license.license.id;
  ids.instanceId = license.instance.id;
  ids.eventId = (
    await ok(
      await fetch(`${server.url}/api/merchant/v1/stores/${store.id}/events?limit=1`, {
        headers: { authorization: `Bearer ${merchantKey}` },
      }),
      200,
      'events',
    )
  ).events[0].id;
  const pending = await placeOrder(buyerEmail);
  ids.pendingOrder = pending.id;
  pendingToken = pending.token;
  const started = await fetch(`${server.url}/api/checkout/start`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp() },
    body: JSON.stringify({ orderId: pending.id, token: pending.token, paymentMethod: 'manual' }),
  });
  await ok(started, 200, 'checkout start');
  const ticket = await fetch(`${server.url}/api/tickets`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp() },
    body: JSON.stringify({ orderId: paid.id, token: orderToken, subject: 'Help', message: 'Where is it?' }),
  });
  ids.ticketId = (await ok(ticket, 201, 'ticket')).id;
  // An active subscription (the subscription routes' id), written as checkout will write it.
  ids.subscriptionId = (await insertSubscriptions(server.db.url, store.id, [{ customerEmail: buyerEmail }]))[0]!;
  testKey = (await createKeyFor(seller, { scopes: [...API_KEY_SCOPES], storeIds: [store.id], mode: 'test' })).key;
  ids.jobId = (
    await ok(await dashboard(seller, 'DELETE', `/api/dashboard/stores/${store.id}/test-data`), 202, 'test data job')
  ).id;
  customerCookie = await customerSession(store.id, buyerEmail);
  spareCustomerCookie = await customerSession(store.id, uniqueEmail('spare'));
}, 120_000);

afterAll(() => server?.stop());

// ---------------------------------------------------------------------------------------------
// The sweep

describe('bad-input sweep over every operation of openapi.json', () => {
  const outcomes: Outcome[] = [];
  const errorLinesBefore = { count: 0 };

  it('covers every operation of the document', () => {
    expect(OPERATIONS.length).toBeGreaterThan(90);
    const all = OPERATIONS.map((op) => op.key);
    for (const key of OWN_RULES) expect(all, `${key} is still in the document`).toContain(key);
  });

  it('answers every bad request with a 4xx in our error body, never a 500 or a stack', async () => {
    errorLinesBefore.count = server.logs.filter((line) => line.level >= 50).length;
    const variants = OPERATIONS.flatMap(variantsFor);
    const started = Date.now();
    outcomes.push(...(await sweep(variants)));
    const perOperation = new Map<string, number>();
    for (const o of outcomes) perOperation.set(o.variant.op.key, (perOperation.get(o.variant.op.key) ?? 0) + 1);
    console.info(
      `bad-input sweep: ${outcomes.length} requests over ${perOperation.size} operations in ${Date.now() - started} ms`,
    );
    // Every operation got bad input, and the JSON ones a real body sweep.
    for (const op of OPERATIONS) {
      expect(perOperation.get(op.key) ?? 0, `${op.key} was swept`).toBeGreaterThanOrEqual(
        Object.keys(op.jsonBody?.properties ?? {}).length > 0 ? 15 : 1,
      );
    }
    expect(report(outcomes)).toBe('');
    // 6,111 requests took 160-190 s on a loaded 2-core machine (the customer subscription routes among them).
  }, 300_000);

  it('logged no error for any of them', async () => {
    expect(outcomes.length).toBeGreaterThan(0);
    await server.logsSettled();
    const errors = server.logs.filter((line) => line.level >= 50).slice(errorLinesBefore.count);
    expect(errors.map((line) => `${line.msg} ${JSON.stringify(line).slice(0, 300)}`)).toEqual([]);
  });

  it('finds the query parameters that carry JSON in the document', () => {
    expect(JSON_QUERY_PARAMETERS.map(({ op, param }) => `${op.key} ${param.name}`)).toContain('GET /api/v1/cart cart');
  });

  it('answers the same JSON over /trpc with 400 validation_failed naming the field, never echoed, no error logged', async () => {
    const errorsBefore = server.logs.filter((line) => line.level >= 50).length;
    const problems: string[] = [];
    let sent = 0;
    for (const { op, param } of JSON_QUERY_PARAMETERS) {
      expect(op.method, `${op.key} is a query`).toBe('GET');
      const procedure = op.operationId!.replaceAll('-', '.');
      const base: Record<string, string> = { ...validQuery(op) };
      for (const p of op.parameters.filter((q) => q.in === 'path')) base[p.name] = pathValue(op, p.name);
      for (const c of jsonQueryCases(param)) {
        const input = encodeURIComponent(JSON.stringify({ ...base, [param.name]: c.text }));
        const response = await fetch(`${server.url}/trpc/${procedure}?input=${input}`, {
          headers: headersFor(op),
        });
        const text = await response.text();
        sent++;
        const fail = (why: string) =>
          problems.push(`${procedure} [${c.label}] -> ${response.status}: ${why} :: ${text.slice(0, 200)}`);
        if (response.status !== 400) fail('not 400');
        let body: { error?: { data?: { code?: string; issues?: Array<{ path: string }> } } };
        try {
          body = JSON.parse(text);
        } catch {
          fail('not JSON');
          continue;
        }
        if (body.error?.data?.code !== 'validation_failed') fail('not validation_failed');
        const issues = body.error?.data?.issues ?? [];
        if (!issues.some((i) => i.path === c.field || i.path.startsWith(`${c.field}.`)))
          fail(`does not name ${c.field}`);
        if (c.echo !== undefined && stringsOf(body).some((s) => s.includes(c.echo!))) fail('gives the bad input back');
        for (const pattern of LEAK) if (pattern.test(text)) fail(`leak ${pattern}`);
      }
    }
    expect(sent).toBeGreaterThan(0);
    expect(problems).toEqual([]);
    await server.logsSettled();
    const errors = server.logs.filter((line) => line.level >= 50).slice(errorsBefore);
    expect(errors.map((line) => `${line.msg} ${JSON.stringify(line).slice(0, 300)}`)).toEqual([]);
  });

  it('left the objects the paths named in place (no bad request changed them)', async () => {
    const started = Date.now();
    const store = ids.storeId!;
    for (const path of [
      `/api/dashboard/stores/${store}/products/${ids.productId}`,
      `/api/dashboard/stores/${store}/coupons/${ids.couponId}`,
      `/api/dashboard/stores/${store}/webhooks/${ids.webhookId}`,
      `/api/dashboard/stores/${store}/tickets/${ids.ticketId}`,
      `/api/dashboard/stores/${store}/orders/${ids.order}`,
    ]) {
      expect((await dashboard(seller, 'GET', path)).status, path).toBe(200);
    }
    const product = await (
      await dashboard(seller, 'GET', `/api/dashboard/stores/${store}/products/${ids.productId}`)
    ).json();
    expect(product).toMatchObject({ name: 'Sweep product', price: 10, status: 'active' });
    // Bodies that are not objects once ran the route on its path alone (a refund with `true`).
    const paid = await (await dashboard(seller, 'GET', `/api/dashboard/stores/${store}/orders/${ids.order}`)).json();
    expect(paid).toMatchObject({ status: 'completed', note: '' });
    const pending = await (
      await dashboard(seller, 'GET', `/api/dashboard/stores/${store}/orders/${ids.pendingOrder}`)
    ).json();
    expect(pending.status).toBe('pending');
    const hook = await (
      await dashboard(seller, 'GET', `/api/dashboard/stores/${store}/webhooks/${ids.webhookId}`)
    ).json();
    expect(hook).toMatchObject({ name: 'hook', secretPrefix: ids.secretPrefix, enabled: true });
    const coupon = await (
      await dashboard(seller, 'GET', `/api/dashboard/stores/${store}/coupons/${ids.couponId}`)
    ).json();
    expect(coupon).toMatchObject({ code: 'SAVE10', active: true, discountValue: 10 });
    const files = await (
      await dashboard(seller, 'GET', `/api/dashboard/stores/${store}/products/${ids.productId}/files`)
    ).json();
    expect(files.files.map((f: { id: string }) => f.id)).toEqual([ids.fileId]);
    const pictured = await (
      await dashboard(seller, 'GET', `/api/dashboard/stores/${store}/products/${ids.productId}`)
    ).json();
    expect(pictured.images.map((i: { id: string }) => i.id)).toEqual([ids.imageId]);
    const blacklist = await (await dashboard(seller, 'GET', `/api/dashboard/stores/${store}/blacklist`)).json();
    expect(JSON.stringify(blacklist)).toContain(ids.entryId);
    const members = await (await dashboard(seller, 'GET', `/api/dashboard/stores/${store}/members`)).json();
    expect(JSON.stringify(members)).toContain(ids.memberId);
    console.info(`bad-input sweep: read-back in ${Date.now() - started} ms`);
  }, 90_000);
});
