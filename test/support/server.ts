/**
 * Black-box harness: starts the built server (`apps/server/dist/main.js serve`) as its own
 * process on a free port against a fresh database, exactly as a user would run it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startedServerPorts } from './conformance.js';
import { freshDatabase } from './databases.js';
import { TEST_REDIS_URL } from './env.js';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const SERVER_ENTRY = path.join(REPO_ROOT, 'apps/server/dist/main.js');

export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

export interface RunningServer {
  url: string;
  port: number;
  process: ChildProcess;
  logs: LogLine[];
  output: () => string;
  /**
   * Resolves once every line the server logged before the call is in `logs` and `output()`: the
   * server writes its log in blocks (up to 100 ms late), so a test that asserts what is *not* in
   * the log first waits for the line of a request of its own, which comes after all of them.
   */
  logsSettled(): Promise<void>;
  /** SIGTERM and wait for exit. */
  stop(): Promise<number | null>;
}

/** Spawns `svc serve` with `env` and resolves once it says where it listens. */
export async function spawnServer(env: Record<string, string | undefined>, cwd = REPO_ROOT): Promise<RunningServer> {
  const merged: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    PORT: '0',
    HOST: '127.0.0.1',
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    ...env,
  };
  const childEnv = Object.fromEntries(
    Object.entries(merged).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  const child = spawn(process.execPath, [SERVER_ENTRY, 'serve'], {
    cwd,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: LogLine[] = [];
  let text = '';
  let buffer = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const listening = new Promise<number>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      buffer += chunk.toString();
      let newline: number;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        try {
          const parsed = JSON.parse(line) as LogLine;
          logs.push(parsed);
          if (
            typeof parsed.msg === 'string' &&
            parsed.msg.startsWith('svc listening') &&
            typeof parsed.port === 'number'
          )
            resolve(parsed.port);
        } catch {
          // not a log line
        }
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
    void exited.then((code) => reject(new Error(`server exited (${code}) before listening:\n${text}`)));
  });
  const timeout = setTimeout(() => child.kill('SIGKILL'), 90_000);
  const port = await listening.finally(() => clearTimeout(timeout));
  // Answers from this port are checked against the OpenAPI document (conformance.ts).
  startedServerPorts().add(port);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    process: child,
    logs,
    output: () => text,
    async logsSettled() {
      const marker = `logs-settled-${randomBytes(8).toString('hex')}`;
      await fetch(`http://127.0.0.1:${port}/healthz`, { headers: { 'x-request-id': marker } });
      const deadline = Date.now() + 5_000;
      while (!logs.some((line) => line.reqId === marker)) {
        if (Date.now() > deadline) throw new Error('the server did not log the marker request within 5 s');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      return exited;
    },
  };
}

export interface RunningWorker {
  process: ChildProcess;
  output: () => string;
  /** SIGTERM and wait for exit. */
  stop(): Promise<number | null>;
}

/** Spawns `svc worker` with `env` (webhook deliveries and jobs, no HTTP). */
export function spawnWorker(env: Record<string, string | undefined>): RunningWorker {
  const merged: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    ...env,
  };
  const childEnv = Object.fromEntries(
    Object.entries(merged).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  const child = spawn(process.execPath, [SERVER_ENTRY, 'worker'], {
    cwd: REPO_ROOT,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    process: child,
    output: () => text,
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** The usual black-box setup: a fresh database, our Redis, a temp data dir. */
export async function startServer(env: Record<string, string | undefined> = {}) {
  const db = await freshDatabase();
  const server = await spawnServer({
    DATABASE_URL: db.url,
    REDIS_URL: TEST_REDIS_URL,
    // Each server its own rate-limit windows, and clients told apart by X-Forwarded-For.
    REDIS_KEY_PREFIX: `svc-test:${randomBytes(6).toString('hex')}:`,
    TRUST_PROXY: '127.0.0.1',
    DATA_DIR: mkdtempSync(path.join(tmpdir(), 'svc-bb-')),
    APP_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    ...env,
  });
  return {
    ...server,
    db,
    async stop() {
      const code = await server.stop();
      await db.drop();
      return code;
    },
  };
}
