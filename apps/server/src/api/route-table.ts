/**
 * The route table: every procedure of the router and every plain route, each with its whole
 * policy, read from the one place it is declared (procedure meta; plainRoute()). Everything
 * that needs to know about routes reads these views, and nothing walks the router elsewhere:
 * - REST (http/rest.ts): success statuses, path parameters;
 * - CORS (http/cors.ts) and CSRF (the guards, through the policy): per route and per /trpc call;
 * - strict input (strict-input.ts): every procedure's input schemas;
 * - the OpenAPI document (openapi/document.ts): statuses, security, the plain API routes;
 * - metrics (http/request-metrics.ts): route templates;
 * - the SDK generator (packages/sdk/scripts): which procedures each client may call.
 * Building the table refuses a route whose declaration has a gap.
 *
 * A `storeAccess` procedure (one declaration for merchants and the dashboard) has two entries,
 * one per REST path, each with the policy that path enforces: the merchant path
 * (`/merchant/v1/stores/{storeId}/...`) a key's, the dashboard path (the same under
 * `/dashboard/stores/{storeId}`) a session's. So every reader above sees, per path, exactly the
 * credential, CSRF, limits and error codes it answers with.
 */
import { ERROR_STATUS, type TErrorCode } from '@svc/schemas';
import type { AnyProcedure, AnyRouter } from '@trpc/server';
import FindMyWay, { type HTTPVersion } from 'find-my-way';
import type { z } from 'zod';
import type { ZodOpenApiOperationObject } from 'zod-openapi';
import { isReplayable } from '../trpc/idempotency.middleware.js';
import type { SvcMeta } from '../trpc/init.js';
import type { AuthSurface, CorsPolicy, RoutePolicy, StoreCredential } from '../trpc/policy.js';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/** Where REST serves the procedures (http/rest.ts). */
export const API_BASE_PATH = '/api';

/** A route served by Fastify itself (raw bytes, multipart, binary, pages, ops, docs), declared by plainRoute(). */
export interface PlainRouteDeclaration {
  name: string;
  method: HttpMethod;
  /** Full path, parameters as `{name}`. */
  path: string;
  policy: RoutePolicy;
  /** The query parameters it takes (a strict object: anything else is 400); documented with the operation. */
  query?: z.ZodObject | undefined;
  /** Its OpenAPI operation (API routes), or false (pages, ops, docs). */
  openapi:
    (Omit<ZodOpenApiOperationObject, 'responses'> & { responses?: ZodOpenApiOperationObject['responses'] }) | false;
}

export interface RouteEntry {
  /** `orders.list` for a procedure (both routes of a storeAccess procedure); the declaration's name for a plain route. */
  name: string;
  source: 'procedure' | 'plain';
  type: 'query' | 'mutation' | undefined;
  method: HttpMethod;
  path: string;
  /** The names of the path's parameters, in order. */
  params: string[];
  /** What the route enforces: its declared policy, a storeAccess one as its path binds it (boundPolicy). */
  policy: RoutePolicy;
  /** The credential this path reads, on the two routes of a storeAccess procedure (REST binds it; /trpc takes either). */
  credential?: StoreCredential | undefined;
  /** Every error code the route can answer with: its own and those its policy implies. */
  errorCodes: TErrorCode[];
  /** The HTTP statuses of those codes. */
  errorStatuses: number[];
  /** In the OpenAPI document. */
  documented: boolean;
  /** Its REST operation reads a JSON body (a procedure on an unsafe method with fields besides the path's). */
  jsonBody: boolean;
  procedure?: AnyProcedure;
  plain?: PlainRouteDeclaration;
}

export interface RouteTable {
  entries: RouteEntry[];
  /** The procedures' REST routes (two for a storeAccess procedure). */
  procedures: RouteEntry[];
  /** A procedure's route (a storeAccess procedure's merchant route). */
  procedure(name: string): RouteEntry | undefined;
  /** The route a request to `method path` (no query) reaches, REST or plain. */
  match(method: string, path: string): RouteEntry | undefined;
  /** The CORS policy of a /trpc call naming these procedures: theirs when they share one, else none. */
  trpcCors(names: string[]): CorsPolicy;
}

const UNSAFE = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);
// DELETE too: the REST adapter reads a DELETE's JSON body (its input), so its media type and size are checked.
const WITH_BODY = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

/** Where a storeAccess route's merchant path lives, and the dashboard's path for the same operation. */
const MERCHANT_STORE_PATH = '/merchant/v1/stores/{storeId}';
const DASHBOARD_STORE_PATH = '/dashboard/stores/{storeId}';
const STORE_CREDENTIALS: StoreCredential[] = ['apiKey', 'session'];

/** A storeAccess route's path for `credential`, from its declared (merchant) path. */
function storeAccessPath(merchantPath: string, credential: StoreCredential): string {
  return credential === 'apiKey' ? merchantPath : DASHBOARD_STORE_PATH + merchantPath.slice(MERCHANT_STORE_PATH.length);
}

/**
 * The policy a storeAccess route enforces on the path bound to `credential`: on the merchant
 * path a key's (`apiKey` with the scope, no CSRF: no session is read), on the dashboard path a
 * session's (`session` with the permission, CSRF as declared). Any other policy as it is.
 */
function boundPolicy(policy: RoutePolicy, credential: StoreCredential): RoutePolicy {
  const auth = policy.auth;
  if (auth.kind !== 'storeAccess') return policy;
  // Each path is one route: the dashboard path is not another one's any more.
  const bound = { ...policy };
  delete bound.dashboard;
  return credential === 'apiKey'
    ? { ...bound, auth: { kind: 'apiKey', scope: auth.scope }, csrf: 'none' }
    : { ...bound, auth: { kind: 'session', store: { permission: auth.permission } } };
}

/** What a credential check can answer: the auth surface's codes, CSRF on a session's unsafe call. */
function credentialCodes(policy: RoutePolicy, unsafe: boolean, credential: StoreCredential | undefined): TErrorCode[] {
  const auth: AuthSurface = policy.auth;
  switch (auth.kind) {
    case 'session':
      return [
        'unauthorized',
        ...(auth.store ? (['store_forbidden', 'two_factor_enrolment_required', 'permission_missing'] as const) : []),
        ...(unsafe && policy.csrf === 'required' ? (['csrf_failed'] as const) : []),
      ];
    case 'apiKey':
      return ['unauthorized', 'scope_missing', 'store_forbidden', 'permission_missing', 'rate_limited'];
    case 'storeAccess':
      // On a REST path, the codes of the one credential it reads; unbound (/trpc), of either.
      return (credential ? [credential] : STORE_CREDENTIALS).flatMap((one) =>
        credentialCodes(boundPolicy(policy, one), unsafe, one),
      );
    case 'customer':
      // store_forbidden: an origin that is not the store's; store_banned: the store was banned.
      return ['unauthorized', 'store_forbidden', 'store_banned'];
    case 'buyer':
      // No credential, credentials that do not open the order, and a staff session's CSRF.
      return [
        'unauthorized',
        'store_forbidden',
        'store_banned',
        'not_found',
        // A staff session of a store whose owner requires two-factor sign-in, without it.
        ...(auth.staffSession ? (['two_factor_enrolment_required'] as const) : []),
        ...(auth.staffSession && unsafe && policy.csrf === 'required' ? (['csrf_failed'] as const) : []),
      ];
    case 'signature':
      return ['signature_invalid'];
    case 'operator':
      return ['unauthorized'];
    case 'public':
      return [];
  }
}

/**
 * What a route can answer besides its own codes, from the rest of its policy. `credential`: the
 * one a storeAccess route's path reads (none: /trpc, which takes either, so both credentials' codes).
 */
export function impliedCodes(
  policy: RoutePolicy,
  route: { method: HttpMethod; hasJsonBody: boolean; credential?: StoreCredential | undefined },
): TErrorCode[] {
  // payload_too_large: any request whose line or headers are over the server's limits (a long query, say).
  // validation_failed: any request whose URL is not readable text (`%ff`, an encoded NUL; lib/input-limits.ts).
  const codes: TErrorCode[] = ['internal_error', 'service_unavailable', 'payload_too_large', 'validation_failed'];
  if (route.hasJsonBody) codes.push('invalid_json', 'payload_too_large', 'unsupported_media_type');
  const unsafe = UNSAFE.has(route.method);
  // A write that races another one (a unique or optimistic-lock violation) is answered 409.
  if (unsafe) codes.push('conflict');
  codes.push(...credentialCodes(policy, unsafe, route.credential));
  if (policy.rateLimit) codes.push('rate_limited');
  if (policy.idempotency) codes.push('idempotency_key_reused', 'idempotency_key_in_use', 'validation_failed');
  return [...new Set(codes)];
}

/**
 * What is missing or inconsistent in a route's declared policy; empty when it is whole. `route`:
 * the declared path, and whether it is a plain route (those declare one credential per path).
 */
export function policyGaps(
  name: string,
  policy: Partial<RoutePolicy> | undefined,
  method: string | undefined,
  route: { path?: string | undefined; plain?: boolean } = {},
): string[] {
  const gaps: string[] = [];
  if (!policy?.auth) gaps.push(`${name}: no auth surface`);
  if (!policy?.csrf) gaps.push(`${name}: no CSRF policy`);
  if (!policy?.cors) gaps.push(`${name}: no CORS policy`);
  if (!Array.isArray(policy?.errors))
    gaps.push(`${name}: no error codes (declare [] when the route has none of its own)`);
  else
    for (const code of policy.errors)
      if (!Object.hasOwn(ERROR_STATUS, code)) gaps.push(`${name}: unknown error code ${code}`);
  if (!method) gaps.push(`${name}: no REST route (openapi method and path)`);
  if (policy?.auth && policy.csrf) {
    // A seller session on an unsafe call is the one credential a cross-site form can carry.
    const readsSession =
      policy.auth.kind === 'session' ||
      policy.auth.kind === 'storeAccess' ||
      (policy.auth.kind === 'buyer' && policy.auth.staffSession);
    if (readsSession && policy.csrf === 'none' && method && UNSAFE.has(method))
      gaps.push(`${name}: reads a seller session on an unsafe call but declares no CSRF check`);
    if (!readsSession && policy.csrf !== 'none')
      gaps.push(`${name}: reads no seller session, so its CSRF policy is 'none'`);
  }
  if (policy?.auth?.kind === 'storeAccess') {
    if (route.plain) gaps.push(`${name}: a plain route declares one credential per path, not storeAccess`);
    else if (route.path !== undefined && !isUnder(route.path, MERCHANT_STORE_PATH))
      gaps.push(`${name}: a storeAccess route declares its merchant path, under ${MERCHANT_STORE_PATH}`);
    if (!policy.dashboard?.tags.length)
      gaps.push(`${name}: a storeAccess route names the tags of its dashboard path (dashboard.tags)`);
  } else if (policy?.dashboard) gaps.push(`${name}: only a storeAccess route has a dashboard path`);
  if (policy?.csv && method !== 'GET') gaps.push(`${name}: only a GET answers CSV (csv)`);
  return gaps;
}

const isUnder = (path: string, base: string) => path === base || path.startsWith(`${base}/`);

const paramsOf = (path: string) => [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);

/** The REST adapter reads the input from the body on these methods, less the path's parameters. */
const BODY_INPUT = new Set(['POST', 'PATCH', 'PUT']);

/** Whether an input (its object schema) has fields the path does not carry. */
function hasBodyFields(inputs: unknown[], params: string[]): boolean {
  if (inputs.length === 0) return false;
  const shape = (inputs[0] as { shape?: Record<string, unknown> }).shape;
  return !shape || Object.keys(shape).some((key) => !params.includes(key));
}

/** Whether an input (its object schema) has the field `name`. */
function hasInputField(inputs: unknown[], name: string): boolean {
  const shape = (inputs[0] as { shape?: Record<string, unknown> } | undefined)?.shape;
  return shape !== undefined && Object.hasOwn(shape, name);
}

function complete(policy: Partial<RoutePolicy>): RoutePolicy {
  return policy as RoutePolicy;
}

const tables = new WeakMap<AnyRouter, Map<readonly PlainRouteDeclaration[], RouteTable>>();

/** The table of a router and the plain routes beside it (built once per pair). Throws on a gap. */
export function routeTable(router: AnyRouter, plainRoutes: readonly PlainRouteDeclaration[] = []): RouteTable {
  let byPlain = tables.get(router);
  if (!byPlain) tables.set(router, (byPlain = new Map<readonly PlainRouteDeclaration[], RouteTable>()));
  const cached = byPlain.get(plainRoutes);
  if (cached) return cached;

  const gaps: string[] = [];
  const entries: RouteEntry[] = [];
  const procedures = router._def.procedures as Record<string, AnyProcedure>;
  for (const [name, procedure] of Object.entries(procedures)) {
    const def = procedure._def as unknown as {
      type: 'query' | 'mutation';
      meta?: SvcMeta;
      inputs: unknown[];
      resolver?: unknown;
    };
    const meta = def.meta;
    const openapi = meta?.openapi;
    const method = openapi?.method;
    gaps.push(...policyGaps(name, meta, method, { path: openapi?.path }));
    if (meta?.idempotency && !isReplayable(def.resolver))
      gaps.push(`${name}: declares idempotency but its resolver is not replayable()`);
    if (meta?.csv && !hasInputField(def.inputs, 'format'))
      gaps.push(`${name}: answers CSV but its input takes no \`format\``);
    if (!method || !openapi?.path || !meta?.auth) continue;
    const declared = complete(meta);
    const hasInput = def.inputs.length > 0;
    // One route; a storeAccess procedure's two, each bound to the credential its path reads.
    const bindings = declared.auth.kind === 'storeAccess' ? STORE_CREDENTIALS : [undefined];
    for (const credential of bindings) {
      const path = credential ? storeAccessPath(openapi.path, credential) : openapi.path;
      const policy = credential ? boundPolicy(declared, credential) : declared;
      const errorCodes = [
        ...new Set([
          ...impliedCodes(declared, { method, hasJsonBody: hasInput && WITH_BODY.has(method), credential }),
          ...(declared.errors ?? []),
        ]),
      ];
      entries.push({
        name,
        source: 'procedure',
        type: def.type,
        method,
        path: `${API_BASE_PATH}${path}`,
        params: paramsOf(path),
        policy,
        credential,
        errorCodes,
        errorStatuses: [...new Set(errorCodes.map((code) => ERROR_STATUS[code]))].sort((a, b) => a - b),
        documented: true,
        jsonBody: BODY_INPUT.has(method) && hasBodyFields(def.inputs, paramsOf(path)),
        procedure,
      });
    }
  }
  for (const plain of plainRoutes) {
    gaps.push(...policyGaps(plain.name, plain.policy, plain.method, { path: plain.path, plain: true }));
    const errorCodes = [
      ...new Set([...impliedCodes(plain.policy, { method: plain.method, hasJsonBody: false }), ...plain.policy.errors]),
    ];
    entries.push({
      name: plain.name,
      source: 'plain',
      type: undefined,
      method: plain.method,
      path: plain.path,
      params: paramsOf(plain.path),
      policy: plain.policy,
      errorCodes,
      errorStatuses: [...new Set(errorCodes.map((code) => ERROR_STATUS[code]))].sort((a, b) => a - b),
      documented: plain.openapi !== false,
      jsonBody: false,
      plain,
    });
  }
  if (gaps.length > 0) throw new Error(`the route table has gaps:\n  ${gaps.join('\n  ')}`);

  const lookup = FindMyWay<HTTPVersion.V1>({ ignoreTrailingSlash: true, maxParamLength: 2048 });
  for (const entry of entries)
    lookup.on(entry.method, entry.path.replace(/\{(\w+)\}/g, ':$1'), () => undefined, { entry });
  const byName = new Map<string, RouteEntry>();
  // A storeAccess procedure's merchant route comes first: it is the one named.
  for (const entry of entries) if (!byName.has(entry.name)) byName.set(entry.name, entry);
  const table: RouteTable = {
    entries,
    procedures: entries.filter((entry) => entry.source === 'procedure'),
    procedure: (name) => byName.get(name),
    match(method, path) {
      const found = lookup.find(method as 'GET', path);
      return (found?.store as { entry?: RouteEntry } | undefined)?.entry;
    },
    trpcCors(names) {
      const policies = new Set(names.map((name) => byName.get(name)?.policy.cors ?? 'none'));
      return policies.size === 1 ? [...policies][0]! : 'none';
    },
  };
  byPlain.set(plainRoutes, table);
  return table;
}
