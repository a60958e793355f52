/**
 * Operations endpoints: liveness, readiness (database and Redis) and Prometheus metrics.
 * `/metrics` is open outside production; a METRICS_TOKEN makes it take that Bearer token, and
 * METRICS_PORT moves it off the API port to that port of 127.0.0.1 (metricsApp, below). In
 * production without either, the API port answers 404: nothing about the process is public.
 */
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import { pingDatabase } from '../db/orm.js';
import type { AppDeps } from '../deps.js';
import { dbPoolInUse, dbPoolPending, registry, webhookQueueDepth } from '../lib/metrics.js';
import { serviceContext } from '../modules/request/context.js';
import { countDueAttempts } from '../modules/webhooks/housekeeping.js';
import type { RoutePolicy } from '../trpc/policy.js';
import { installErrorReplies } from './error-reply.js';
import { plainRoute, registerPlainRoutes } from './plain-route.js';
import { installResponseSink } from './response-sink.js';

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

interface TarnPool {
  numUsed(): number;
  numPendingAcquires(): number;
}

/** The figures read at scrape time; a database that does not answer leaves the last values. */
async function readGauges(deps: AppDeps): Promise<void> {
  const pool = (deps.orm.em.getConnection().getKnex().client as { pool?: TarnPool }).pool;
  if (pool) {
    dbPoolInUse.set(pool.numUsed());
    dbPoolPending.set(pool.numPendingAcquires());
  }
  try {
    webhookQueueDepth.set(await withTimeout(countDueAttempts(serviceContext(deps)), 2000));
  } catch (error) {
    deps.log.debug({ err: error }, 'due webhook attempts not counted');
  }
}

/** For the operator's probes and scrapers on the same network; nothing of a store's data. */
const OPS_POLICY: RoutePolicy = {
  auth: { kind: 'public', audience: 'seller' },
  csrf: 'none',
  cors: 'none',
  errors: [],
};

/** Whether /metrics answers on the API port: not when it has a port of its own, and in production only behind a token. */
export function metricsOnApiPort(config: Config): boolean {
  return config.metricsPort === undefined && (!config.isProduction || config.metricsToken !== undefined);
}

const metricsRoute = plainRoute({
  name: 'ops.metrics',
  method: 'GET',
  path: '/metrics',
  body: 'none',
  policy: { ...OPS_POLICY, auth: { kind: 'operator' } },
  openapi: false,
  enabled: metricsOnApiPort,
  async handler(ctx, _request, reply) {
    await readGauges(ctx.deps);
    return reply.type(registry.contentType).send(await registry.metrics());
  },
});

export const OPS_ROUTES = [
  plainRoute({
    name: 'ops.healthz',
    method: 'GET',
    path: '/healthz',
    body: 'none',
    policy: OPS_POLICY,
    openapi: false,
    handler: () => Promise.resolve({ status: 'ok' }),
  }),
  plainRoute({
    name: 'ops.readyz',
    method: 'GET',
    path: '/readyz',
    body: 'none',
    policy: OPS_POLICY,
    openapi: false,
    async handler(ctx, _request, reply) {
      const checks: Record<string, 'ok' | 'failing' | 'not configured'> = {};
      try {
        await withTimeout(pingDatabase(ctx.em), 2000);
        checks.database = 'ok';
      } catch {
        checks.database = 'failing';
      }
      if (ctx.deps.redis) {
        try {
          await withTimeout(ctx.deps.redis.ping(), 1000);
          checks.redis = 'ok';
        } catch {
          checks.redis = 'failing';
        }
      } else {
        checks.redis = 'not configured';
      }
      const ready = !Object.values(checks).includes('failing');
      return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', checks });
    },
  }),
  metricsRoute,
];

/**
 * The application `svc serve` listens with on 127.0.0.1:METRICS_PORT: the same /metrics route,
 * its guard included (a METRICS_TOKEN is asked for here too), and nothing else.
 */
export async function metricsApp(deps: AppDeps): Promise<FastifyInstance> {
  // No request log: a scrape every few seconds would drown the API's lines.
  const app = Fastify({ loggerInstance: deps.log, logController: new LogController({ disableRequestLogging: true }) });
  installErrorReplies(app);
  installResponseSink(app);
  await registerPlainRoutes(app, deps, [{ ...metricsRoute, enabled: undefined }]);
  return app;
}
