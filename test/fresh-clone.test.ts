/**
 * The README's first steps on a fresh clone, as a new user takes them: `npm ci` accepts the
 * lock file (no drift, no engine warning on Node 20), `npm ci && npm start` with nothing
 * configured serves on an embedded PostgreSQL, `seed-demo` run beside the running server (same
 * checkout, server still up) makes a store the server then shows, and stopping the server
 * logs nothing at level error or above.
 *
 * The clone is of the committed HEAD (`git clone` of this repository), so the test checks what
 * would land, not the working tree.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, type LogLine } from './support/server.js';
import { reservePort } from './support/webhook-receiver.js';

const exec = promisify(execFile);
const root = mkdtempSync(path.join(tmpdir(), 'svc-clone-'));
const clone = path.join(root, 'svc');
// Nothing of this machine's configuration: no DATABASE_URL, no REDIS_URL, no .env.
const bareEnv = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? root };
let server: ChildProcess | undefined;

beforeAll(async () => {
  chmodSync(root, 0o755); // as root, the embedded PostgreSQL runs as "postgres", which must enter the checkout
  await exec('git', ['clone', '--quiet', '--no-hardlinks', REPO_ROOT, clone]);
}, 120_000);

afterAll(() => {
  // The npm process group: npm, the shell, the server and its PostgreSQL.
  if (server?.pid && server.exitCode === null) {
    try {
      process.kill(-server.pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  rmSync(root, { recursive: true, force: true, maxRetries: 3 });
});

/** Runs a command in the clone; resolves with its exit code and output (never rejects). */
async function inClone(
  command: string,
  args: string[],
  timeoutMs: number,
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(command, args, {
      cwd: clone,
      env: bareEnv,
      timeout: timeoutMs,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number | string; stdout: string; stderr: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout, stderr: e.stderr };
  }
}

async function poll<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe('a fresh clone', () => {
  it(
    'passes `npm ci --dry-run` (the lock file is complete, no engine warning on Node 20)',
    { timeout: 120_000 },
    async () => {
      const result = await inClone('npm', ['ci', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund'], 110_000);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).not.toMatch(/EBADENGINE|EUSAGE|not in sync/);
    },
  );

  it(
    'runs the README command on an embedded PostgreSQL, takes seed-demo beside it, and stops without an error line',
    { timeout: 420_000 },
    async () => {
      const port = await reservePort();
      let output = '';
      server = spawn('sh', ['-c', 'npm ci --no-audit --no-fund && npm start'], {
        cwd: clone,
        env: { ...bareEnv, PORT: String(port), HOST: '127.0.0.1' },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      server.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      server.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      // 'close': the shell and everything it started that holds the output (npm, the server) are gone.
      const exited = new Promise<number | null>((resolve) => server!.once('close', (code) => resolve(code)));
      const base = `http://127.0.0.1:${port}`;

      const health = await Promise.race([
        poll('GET /healthz', async () => ((await fetch(`${base}/healthz`)).status === 200 ? true : undefined), 400_000),
        exited.then((code) => {
          throw new Error(`npm ci && npm start exited (${code}):\n${output.slice(-4000)}`);
        }),
      ]);
      expect(health).toBe(true);

      const seeded = await inClone(process.execPath, ['apps/server/dist/main.js', 'seed-demo'], 60_000);
      expect(seeded.code, seeded.stderr).toBe(0);
      expect(seeded.stdout).toContain('subdomain demo');
      // The links it prints point at the running server.
      expect(seeded.stdout).toContain(`http://localhost:${port}/api/merchant/v1/stores/`);
      const store = await fetch(`${base}/api/store/demo`);
      expect(store.status).toBe(200);
      expect(await store.json()).toMatchObject({ subdomain: 'demo', name: 'Demo Store' });
      const home = await fetch(`${base}/`);
      expect(home.status).toBe(200);
      expect(await home.text()).toContain('href="/account/demo"');

      // A person pressing Ctrl-C: the signal reaches the whole foreground group.
      process.kill(-server.pid!, 'SIGINT');
      await exited;
      const logs = output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as LogLine);
      expect(logs.some((line) => line.msg === 'stopped')).toBe(true);
      expect(logs.filter((line) => line.level >= 50)).toEqual([]);
      expect(output).not.toMatch(/DeprecationWarning|EBADENGINE/);
    },
  );
});
