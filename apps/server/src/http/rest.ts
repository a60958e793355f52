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
import { contextFactory } from '../trpc/context.js';
import { logAdapterError } from '../trpc/adapter-options.js';
import type { SvcErrorData, SvcMeta } from '../trpc/init.js';
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

function successStatusByPath(router: AnyRouter): Map<string, number> {
  const statuses = new Map<string, number>();
  const procedures = router._def.procedures as Record<string, { _def: { meta?: SvcMeta } }>;
  for (const [path, procedure] of Object.entries(procedures)) {
    const status = procedure._def.meta?.successStatus;
    if (status) statuses.set(path, status);
  }
  return statuses;
}

export async function restPlugin(app: FastifyInstance, opts: { deps: AppDeps; router: AnyRouter }): Promise<void> {
  useJsonBodies(app, opts.deps.config.bodyLimitBytes);
  const statuses = successStatusByPath(opts.router);
  const createContext = contextFactory(opts.deps);

  // A POST without a body (rotate, test, retry) needs no Content-Type: the adapter would
  // otherwise refuse it with 415 before looking at the (absent) body.
  app.addHook('onRequest', async (request) => {
    const bodyless = !request.headers['transfer-encoding'] && (request.headers['content-length'] ?? '0') === '0';
    if (bodyless && !request.headers['content-type'] && request.method !== 'GET') {
      request.headers['content-type'] = 'application/json';
    }
  });

  app.addHook('onSend', async (_request, reply, payload) => {
    if (reply.statusCode >= 400 && typeof payload === 'string') return reshapeRestError(payload);
    return payload;
  });

  await app.register(fastifyTRPCOpenApiPlugin, {
    basePath: '/api',
    router: opts.router,
    maxBodySize: opts.deps.config.bodyLimitBytes,
    createContext: ({ req, res }: { req: unknown; res: unknown }) => createContext({ req, res } as Parameters<typeof createContext>[0]),
    onError: logAdapterError,
    responseMeta: ({ paths, errors }: { paths?: string[]; errors: unknown[] }) => {
      if (errors.length > 0) return {};
      const status = paths?.length === 1 ? statuses.get(paths[0]!) : undefined;
      return status ? { status } : {};
    },
  } as never);
}
