/** The ORM: one MikroORM instance per process, one forked EntityManager per request. */
import { Migrator } from '@mikro-orm/migrations';
import { MikroORM, defineConfig, type EntityManager, type Options } from '@mikro-orm/postgresql';
import type { Logger } from '../lib/logger.js';
import { wakeHubFor } from '../modules/events/wake.js';
import { commitBatchWriter } from '../modules/request/transaction.js';
import { mailWakeHubFor } from '../modules/mail/wake.js';
import { ENTITIES } from './entities.js';
import { MIGRATIONS } from './migrations/index.js';
import { LEGACY_MIGRATIONS } from './migrations/legacy/index.js';
import pg from 'pg';

export type Orm = MikroORM;

/** A round trip to the database (readiness): the one statement that belongs to no module. */
export async function pingDatabase(em: EntityManager): Promise<void> {
  await em.getConnection().execute('select 1');
}

export function ormOptions(clientUrl: string, opts: { poolMax?: number; replicaUrls?: string[] } = {}): Options {
  return defineConfig({
    clientUrl,
    // Read replicas serve the listings that ask for one (db/replicas.ts); nothing else reads from
    // them by default, so every read-after-write path stays on the primary.
    replicas: (opts.replicaUrls ?? []).map((url, i) => ({ name: `replica-${i + 1}`, clientUrl: url })),
    preferReadReplicas: false,
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

export async function openOrm(
  clientUrl: string,
  opts: { poolMax?: number; replicaUrls?: string[] } = {},
): Promise<Orm> {
  const orm = await MikroORM.init(ormOptions(clientUrl, opts));
  // Before any EntityManager is forked for work: every fork must carry the outboxes' wake-ups.
  wakeHubFor(orm);
  mailWakeHubFor(orm);
  // The rows transactions write in one statement before they commit (request/transaction.ts).
  orm.em.getEventManager().registerSubscriber(commitBatchWriter);
  return orm;
}

const MIGRATIONS_TABLE = 'mikro_orm_migrations';
/** The advisory lock every migrating process takes first: two servers starting together migrate once. */
const MIGRATION_LOCK = 0x5f5c_0001;

/**
 * Runs every pending migration; returns the names it applied. A database built by the six
 * hand-written migrations the baseline replaced (migrations/legacy/) first finishes those it has
 * not run, then records the baseline as applied without running it: the two build one schema,
 * which test/migrations.test.ts proves table by table, constraint by constraint.
 */
export async function migrate(orm: Orm, log?: Logger): Promise<string[]> {
  const clientUrl = orm.config.get('clientUrl')!;
  const lock = new pg.Client({ connectionString: clientUrl });
  await lock.connect();
  try {
    // Raw: an advisory lock, which the ORM cannot take; on a connection of its own, held across
    // the migrator's transactions and released when it ends (docs/decisions.md, #43).
    await lock.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    const names = await adoptLegacy(lock, clientUrl);
    const applied = await orm.getMigrator().up();
    names.push(...applied.map((m) => m.name));
    if (names.length > 0) log?.info({ migrations: names }, 'applied migrations');
    return names;
  } finally {
    await lock.end();
  }
}

/** For a database on the legacy migrations: runs the ones it lacks and records the baseline. */
async function adoptLegacy(client: pg.Client, clientUrl: string): Promise<string[]> {
  const exists = await client.query<{ table: string | null }>('select to_regclass($1)::text as table', [
    MIGRATIONS_TABLE,
  ]);
  if (!exists.rows[0]!.table) return [];
  const done = new Set(
    (await client.query<{ name: string }>(`select name from ${MIGRATIONS_TABLE}`)).rows.map((row) => row.name),
  );
  const legacy = LEGACY_MIGRATIONS.map((m) => m.name);
  const baseline = MIGRATIONS[0]!.name;
  if (done.has(baseline) || !legacy.some((name) => done.has(name))) return [];
  const options = ormOptions(clientUrl, { poolMax: 1 });
  const legacyOrm = await MikroORM.init({
    ...options,
    migrations: { ...options.migrations, migrationsList: LEGACY_MIGRATIONS },
  });
  let names: string[];
  try {
    names = (await legacyOrm.getMigrator().up()).map((m) => m.name);
  } finally {
    await legacyOrm.close();
  }
  await client.query(`insert into ${MIGRATIONS_TABLE} (name) values ($1)`, [baseline]);
  return [...names, `${baseline} (adopted)`];
}
