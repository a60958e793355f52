/**
 * The README's run command on a machine with nothing configured: no DATABASE_URL, no
 * REDIS_URL, no .env. It must boot an embedded PostgreSQL, answer /healthz, and keep what
 * was written across a restart.
 */
import { chmodSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openOrm } from '../apps/server/src/db/orm.js';
import { createStore } from './support/factories.js';
import { spawnServer, type RunningServer } from './support/server.js';

const cwd = mkdtempSync(path.join(tmpdir(), 'svc-fresh-'));
chmodSync(cwd, 0o755); // like a checkout: the postgres user must be able to enter it

const bare = {
  NODE_ENV: undefined,
  DATABASE_URL: undefined,
  REDIS_URL: undefined,
  APP_ENCRYPTION_KEY: undefined,
  DATA_DIR: undefined,
};

let running: RunningServer | undefined;
afterAll(async () => {
  await running?.stop();
});

function embeddedUrl(server: RunningServer): string {
  const line = server.logs.find((entry) => entry.msg === 'embedded PostgreSQL is running');
  expect(line).toBeDefined();
  const { password } = JSON.parse(readFileSync(path.join(cwd, '.data', 'pg.json'), 'utf8')) as { password: string };
  return `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${String(line!.port)}/svc`;
}

describe('zero-configuration start', () => {
  it(
    'boots on embedded PostgreSQL, answers /healthz, and keeps a store across a restart',
    { timeout: 180_000 },
    async () => {
      running = await spawnServer(bare, cwd);
      expect((await fetch(`${running.url}/healthz`)).status).toBe(200);
      expect(await (await fetch(`${running.url}/readyz`)).json()).toEqual({
        status: 'ready',
        checks: { database: 'ok', redis: 'not configured' },
      });
      expect(running.logs.some((entry) => entry.msg.includes('no REDIS_URL'))).toBe(true);

      const orm = await openOrm(embeddedUrl(running), { poolMax: 1 });
      const store = await createStore(orm.em.fork(), { name: 'Survives Restarts' });
      await orm.close();
      expect((await fetch(`${running.url}/api/store/${store.subdomain}`)).status).toBe(200);

      expect(await running.stop()).toBe(0);
      running = await spawnServer(bare, cwd);
      const response = await fetch(`${running.url}/api/store/${store.subdomain}`);
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ id: store.id, name: 'Survives Restarts' });

      // A clean stop of a restarted embedded database (whose own database already existed) says nothing at error level.
      const second = running;
      expect(await second.stop()).toBe(0);
      expect(second.logs.filter((line) => line.level >= 50)).toEqual([]);
      expect(second.logs.some((line) => line.msg === 'stopped')).toBe(true);
    },
  );

  it(
    'refuses a second server on the same data directory, naming the process that holds it',
    { timeout: 180_000 },
    async () => {
      running = await spawnServer(bare, cwd);
      const second = await spawnServer(bare, cwd).then(
        () => undefined,
        (error: Error) => error.message,
      );
      expect(second).toMatch(new RegExp(`in use by svc process ${running.process.pid}`));
      expect((await fetch(`${running.url}/healthz`)).status).toBe(200);
    },
  );
});
