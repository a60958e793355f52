/** Operations endpoints: liveness, readiness (database and Redis) and Prometheus metrics. */
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../deps.js';
import { dbPoolInUse, dbPoolPending, registry, webhookQueueDepth } from '../lib/metrics.js';
import { countDueAttempts } from '../modules/webhooks/dispatcher.js';

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

export async function opsPlugin(app: FastifyInstance, opts: { deps: AppDeps }): Promise<void> {
  const { deps } = opts;

  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_request, reply) => {
    const checks: Record<string, 'ok' | 'failing' | 'not configured'> = {};
    try {
      await withTimeout(deps.orm.em.getConnection().execute('select 1'), 2000);
      checks.database = 'ok';
    } catch {
      checks.database = 'failing';
    }
    if (deps.redis) {
      try {
        await withTimeout(deps.redis.ping(), 1000);
        checks.redis = 'ok';
      } catch {
        checks.redis = 'failing';
      }
    } else {
      checks.redis = 'not configured';
    }
    const ready = !Object.values(checks).includes('failing');
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', checks });
  });

  app.get('/metrics', async (_request, reply) => {
    await readGauges(deps);
    reply.type(registry.contentType);
    return registry.metrics();
  });
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
    webhookQueueDepth.set(await withTimeout(countDueAttempts(deps), 2000));
  } catch (error) {
    deps.log.debug({ err: error }, 'due webhook attempts not counted');
  }
}
