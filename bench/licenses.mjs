/**
 * licenses: the License API's hot path, `POST /api/v1/licenses/validate` with an instance (what
 * the merchant's software sends at every start), at 32 connections, beside a floor: a bare
 * Fastify + pg server running the same statement and arithmetic and signing the same offline lease
 * (floors/licenses-floor.mjs).
 *
 * One database: a key product (activation limit 3, valid 365 days) with BENCH_LICENSE_KEYS
 * (20,000) keys, all sold (through SQL, to orders of the store, so the unique index is the size
 * of a real catalogue); one of them activated through the API. Every request of the service's
 * load comes from a client address of its own (X-Forwarded-For behind TRUST_PROXY=127.0.0.1), so
 * the per-address limit (600 / 60 s) runs for every request, as in production, without refusing.
 * Before the load the floor's answer must equal the service's.
 *
 * Knobs: BENCH_LICENSE_CONNECTIONS (32), BENCH_LICENSE_KEYS (20000), BENCH_CASES (service,floor).
 */
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { freshDatabase, watchDatabase, withClient } from './lib/db.mjs';
import { fixed, ratioLine, seconds } from './lib/format.mjs';
import { expectStatus, request } from './lib/http.mjs';
import { LOAD_DEFAULTS, measure, prewarm, printLoadResults } from './lib/load.mjs';
import { memoryOf, spawnNode } from './lib/proc.mjs';
import {
  createProduct,
  importKeys,
  problemsAfterStart,
  provisionMerchant,
  REPO_ROOT,
  startService,
  tempDir,
} from './lib/service.mjs';

const CONNECTIONS = Number(process.env.BENCH_LICENSE_CONNECTIONS ?? 32);
const KEYS = Number(process.env.BENCH_LICENSE_KEYS ?? 20_000);

function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
}

/** A client address of its own for each request (the per-address limit never refuses). */
let counter = 0;
function ownAddress(req) {
  counter = (counter + 1) % 16_000_000;
  req.headers = {
    ...req.headers,
    'x-forwarded-for': `10.${(counter >> 16) & 255}.${(counter >> 8) & 255}.${counter & 255}`,
  };
  return req;
}

export default {
  name: 'licenses',
  budgetS: 300,
  title: 'License API validate (POST /api/v1/licenses/validate), service vs floor',
  measures:
    'POST /api/v1/licenses/validate with an instance at 32 connections, each request from its own client address, against a bare Fastify + pg floor running the same statement',

  async run() {
    const started = Date.now();
    const workDir = tempDir('svc-bench-licenses-');
    const db = await freshDatabase();
    const encryptionKey = randomBytes(32);
    console.log(`database ${db.name}`);
    const service = await startService({
      databaseUrl: db.url,
      encryptionKey,
      dataDir: workDir,
      env: { TRUST_PROXY: '127.0.0.1' },
    });
    console.log(`service pid ${service.pid} on ${service.url} (started in ${seconds(Date.now() - started)})`);
    const merchant = await provisionMerchant(service.url, {
      stores: 1,
      scopes: ['order:read'],
      redisKeyPrefix: service.redisKeyPrefix,
    });
    const [storeId] = merchant.storeIds;
    const product = await createProduct(service.url, merchant, storeId, {
      name: 'Bench app',
      price: 9,
      deliveryMethods: ['licenseKeys'],
      licenseActivationLimit: 3,
      licenseValidityDays: 365,
    });
    const keys = Array.from(
      { length: KEYS },
      (_, i) => `BENCH-${String(i).padStart(6, '0')}-${randomBytes(8).toString('hex').toUpperCase()}`,
    );
    for (let i = 0; i < keys.length; i += 10_000) {
      const imported = await importKeys(service.url, merchant, storeId, product.id, keys.slice(i, i + 10_000));
      check(imported.added === Math.min(10_000, keys.length - i), `keys imported (got ${JSON.stringify(imported)})`);
    }
    // Sell every key: one order per key, assigned as a settlement would (the same columns).
    await withClient(db.url, async (client) => {
      await client.query(
        `with o as (
           insert into "order" (id, store_id, status, product_name, price_minor, paid_minor, currency, customer_email, created_at, updated_at, paid_at, completed_at, key_count)
           select 'bo' || k.id, $1, 'completed', 'Bench app', 900, 900, 'USD', 'buyer@bench.test', now(), now(), now(), now(), 1 from license_key k where k.product_id = $2
           returning id
         )
         update license_key k set status = 'assigned', order_id = o.id, assigned_at = now() from o where o.id = 'bo' || k.id`,
        [storeId, product.id],
      );
      await client.query('vacuum analyze license_key');
    });
    const key = keys[Math.floor(keys.length / 2)];
    const activated = await expectStatus(
      request(`${service.url}/api/v1/licenses/activate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: { productId: product.id, key, instanceName: 'bench-machine' },
      }),
      200,
      'activate',
    );
    const body = JSON.stringify({ productId: product.id, key, instanceId: activated.json.instance.id });
    const validatePath = '/api/v1/licenses/validate';
    const served = await expectStatus(
      request(`${service.url}${validatePath}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.parse(body),
      }),
      200,
      'service validate',
    );
    check(
      served.json.valid === true &&
        served.json.instance?.name === 'bench-machine' &&
        served.json.license.activationUsage === 1,
      `the service validates the activated key (got ${served.text})`,
    );
    console.log(
      `seller ${merchant.email}, store ${storeId}, product ${product.id}: ${KEYS.toLocaleString('en-US')} keys, all sold; one activated (instance ${activated.json.instance.id})`,
    );

    const floor = await spawnNode({
      label: 'licenses floor',
      script: path.join(REPO_ROOT, 'bench/floors/licenses-floor.mjs'),
      nodeArgs: (process.env.BENCH_FLOOR_NODE_ARGS ?? '').split(/\s+/).filter(Boolean),
      cwd: REPO_ROOT,
      logFile: path.join(workDir, 'floor.log'),
      env: {
        PORT: '0',
        FLOOR_DATABASE_URL: db.url,
        FLOOR_ENCRYPTION_KEY: encryptionKey.toString('base64'),
        FLOOR_PUBLIC_URL: JSON.parse(Buffer.from(served.json.lease.split('.')[1], 'base64url')).iss,
        NODE_ENV: 'production',
      },
      isReady: (line) =>
        typeof line.msg === 'string' && line.msg.startsWith('floor listening') && typeof line.port === 'number',
    });
    const floorAnswer = await expectStatus(
      request(`${floor.url}${validatePath}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.parse(body),
      }),
      200,
      'floor validate',
    );
    // The same answer, the lease aside; the leases alike but for their times (a second apart at most) and signatures.
    const leaseParts = (lease) => {
      const [header, claims] = lease
        .split('.')
        .slice(0, 2)
        .map((part) => JSON.parse(Buffer.from(part, 'base64url')));
      return { header, claims: { ...claims, iat: undefined, exp: undefined }, span: claims.exp - claims.iat };
    };
    check(
      isDeepStrictEqual(leaseParts(floorAnswer.json.lease), leaseParts(served.json.lease)),
      `the floor's lease is the service's (${floorAnswer.json.lease} vs ${served.json.lease})`,
    );
    if (!isDeepStrictEqual({ ...floorAnswer.json, lease: null }, { ...served.json, lease: null })) {
      console.log('service: ', served.text);
      console.log('floor:   ', floorAnswer.text);
      check(false, "the floor's answer equals the service's");
    }
    const wrong = await expectStatus(
      request(`${floor.url}${validatePath}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: { productId: product.id, key: 'NOT-A-KEY' },
      }),
      404,
      'floor 404',
    );
    check(wrong.json.code === 'not_found', 'the floor answers a wrong key 404');
    console.log(`checked: floor pid ${floor.pid} answers exactly as the service does`);

    const load = { method: 'POST', body, headers: { 'content-type': 'application/json' }, connections: CONNECTIONS };
    console.log(
      `load: ${CONNECTIONS} connections; each server pre-warmed until its CPU per request settles (${LOAD_DEFAULTS.prewarmMinS}-${LOAD_DEFAULTS.prewarmMaxS} s), then per case ${LOAD_DEFAULTS.warmupS} s warm-up + ${LOAD_DEFAULTS.durationS} s measured`,
    );
    const allCases = [
      {
        id: 'service',
        name: 'service validate',
        url: `${service.url}${validatePath}`,
        pid: service.pid,
        setupRequest: ownAddress,
        ...load,
      },
      { id: 'floor', name: 'floor validate', url: `${floor.url}${validatePath}`, pid: floor.pid, ...load },
    ];
    const cases = process.env.BENCH_CASES
      ? process.env.BENCH_CASES.split(',').map(
          (id) => allCases.find((spec) => spec.id === id.trim()) ?? check(false, `unknown case ${id}`),
        )
      : allCases;
    const watch = await watchDatabase(db.name);
    const results = [];
    for (const spec of cases) {
      process.stdout.write(`  pre-warming the ${spec.id} ... `);
      const warm = await prewarm({
        urls: [spec.url],
        pid: spec.pid,
        method: spec.method,
        body: spec.body,
        headers: spec.headers,
        setupRequest: spec.setupRequest,
        connections: spec.connections,
      });
      console.log(
        `${warm.requests.toLocaleString('en-US')} requests in ${warm.seconds} s; server CPU ms/request per 5 s: ${warm.curve.map((v) => fixed(v, 2)).join(' > ')}`,
      );
      check(warm.failures === 0, `pre-warm of the ${spec.id} saw ${warm.failures} non-2xx answers or errors`);
      process.stdout.write(`  ${spec.name} ... `);
      const result = await measure({ ...spec, backendPids: watch.backendPids, transactions: watch.transactions });
      results.push(result);
      console.log(
        `${fixed(result.rps, 0)} req/s, p50 ${fixed(result.p50, 1)} ms, p99 ${fixed(result.p99, 1)} ms, non-2xx ${result.non2xx}; ` +
          `cores busy: server ${fixed(result.cpu.server, 2)}, pg ${fixed(result.cpu.postgres, 2)}, load ${fixed(result.cpu.load, 2)}, other ${fixed(result.cpu.other, 2)}`,
      );
    }
    await watch.close();
    const serviceLogs = service.logs();
    const serviceProblems = problemsAfterStart(serviceLogs);
    const keyInLogs = serviceLogs.some((line) => JSON.stringify(line).includes(key));
    const serviceHwm = memoryOf(service.pid).hwmMiB;
    const floorHwm = memoryOf(floor.pid).hwmMiB;
    await floor.stop();
    await service.stop();
    await db.drop();

    const byId = printLoadResults('licenses results', cases, results);
    const ratios = {};
    if (byId.service && byId.floor) {
      ratios.throughput = byId.service.rps / byId.floor.rps;
      ratios.cpu = byId.service.serverCpuMsPerRequest / byId.floor.serverCpuMsPerRequest;
      console.log(
        ratioLine('service/floor throughput', ratios.throughput, { op: '>=', value: 0.6, note: 'License API issue' }),
      );
      console.log(ratioLine('service/floor server CPU per request', ratios.cpu));
      console.log(`p99: service ${fixed(byId.service.p99, 1)} ms, floor ${fixed(byId.floor.p99, 1)} ms`);
    }
    // What the lease's signature costs a call (both sides pay it): Ed25519 with node:crypto, alone.
    const { privateKey } = generateKeyPairSync('ed25519');
    const signed = Buffer.from(served.json.lease.split('.').slice(0, 2).join('.'));
    const signStarted = performance.now();
    for (let i = 0; i < 20_000; i++) sign(null, signed, privateKey);
    console.log(
      `the lease's Ed25519 signature: ${fixed(((performance.now() - signStarted) * 1000) / 20_000, 1)} µs per call`,
    );
    console.log(
      `process peak RSS over the whole run (VmHWM): service ${fixed(serviceHwm, 0)} MiB, floor ${fixed(floorHwm, 0)} MiB`,
    );
    console.log(
      `service log lines at warn or above after start-up: ${serviceProblems.length}; the key in a log line: ${keyInLogs ? 'YES' : 'no'}`,
    );
    check(!keyInLogs, 'the key string appears in no log line');
    const failed = results.filter((result) => result.non2xx > 0 || result.errors > 0 || result.timeouts > 0);
    for (const result of failed)
      console.log(
        `!! ${result.name}: non-2xx ${result.non2xx} ${JSON.stringify(result.statusCodes)}, errors ${result.errors}, timeouts ${result.timeouts}`,
      );
    console.log(`\nlicenses took ${seconds(Date.now() - started)}`);
    if (failed.length > 0)
      throw new Error(`${failed.length} case(s) saw non-2xx answers or errors; the figures above do not count`);
    return { results, ratios };
  },
};
