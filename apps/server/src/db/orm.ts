/** The ORM: one MikroORM instance per process, one forked EntityManager per request. */
import { Migrator } from '@mikro-orm/migrations';
import { MikroORM, defineConfig, type Options } from '@mikro-orm/postgresql';
import type { Logger } from '../lib/logger.js';
import { wakeHubFor } from '../modules/events/wake.js';
import { ENTITIES } from './entities.js';
import { MIGRATIONS } from './migrations/index.js';

export type Orm = MikroORM;

export function ormOptions(clientUrl: string, opts: { poolMax?: number } = {}): Options {
  return defineConfig({
    clientUrl,
    entities: ENTITIES,
    extensions: [Migrator],
    migrations: {
      migrationsList: MIGRATIONS,
      tableName: 'mikro_orm_migrations',
      transactional: true,
      allOrNothing: true,
      snapshot: false,
      emit: 'ts',
      silent: true,
    },
    pool: { min: 0, max: opts.poolMax ?? 10, idleTimeoutMillis: 10_000 },
    driverOptions: { connection: { connectionTimeoutMillis: 5_000 } },
    forceUtcTimezone: true,
    allowGlobalContext: false,
    debug: false,
  });
}

export async function openOrm(clientUrl: string, opts: { poolMax?: number } = {}): Promise<Orm> {
  const orm = await MikroORM.init(ormOptions(clientUrl, opts));
  // Before any EntityManager is forked for work: every fork must carry the outbox's wake-up.
  wakeHubFor(orm);
  return orm;
}

/** Runs every pending migration; returns the names it applied. */
export async function migrate(orm: Orm, log?: Logger): Promise<string[]> {
  const applied = await orm.getMigrator().up();
  const names = applied.map((m) => m.name);
  if (names.length > 0) log?.info({ migrations: names }, 'applied migrations');
  return names;
}
