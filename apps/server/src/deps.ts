/** What the application is built from; tests pass their own (database, clock, limiter). */
import type { Config } from './config.js';
import type { Orm } from './db/orm.js';
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
  orm: Orm;
  clock: Clock;
  limiter: RateLimitStore;
  storage: FileStorage;
  redis?: RedisProbe | undefined;
  log: Logger;
}
