/** Throw-away databases on the local PostgreSQL, created and dropped with `pg`. */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { onCleanup } from './cleanup.mjs';

export const PG_BASE = process.env.BENCH_PG_URL ?? 'postgresql://postgres@127.0.0.1:5432';

export function databaseUrl(name) {
  return `${PG_BASE}/${name}`;
}

async function admin(run) {
  const client = new pg.Client({ connectionString: databaseUrl('postgres') });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** `svc_bench_<random>`; dropped (with force) by the returned drop() or by the cleanup stack. */
export async function freshDatabase(prefix = 'svc_bench') {
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  await admin((client) => client.query(`create database "${name}"`));
  const drop = onCleanup(`drop database ${name}`, () =>
    admin((client) => client.query(`drop database if exists "${name}" with (force)`)),
  );
  return { name, url: databaseUrl(name), drop };
}

/** A client on `url` for the duration of `run`. */
export async function withClient(url, run) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

export async function serverVersion() {
  return admin(async (client) => (await client.query('show server_version')).rows[0].server_version);
}

/** The settings that matter for reading the figures. */
export async function serverSettings() {
  return admin(async (client) => {
    const { rows } = await client.query(
      `select name, setting, unit from pg_settings where name in ('shared_buffers', 'work_mem', 'effective_cache_size', 'max_connections', 'jit', 'random_page_cost') order by name`,
    );
    return rows.map((row) => `${row.name}=${row.setting}${row.unit ?? ''}`).join(' ');
  });
}

/**
 * Watches database `name` through one monitoring connection to `postgres` (kept open until
 * close()): the backend pids connected to it (for CPU accounting) and its committed plus
 * rolled-back transactions so far (each autocommit statement is one; busy backends flush
 * these counters about once a second, so a delta over a 10 s run is good to some percent).
 */
export async function watchDatabase(name) {
  const client = new pg.Client({ connectionString: databaseUrl('postgres') });
  await client.connect();
  const close = onCleanup('close monitoring connection', () => client.end());
  return {
    backendPids: async () =>
      (
        await client.query('select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [name])
      ).rows.map((row) => row.pid),
    transactions: async () => {
      await client.query('select pg_stat_clear_snapshot()');
      const { rows } = await client.query(
        'select (xact_commit + xact_rollback)::float8 as n from pg_stat_database where datname = $1',
        [name],
      );
      return rows[0]?.n ?? NaN;
    },
    close,
  };
}
