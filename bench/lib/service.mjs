/**
 * The service under test, run the way an operator runs it: the built
 * `apps/server/dist/main.js serve` as its own process, on a free loopback port, against a
 * fresh database it migrates itself, with a seller, stores and an API key made through the
 * real HTTP API.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createClient } from 'redis';
import { onCleanup } from './cleanup.mjs';
import { expectStatus, request } from './http.mjs';
import { spawnNode } from './proc.mjs';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const SERVER_DIST = path.join(REPO_ROOT, 'apps/server/dist');
export const SERVER_ENTRY = path.join(SERVER_DIST, 'main.js');
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Refuses to run against a missing build: the bench measures dist, it never builds. */
/** The service's log lines at warn or above after it said it listens (start-up warnings are expected). */
export function problemsAfterStart(serviceLogs) {
  const listeningAt = serviceLogs.findIndex(
    (line) => typeof line.msg === 'string' && line.msg.startsWith('svc listening'),
  );
  return serviceLogs.slice(listeningAt + 1).filter((line) => line.level >= 40);
}

export function assertBuilt() {
  for (const file of [SERVER_ENTRY, path.join(SERVER_DIST, 'lib/cursor.js')]) {
    if (!existsSync(file))
      throw new Error(
        `${path.relative(REPO_ROOT, file)} is missing: build the server first (npm run build); the bench does not build`,
      );
  }
}

/** A module of the built server (plain ESM), e.g. `lib/cursor.js`. */
export function importDist(relative) {
  return import(pathToFileURL(path.join(SERVER_DIST, relative)).href);
}

/** A temp directory removed at cleanup. */
export function tempDir(prefix) {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  onCleanup(`remove ${dir}`, () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A random 127.x.y.z (never 127.0.0.1) for this run's set-up requests. */
export function randomLoopback() {
  const [a, b, c] = randomBytes(3);
  return `127.${a}.${b}.${Math.max(2, c % 254)}`;
}

/**
 * A Redis key prefix of this run's own (`svc:bench:<random>:`), every key under which is
 * deleted (SCAN + DEL) at cleanup; for benchmarks that talk to Redis themselves.
 */
export function ownRedisPrefix() {
  const prefix = `svc:bench:${randomBytes(4).toString('hex')}:`;
  onCleanup(`delete Redis keys ${prefix}*`, () => deleteRedisKeysMatching(`${prefix}*`));
  return prefix;
}

/**
 * The flags every svc process runs with (`npm start` passes them; apps/server/src/node-flags.ts),
 * then any of BENCH_SERVER_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" (a later flag wins).
 */
export async function serviceNodeArgs(extra = process.env.BENCH_SERVER_NODE_ARGS) {
  const { NODE_FLAGS } = await import(pathToFileURL(path.join(SERVER_DIST, 'node-flags.js')).href);
  return [...NODE_FLAGS, ...(extra ?? '').split(/\s+/).filter(Boolean)];
}

/** The environment every svc process starts with (`PROCESS_ENV` of apps/server/src/node-flags.ts, as `npm start` sets it). */
export async function serviceEnv() {
  const { PROCESS_ENV } = await import(pathToFileURL(path.join(SERVER_DIST, 'node-flags.js')).href);
  return { ...PROCESS_ENV };
}

/**
 * Starts `svc serve`; resolves once it logs `svc listening ...` with its port.
 *
 * Each service gets its own REDIS_KEY_PREFIX (`svc:bench:<random>:`), so its rate-limit
 * windows and its webhook dispatcher's wake-up channel (`<prefix>events`, published on
 * every commit that writes an outbox event) are its own: the bench neither wakes the
 * dispatchers of colleagues' servers on the shared Redis nor is woken by their tests. Every
 * key under the prefix is deleted at cleanup.
 */
export async function startService({
  databaseUrl,
  encryptionKey,
  env = {},
  dataDir = tempDir('svc-bench-data-'),
  nodeArgs,
  logFile = path.join(dataDir, 'server.log'),
}) {
  nodeArgs ??= await serviceNodeArgs();
  const redisKeyPrefix = env.REDIS_KEY_PREFIX ?? `svc:bench:${randomBytes(4).toString('hex')}:`;
  onCleanup(`delete Redis keys ${redisKeyPrefix}*`, () => deleteRedisKeysMatching(`${redisKeyPrefix}*`));
  const service = await spawnNode({
    label: 'svc serve',
    script: SERVER_ENTRY,
    args: ['serve'],
    nodeArgs,
    cwd: REPO_ROOT,
    logFile,
    env: {
      PORT: '0',
      HOST: '127.0.0.1',
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      APP_ENCRYPTION_KEY: encryptionKey.toString('base64'),
      DATA_DIR: dataDir,
      // Lifts the per-key budget (300/min) so the load is not just 429s; the limiter still runs.
      MERCHANT_RATE_LIMIT_PER_MINUTE: '1000000000',
      REDIS_KEY_PREFIX: redisKeyPrefix,
      ...(await serviceEnv()),
      ...env,
    },
    isReady: (line) =>
      typeof line.msg === 'string' && line.msg.startsWith('svc listening') && typeof line.port === 'number',
  });
  return { ...service, dataDir, redisKeyPrefix };
}

/**
 * Registers a seller, creates `stores` stores and one API key with `scopes` over all of
 * them, through the real routes. Returns what the load needs.
 */
export async function provisionMerchant(
  baseUrl,
  { stores = 1, scopes = ['order:read'], sourceAddress = randomLoopback(), redisKeyPrefix = 'svc:' } = {},
) {
  const tag = randomBytes(4).toString('hex');
  const email = `bench-${tag}@example.test`;
  const password = `pw-${randomBytes(12).toString('hex')}`;
  const registered = await expectStatus(
    request(`${baseUrl}/api/auth/register`, { method: 'POST', body: { email, password }, localAddress: sourceAddress }),
    201,
    'POST /api/auth/register',
  );
  const setCookie = [].concat(registered.headers['set-cookie'] ?? []).find((value) => value.startsWith('svc_session='));
  if (!setCookie) throw new Error('register answered without a svc_session cookie');
  const session = { cookie: setCookie.split(';')[0], 'x-csrf-token': registered.json.csrfToken };
  const storeIds = [];
  for (let i = 0; i < stores; i++) {
    const created = await expectStatus(
      request(`${baseUrl}/api/dashboard/stores`, {
        method: 'POST',
        headers: session,
        body: { name: `Bench store ${i + 1}`, subdomain: `bench-${tag}-${i + 1}` },
        localAddress: sourceAddress,
      }),
      201,
      'POST /api/dashboard/stores',
    );
    storeIds.push(created.json.id);
  }
  const keyed = await expectStatus(
    request(`${baseUrl}/api/dashboard/api-keys`, {
      method: 'POST',
      headers: session,
      body: { name: 'bench', scopes, storeIds },
      localAddress: sourceAddress,
    }),
    201,
    'POST /api/dashboard/api-keys',
  );
  // Our entries in the shared Redis: the register window of our source address and the
  // key's merchant window (up to a minute of hits). They expire anyway; drop them now.
  onCleanup('delete bench rate-limit windows in Redis', () =>
    deleteRedisKeys([
      `${redisKeyPrefix}rl:auth.register:${sourceAddress}`,
      `${redisKeyPrefix}rl:merchant:key:${keyed.json.apiKey.id}`,
    ]),
  );
  return {
    email,
    userId: registered.json.user.id,
    storeIds,
    apiKey: keyed.json.key,
    apiKeyId: keyed.json.apiKey.id,
    sourceAddress,
    session,
  };
}

/** `POST /api/dashboard/stores/{storeId}/products` as the seller (cookie + CSRF); resolves the created product. */
export async function createProduct(baseUrl, merchant, storeId, product) {
  const created = await expectStatus(
    request(`${baseUrl}/api/dashboard/stores/${storeId}/products`, {
      method: 'POST',
      headers: merchant.session,
      body: product,
      localAddress: merchant.sourceAddress,
    }),
    201,
    'POST /api/dashboard/stores/{storeId}/products',
  );
  return created.json;
}

/** `POST /api/dashboard/stores/{storeId}/products/{productId}/license-keys`; resolves { added, duplicates }. */
export async function importKeys(baseUrl, merchant, storeId, productId, keys) {
  const imported = await expectStatus(
    request(`${baseUrl}/api/dashboard/stores/${storeId}/products/${productId}/license-keys`, {
      method: 'POST',
      headers: merchant.session,
      body: { keys },
      localAddress: merchant.sourceAddress,
    }),
    200,
    'POST /api/dashboard/stores/{storeId}/products/{productId}/license-keys',
  );
  return imported.json;
}

async function withRedis(run) {
  const client = createClient({ url: REDIS_URL, socket: { connectTimeout: 2_000, reconnectStrategy: false } });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.close();
  }
}

async function deleteRedisKeys(keys) {
  await withRedis((client) => client.del(keys));
}

/** Deletes every key matching `pattern` (SCAN, never KEYS); only ever called with a bench's own prefix. */
async function deleteRedisKeysMatching(pattern) {
  await withRedis(async (client) => {
    for await (const batch of client.scanIterator({ MATCH: pattern, COUNT: 500 })) {
      const keys = Array.isArray(batch) ? batch : [batch];
      if (keys.length > 0) await client.del(keys);
    }
  });
}
