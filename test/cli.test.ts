/** Black-box: the operator commands do from a shell what the dashboard API does. */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY_SCOPES } from '@svc/schemas';
import { ALL_COMMANDS } from '../apps/server/src/cli.js';
import { freshDatabase } from './support/databases.js';
import { TEST_REDIS_URL } from './support/env.js';
import { createStoreFor, dashboard, registerSeller } from './support/seller.js';
import { SERVER_ENTRY, spawnServer, type RunningServer } from './support/server.js';

const run = promisify(execFile);
let db: Awaited<ReturnType<typeof freshDatabase>>;
let env: Record<string, string>;
let server: RunningServer | undefined;

beforeAll(async () => {
  db = await freshDatabase();
  env = {
    PATH: process.env.PATH ?? '',
    NODE_ENV: 'test',
    DATABASE_URL: db.url,
    // With Redis configured the commands must still exit (a late connection once kept them alive).
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: `svc-test:${randomBytes(6).toString('hex')}:`,
    DATA_DIR: mkdtempSync(path.join(tmpdir(), 'svc-cli-')),
    APP_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  };
});
afterAll(async () => {
  await server?.stop();
  await db?.drop();
});

async function svcIn(
  cwd: string,
  environment: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [SERVER_ENTRY, ...args], { env: environment, cwd });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const svc = (...args: string[]) => svcIn(process.cwd(), env, ...args);

describe('svc operator commands', () => {
  it(
    'creates a user, a store and a key that the merchant API accepts; bans and unbans the store',
    { timeout: 60_000 },
    async () => {
      const subdomain = `cli-${randomBytes(4).toString('hex')}`;
      expect((await svc('create-user', '--email', 'Ops@Example.test', '--password', 'long enough pw')).stdout).toMatch(
        /created user \w+ <ops@example\.test>/,
      );
      const store = await svc(
        'create-store',
        '--owner',
        'ops@example.test',
        '--name',
        'CLI Shop',
        '--subdomain',
        subdomain,
      );
      const storeId = /created store (\w+)/.exec(store.stdout)?.[1];
      expect(storeId).toBeDefined();
      const created = await svc(
        'create-api-key',
        '--owner',
        'ops@example.test',
        '--name',
        'ci',
        '--scopes',
        'order:read',
        '--stores',
        subdomain,
      );
      const key = /^(sk_live_[0-9A-Za-z]{40})$/m.exec(created.stdout)?.[1];
      expect(key).toBeDefined();

      server = await spawnServer(env);
      const orders = await fetch(`${server.url}/api/merchant/v1/stores/${storeId}/orders`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(orders.status).toBe(200);

      // --mode test makes a test key: it answers for the store's test objects only (an empty list here).
      const testCreated = await svc(
        'create-api-key',
        '--owner',
        'ops@example.test',
        '--name',
        'ci-test',
        '--scopes',
        'order:read',
        '--stores',
        subdomain,
        '--mode',
        'test',
      );
      expect(testCreated.stdout).toContain('created test API key');
      const testKey = /^(sk_test_[0-9A-Za-z]{40})$/m.exec(testCreated.stdout)?.[1];
      expect(testKey).toBeDefined();
      const testOrders = await fetch(`${server.url}/api/merchant/v1/stores/${storeId}/orders`, {
        headers: { authorization: `Bearer ${testKey}` },
      });
      expect(testOrders.status).toBe(200);
      expect(((await testOrders.json()) as { orders: unknown[] }).orders).toEqual([]);
      const badMode = await svc(
        'create-api-key',
        '--owner',
        'ops@example.test',
        '--name',
        'x',
        '--scopes',
        'order:read',
        '--stores',
        subdomain,
        '--mode',
        'prod',
      );
      expect(badMode.code).toBe(2);
      expect(badMode.stderr).toContain('mode');

      expect((await svc('ban-store', subdomain)).stdout).toContain(`banned ${subdomain}`);
      expect((await fetch(`${server.url}/api/store/${subdomain}`)).status).toBe(403);
      expect((await svc('unban-store', subdomain)).stdout).toContain(`unbanned ${subdomain}`);
      expect((await fetch(`${server.url}/api/store/${subdomain}`)).status).toBe(200);
    },
  );

  it(
    'seeds a demo store with every delivery kind, keys, a coupon, orders in every status and a working key; a second run changes nothing',
    { timeout: 60_000 },
    async () => {
      const seeded = await svc('seed-demo');
      expect(seeded.code).toBe(0);
      const key = /(sk_live_[0-9A-Za-z]{40})/.exec(seeded.stdout)?.[1];
      const storeId = /\(([a-z0-9]{20,})\), subdomain demo/.exec(seeded.stdout)?.[1];
      expect(key && storeId).toBeTruthy();
      server ??= await spawnServer(env);
      const front = await (await fetch(`${server.url}/api/stores/by-subdomain/demo/storefront`)).json();
      const kinds = new Set(front.products.flatMap((p: { deliveryMethods: string[] }) => p.deliveryMethods));
      expect(kinds).toEqual(new Set(['licenseKeys', 'downloadFiles', 'manualDelivery', 'deliveryInstructions']));
      expect(front.products.find((p: { stock: number | null }) => p.stock !== null).stock).toBe(20);
      const orders = await fetch(`${server.url}/api/merchant/v1/stores/${storeId}/orders?limit=100`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(orders.status).toBe(200);
      // The printed curl shows real data: a few dozen orders in every status an order rests in, some with keys.
      const list = (await orders.json()) as { orders: Array<{ status: string; keyCount: number; createdAt: string }> };
      expect(list.orders.length).toBeGreaterThanOrEqual(30);
      expect(new Set(list.orders.map((order) => order.status))).toEqual(
        new Set(['pending', 'processing', 'completed', 'refunded', 'cancelled', 'expired']),
      );
      expect(
        list.orders.filter((order) => order.status === 'completed' && order.keyCount > 0).length,
      ).toBeGreaterThanOrEqual(5);
      expect(Date.now() - Date.parse(list.orders.at(-1)!.createdAt)).toBeGreaterThan(20 * 24 * 3_600_000);
      const webhooks = await (
        await fetch(`${server.url}/api/merchant/v1/stores/${storeId}/webhooks`, {
          headers: { authorization: `Bearer ${key}` },
        })
      ).json();
      expect(webhooks.webhooks).toEqual([expect.objectContaining({ enabled: false })]);
      expect(seeded.stdout).toContain(`curl -H "Authorization: Bearer ${key}" `);

      const again = await svc('seed-demo');
      expect(again.code).toBe(0);
      expect(again.stdout).toContain('already exists');
      expect(again.stdout).toMatch(/create-api-key --owner demo@svc\.test .*--stores demo/);
    },
  );

  it('checks the arguments before starting anything: exit 2 with the usage line, and no database started', async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), 'svc-cli-bare-'));
    const bare = { PATH: process.env.PATH ?? '', NODE_ENV: 'test' };
    for (const args of [
      ['create-user'],
      ['create-user', '--email', 'a@b.test', '--nope', 'x'],
      ['ban-store'],
      ['seed-demo', 'extra'],
      ['create-api-key', '--owner', 'a@b.test'],
    ]) {
      const result = await svcIn(cwd, bare, ...args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(new RegExp(`^svc ${args[0]}: .+\nusage: svc ${args[0]}`));
    }
    // With no DATABASE_URL a database would have been initialised in .data/pg.
    expect(existsSync(path.join(cwd, '.data'))).toBe(false);

    const unknown = await svcIn(cwd, bare, 'bogus');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^svc: unknown command "bogus"\nusage: svc <command>/);
    const help = await svcIn(cwd, bare, '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('seed-demo');
  });

  it('says in one sentence why a command failed', async () => {
    // The discard port, where nothing listens here (the suite's other unreachable address too): a
    // port found free and let go can be taken by another test's server before the command connects.
    const closed = 9;
    const result = await svcIn(
      tmpdir(),
      { ...env, DATABASE_URL: `postgresql://postgres@127.0.0.1:${closed}/svc` },
      'create-user',
      '--email',
      'x@example.test',
      '--password',
      'long enough pw',
    );
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      `svc create-user: nothing answers at 127.0.0.1:${closed} (connection refused): start PostgreSQL, or check DATABASE_URL`,
    );
  });

  it('exits 2 with the reason and the usage on bad arguments', async () => {
    const bad = await svc(
      'create-api-key',
      '--owner',
      'ops@example.test',
      '--name',
      'x',
      '--scopes',
      'orders:everything',
      '--stores',
      'nope',
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/usage: svc create-api-key/);
    const unknown = await svc('ban-store', 'no-such-store');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('No store has the subdomain no-such-store');
  });

  it(
    '--scopes all makes a key that holds every scope the server defines, and the merchant API accepts it for each',
    { timeout: 60_000 },
    async () => {
      server ??= await spawnServer(env);
      const seller = await registerSeller(server.url);
      const store = await createStoreFor(seller, 'All scopes');
      const created = await svc(
        'create-api-key',
        '--owner',
        seller.email,
        '--name',
        'everything',
        '--scopes',
        'all',
        '--stores',
        store.subdomain,
      );
      expect(created.code, created.stderr).toBe(0);
      const key = /^(sk_live_[0-9A-Za-z]{40})$/m.exec(created.stdout)![1]!;

      // The key's record, as the dashboard lists it.
      const keys = (await (await dashboard(seller, 'GET', '/api/dashboard/api-keys')).json()) as {
        apiKeys: Array<{ prefix: string; scopes: string[] }>;
      };
      const record = keys.apiKeys.find((apiKey) => key.startsWith(apiKey.prefix));
      expect(record?.scopes.slice().sort()).toEqual([...API_KEY_SCOPES].sort());
      // And it opens routes of different scopes.
      for (const path of ['orders', 'products', 'webhooks', 'coupons', 'events', 'licenses']) {
        const response = await fetch(`${server.url}/api/merchant/v1/stores/${store.id}/${path}`, {
          headers: { authorization: `Bearer ${key}` },
        });
        expect(response.status, path).toBe(200);
      }

      // `all` stands alone.
      const mixed = await svc(
        'create-api-key',
        '--owner',
        seller.email,
        '--name',
        'x',
        '--scopes',
        'all,order:read',
        '--stores',
        store.subdomain,
      );
      expect(mixed.code).toBe(2);
      expect(mixed.stderr).toMatch(/--scopes all stands alone/);
    },
  );
});

describe('svc COMMAND --help', () => {
  const cwd = mkdtempSync(path.join(tmpdir(), 'svc-cli-help-'));
  // No DATABASE_URL: a command that started would initialise an embedded PostgreSQL in .data.
  const bare = { PATH: process.env.PATH ?? '', NODE_ENV: 'test' };

  it('svc --help lists exactly the commands there are', async () => {
    const help = await svcIn(cwd, bare, '--help');
    expect(help.code).toBe(0);
    const listed = [...help.stdout.matchAll(/^ {2}([a-z-]+) {2,}/gm)].map((match) => match[1]);
    expect(listed).toEqual(Object.keys(ALL_COMMANDS));
  });

  // Table-driven over the declarations: a new command is in this table as soon as it exists.
  it.each(
    Object.entries(ALL_COMMANDS).flatMap(([name, command]) => [
      [name, '--help', command] as const,
      [name, '-h', command] as const,
    ]),
  )(
    'svc %s %s prints its usage, a line per option and an example, exits 0 and starts nothing',
    async (name, flag, command) => {
      const result = await svcIn(cwd, bare, name, flag);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toBe('');
      const lines = result.stdout.split('\n');
      expect(lines[0]).toMatch(new RegExp(`^usage: svc ${name}( |$)`));
      for (const option of command.options) {
        expect(lines[0]).toContain(`--${option.name} <${option.value}>`);
        const line = lines.find((candidate) => candidate.startsWith(`  --${option.name} <`));
        expect(line, option.name).toContain(option.description);
      }
      for (const argument of command.arguments)
        expect(lines.some((line) => line.startsWith(`  <${argument.name}>`))).toBe(true);
      expect(lines.some((line) => /^ {2}-h, --help +print this help and exit$/.test(line))).toBe(true);
      const example = lines.indexOf('Example:');
      expect(example).toBeGreaterThan(0);
      expect(lines[example + 1]).toContain(`svc ${name}`);
      // Nothing started: no embedded PostgreSQL in .data, no server, no log.
      expect(existsSync(path.join(cwd, '.data'))).toBe(false);
    },
  );

  it('help wins over a usage mistake on the same line, and `svc help COMMAND` says the same', async () => {
    const withMistake = await svcIn(cwd, bare, 'create-user', '--nope', 'x', '--help');
    expect(withMistake.code).toBe(0);
    expect(withMistake.stdout).toMatch(/^usage: svc create-user --email <email>/);
    const viaHelp = await svcIn(cwd, bare, 'help', 'create-user');
    expect(viaHelp.stdout).toBe(withMistake.stdout);
    // Production without any of its configuration: help reads none of it.
    const production = await svcIn(cwd, { ...bare, NODE_ENV: 'production' }, 'serve', '--help');
    expect(production.code, production.stderr).toBe(0);
    expect(production.stdout).toMatch(/^usage: svc serve\n/);
    expect(existsSync(path.join(cwd, '.data'))).toBe(false);
  });
});
