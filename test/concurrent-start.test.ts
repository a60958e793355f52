/**
 * Black-box: several hosts started at once on an empty database (a deploy of N API processes).
 * The migration lock (db/orm.ts) lets one migrate while the others wait; then every one serves.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../apps/server/src/db/migrations/index.js';
import { freshDatabase } from './support/databases.js';
import { TEST_REDIS_URL } from './support/env.js';
import { spawnServer, type RunningServer } from './support/server.js';

const started: RunningServer[] = [];
let db: Awaited<ReturnType<typeof freshDatabase>> | undefined;

afterAll(async () => {
  await Promise.all(started.map((server) => server.stop()));
  await db?.drop();
});

describe('three svc processes started at once on an empty database', () => {
  it('one migrates, the others wait for it, and all three serve', async () => {
    db = await freshDatabase();
    const shared = {
      DATABASE_URL: db.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: `svc-test:${randomBytes(6).toString('hex')}:`,
      APP_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    };
    const spawning = [1, 2, 3].map(() =>
      spawnServer({ ...shared, DATA_DIR: mkdtempSync(path.join(tmpdir(), 'svc-start-')) }).then((server) => {
        started.push(server);
        return server;
      }),
    );
    const servers = await Promise.all(spawning);
    for (const server of servers) expect((await fetch(`${server.url}/readyz`)).status).toBe(200);

    const migrated = servers.filter((server) => server.logs.some((line) => line.msg === 'applied migrations'));
    expect(migrated).toHaveLength(1);
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ name: string }>('select name from mikro_orm_migrations order by id');
      expect(rows.map((row) => row.name)).toEqual(MIGRATIONS.map((m) => m.name));
    } finally {
      await client.end();
    }
  });
});
