/** What the application is built from; tests pass their own (database, clock, limiter). */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from './config.js';
import type { Clock } from './lib/clock.js';
import type { Logger } from './lib/logger.js';
import type { RateLimitStore } from './lib/rate-limit.js';
import type { FileStorage } from './lib/storage.js';

/** The part of a Redis client readiness needs. */
export interface RedisProbe {
  ping(): Promise<string>;
}

export interface AppDeps {
  config: Config;
  /** The ORM db/orm.ts opens (its `Orm`); named by MikroORM's own type so this file stays beneath the modules. */
  orm: MikroORM;
  clock: Clock;
  limiter: RateLimitStore;
  storage: FileStorage;
  redis?: RedisProbe | undefined;
  log: Logger;
}
