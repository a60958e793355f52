/**
 * REST: trpc-to-openapi serves the router's procedures at their documented paths under
 * /api. Bodies are our JSON bodies; error bodies are reshaped here, in one place, from
 * the tRPC error shape into `{ error, code, issues? }`.
 */
import type { AnyRouter } from '@trpc/server';
import type { FastifyInstance } from 'fastify';
import { fastifyTRPCOpenApiPlugin } from 'trpc-to-openapi';
import type { TErrorBody } from '@svc/schemas';
import type { AppDeps } from '../deps.js';
import { AppError, invalidField } from '../lib/errors.js';
import { contextFactory } from '../trpc/context.js';
import { logAdapterError } from '../trpc/adapter-options.js';
import type { SvcErrorData } from '../trpc/init.js';
import { API_BASE_PATH, type RouteTable } from '../trpc/route-table.js';
import { useJsonBodies } from './json-body.js';

interface ErrorShapeBody {
  message?: unknown;
  data?: Partial<SvcErrorData>;
}

/** Turns the adapter's error body into ours; leaves anything else untouched. */
export function reshapeRestError(payload: string): string {
  let parsed: ErrorShapeBody;
  try {
    parsed = JSON.parse(payload) as ErrorShapeBody;
  } catch {
    return payload;
  }
  const data = parsed?.data;
  if (!data || typeof data.code !== 'string') return payload;
  if (data.bare) return JSON.stringify({ error: String(parsed.message) });
  const body: TErrorBody = { error: String(parsed.message), code: data.code };
  if (data.issues) body.issues = data.issues;
  return JSON.stringify(body);
}

export async function restPlugin(app: FastifyInstance, opts: { deps: AppDeps; router: AnyRouter; table: RouteTable }): Promise<void> {
  const { table } = opts;
  useJsonBodies(app, opts.deps.config.bodyLimitBytes);
  const createContext = contextFactory(opts.deps);

  // A POST without a body (rotate, test, retry) needs no Content-Type: the adapter would
  // otherwise refuse it with 415 before looking at the (absent) body.
  const typeAdded = new WeakSet<object>();
  app.addHook('onRequest', async (request) => {
    const bodyless = !request.headers['transfer-encoding'] && (request.headers['content-length'] ?? '0') === '0';
    if (bodyless && !request.headers['content-type'] && request.method !== 'GET') {
      request.headers['content-type'] = 'application/json';
      typeAdded.add(request);
    }
  });

  // Every REST input is an object, and the adapter spreads the body into it: a JSON body that
  // is not an object (an array, a string, a number, a boolean, null) would be dropped, or split
  // into characters, and the route would run on its path parameters alone (a PATCH with `[]`
  // answered 200, a refund with `true` refunded). Refuse it.
  app.addHook('preValidation', async (request) => {
    const body = request.body;
    if (body === undefined) {
      // An empty body the client sent as JSON is not `{}`: on a route that reads a body it is refused.
      if (request.emptyJsonBody && !typeAdded.has(request) && table.match(request.method, request.publicPath)?.jsonBody) {
        throw invalidField('', 'The body is empty: send a JSON object.');
      }
      return;
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body) || Buffer.isBuffer(body)) {
      throw invalidField('', 'The body must be a JSON object.');
    }
    // The adapter also lets the path's parameters overwrite body fields of the same name, so
    // `{ "storeId": <another store> }` in the body of /stores/{storeId}/... would be dropped
    // silently. A path parameter is never a body field: name it like any unknown field.
    const clashes = table.match(request.method, request.publicPath)?.params.filter((name) => Object.hasOwn(body, name)) ?? [];
    if (clashes.length > 0) {
      throw new AppError('validation_failed', undefined, { issues: clashes.map((name) => ({ path: name, message: 'Unknown field.' })) });
    }
  });

  app.addHook('onSend', async (_request, reply, payload) => {
    if (reply.statusCode >= 400 && typeof payload === 'string') return reshapeRestError(payload);
    return payload;
  });

  await app.register(fastifyTRPCOpenApiPlugin, {
    basePath: API_BASE_PATH,
    router: opts.router,
    maxBodySize: opts.deps.config.bodyLimitBytes,
    createContext: ({ req, res }: { req: unknown; res: unknown }) => createContext({ req, res } as Parameters<typeof createContext>[0]),
    onError: logAdapterError,
    responseMeta: ({ paths, errors }: { paths?: string[]; errors: unknown[] }) => {
      if (errors.length > 0) return {};
      const status = paths?.length === 1 ? table.procedure(paths[0]!)?.policy.successStatus : undefined;
      return status ? { status } : {};
    },
  } as never);
}
