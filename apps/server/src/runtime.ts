/**
 * Brings up what the process needs from its configuration: the database (embedded when
 * no DATABASE_URL is set), migrations, Redis (or the in-process limiter), and tears it
 * down again in reverse order.
 */
import { createClient } from 'redis';
import type { Config } from './config.js';
import { startEmbeddedPostgres } from './db/embedded.js';
import { migrate, openOrm } from './db/orm.js';
import type { AppDeps } from './deps.js';
import { systemClock } from './lib/clock.js';
import type { Logger } from './lib/logger.js';
import { LocalFileStorage, type FileStorage } from './lib/storage.js';
import { FallbackRateLimitStore, MemoryRateLimitStore, RedisRateLimitStore } from './lib/rate-limit.js';

export interface Runtime {
  deps: AppDeps;
  close(): Promise<void>;
}

/** Redis command budget: past this the limiter answers from memory instead of waiting. */
const REDIS_COMMAND_TIMEOUT_MS = 250;

export function connectRedis(url: string, log: Logger) {
  let lastError = '';
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: 2_000,
      reconnectStrategy: (retries) => Math.min(50 * 2 ** retries, 2_000),
    },
  });
  client.on('error', (error: Error) => {
    // node-redis reports every failed reconnect; say each distinct failure once.
    if (error.message !== lastError) log.warn({ err: error }, 'redis error');
    lastError = error.message;
  });
  client.on('ready', () => {
    if (lastError) log.info('redis connected again');
    lastError = '';
  });
  const connecting = client
    .connect()
    .catch((error: Error) => log.warn({ err: error }, 'redis not reachable yet; limiting in process meanwhile'));
  /** Closes the connection even when it is still being made (a late connect would keep the process alive). */
  const shutdown = async () => {
    await Promise.race([connecting, new Promise((resolve) => setTimeout(resolve, 1_000).unref())]);
    await Promise.race([client.close(), new Promise((resolve) => setTimeout(resolve, 1_000).unref())]).catch(
      () => undefined,
    );
    try {
      client.destroy();
    } catch {
      // already closed
    }
  };
  return Object.assign(client, { shutdown });
}

/** STORAGE_URL's bucket when it is set, else the local directory (docs/decisions.md, #43). */
async function fileStorage(config: Config, log: Logger, closers: Array<() => Promise<unknown>>): Promise<FileStorage> {
  if (!config.objectStore) return new LocalFileStorage(config.fileStorageDir);
  // Loaded only for an object store: the AWS SDK costs a local-disk install a third of a second
  // and tens of MiB at every start.
  const { S3FileStorage } = await import('./lib/s3-storage.js');
  const store = new S3FileStorage(config.objectStore, log);
  closers.unshift(() => Promise.resolve(store.close()));
  log.info(
    { bucket: config.objectStore.bucket, endpoint: config.objectStore.endpoint },
    'files kept in the object store',
  );
  return store;
}

export interface RuntimeOptions {
  /** Apply pending migrations (default true). */
  migrate?: boolean;
  /** Use the embedded database of a running `svc serve` on the same data directory (operator commands). */
  attachEmbedded?: boolean;
}

export async function startRuntime(config: Config, log: Logger, opts: RuntimeOptions = {}): Promise<Runtime> {
  const closers: Array<() => Promise<unknown>> = [];
  const close = async () => {
    for (const step of closers.splice(0))
      await step().catch((error) => log.error({ err: error }, 'shutdown step failed'));
  };
  try {
    return await assemble(config, log, opts, closers, close);
  } catch (error) {
    // What started before the failure stops again (an embedded database would outlive the process).
    await close();
    throw error;
  }
}

async function assemble(
  config: Config,
  log: Logger,
  opts: RuntimeOptions,
  closers: Array<() => Promise<unknown>>,
  close: () => Promise<void>,
): Promise<Runtime> {
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    const embedded = await startEmbeddedPostgres(config.dataDir, log, { attach: opts.attachEmbedded });
    closers.unshift(() => embedded.stop());
    databaseUrl = embedded.url;
  }
  const orm = await openOrm(databaseUrl, { replicaUrls: config.databaseReplicaUrls });
  closers.unshift(() => orm.close());
  if (opts.migrate !== false) await migrate(orm, log);

  let redis: ReturnType<typeof connectRedis> | undefined;
  let primary: RedisRateLimitStore | undefined;
  if (config.redisUrl) {
    redis = connectRedis(config.redisUrl, log);
    const client = redis;
    closers.unshift(() => client.shutdown());
    // Its own deadline per hit instead of node-redis's (an AbortSignal.timeout per command, 5 s by default).
    primary = new RedisRateLimitStore(
      redis.withCommandOptions({ timeout: 0 }),
      `${config.redisKeyPrefix}rl:`,
      REDIS_COMMAND_TIMEOUT_MS,
    );
  } else {
    log.warn('no REDIS_URL: rate limits are kept in this process only (one instance)');
  }

  // Mail is recorded in the outbox either way; the mail senders of `serve` and `worker` send it with SMTP_URL.
  if (!config.smtpUrl) {
    log.warn(
      'no SMTP_URL: e-mail is kept in the outbox table' + (config.isProduction ? '' : ' and shown at /dev/mailbox'),
    );
  }

  const deps: AppDeps = {
    config,
    orm,
    clock: systemClock,
    storage: await fileStorage(config, log, closers),
    limiter: new FallbackRateLimitStore(primary, new MemoryRateLimitStore(), log),
    redis: redis ? { ping: () => redis.withCommandOptions({ timeout: 1_000 }).ping() } : undefined,
    log,
  };
  return { deps, close };
}
