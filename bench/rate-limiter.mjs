/**
 * rate-limiter: the latency the shared (Redis) rate limiter adds to a request. Target (issue
 * 9): under 1 ms at p50.
 *
 * 1. Micro, in this process, against the real Redis: the service's own limiter object, built
 *    from the built server exactly as runtime.ts builds `deps.limiter`: `connectRedis(url)`
 *    (node-redis, offline queue off), `new RedisRateLimitStore(client.withCommandOptions({ timeout:
 *    0 }), '<prefix>rl:', 250)` (its own 250 ms deadline per hit, node-redis's own timeout off) wrapped in `FallbackRateLimitStore` with the in-process
 *    `MemoryRateLimitStore` as fallback. One `hit()` timed at a time (sequential) and with 16
 *    in flight (16 loops), for: one key always allowed (max 1e9/min, the merchant budget as
 *    the benches run it), one key over its budget (max 300/min: after the first 300 every
 *    hit is the 429 path), 1,000 keys in turn (per-client windows); beside floors on the same
 *    client: a bare `PING` and a bare `EVALSHA` of a trivial script with the same keys and
 *    arguments (`return {1, 1, 0}`), and the in-process `MemoryRateLimitStore.hit()`. Also
 *    the client-side CPU per hit (this process: what the service's event loop pays), Redis's
 *    own CPU per operation (`INFO cpu`) and the commands it processed per operation (`INFO
 *    stats`: the script's own calls count; Redis is shared, so both are approximate).
 *
 * 2. End to end: the same build served twice on the same database, identical but for
 *    REDIS_URL: service A with it (the Redis limiter: one EVALSHA round trip per request),
 *    service B without it (runtime.ts then limits in process with MemoryRateLimitStore, whose
 *    hit costs about a microsecond, see 1). Both answer a rate-limited route, the merchant
 *    order detail `GET /api/merchant/v1/stores/{storeId}/orders/{orderId}` (Bearer key; one
 *    limiter hit per request on the key's `merchant` budget, lifted to 1e9/min as in every
 *    bench so all are allowed).
 *    - Paired, one request at a time (the headline): one client sends A, B, B, A, A, B, ...
 *      over one keep-alive connection to each, the next request when the previous answer has
 *      arrived, so there is no queueing (latency = the request's own service time) and both
 *      services see the same machine at the same moments: the other tenants' load, which on a
 *      shared box moves p50 by milliseconds from one run to the next, falls on both alike.
 *      Added latency = p50(A) - p50(B) of the same round; median over the rounds
 *      (BENCH_LIMITER_PAIRED_ROUNDS, 5). A null control follows each round: A against C, a third
 *      service identical to A (Redis limiter too), to show how far two identical processes
 *      differ (JIT and heap layout vary from process to process).
 *    - Under load: autocannon at 16 connections on A, then B (then B, A), in rounds
 *      (BENCH_LIMITER_ROUNDS, 2); added p50 and server CPU per request, A - B of the same
 *      round, median over rounds.
 *    Nothing else in a read request uses Redis (the service uses
 *    it only for the limiter, the readiness ping and the dispatcher's wake-ups), so A - B is
 *    the limiter's Redis work. (Comparing a route at a limit it never reaches with the same
 *    route at a limit it does is not a difference: both run the Lua.)
 *
 * Knobs: BENCH_LIMITER_MICRO_S (3: measured seconds per micro case, after 0.5 s unmeasured),
 * BENCH_LIMITER_CONTROL (1: also pair A with C, a third service identical to A, as a null
 * control; 0 skips it), BENCH_LIMITER_PAIRED_ROUNDS (5: rounds of the paired measurement), BENCH_LIMITER_ROUNDS (2:
 * rounds of each loaded A/B pair), BENCH_LIMITER_CONNECTIONS
 * (16: connection counts of the loaded A/B cases, comma-separated; 0 skips them);
 * BENCH_DURATION / BENCH_WARMUP (seconds per round / unmeasured before it) and
 * BENCH_PREWARM_* as in lib/load.mjs.
 */
import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { check } from './lib/check.mjs';
import { freshDatabase, watchDatabase } from './lib/db.mjs';
import { fixed, seconds } from './lib/format.mjs';
import { expectStatus, request } from './lib/http.mjs';
import { LOAD_DEFAULTS, measure, prewarm } from './lib/load.mjs';
import { memoryOf } from './lib/proc.mjs';
import { createProduct, provisionMerchant, startService, tempDir } from './lib/service.mjs';
import { CONNECTION_COUNTS, CONTROL, PAIRED_ROUNDS, ROUNDS } from './rate-limiter/knobs.mjs';
import { runMicro } from './rate-limiter/micro.mjs';
import { pairedRound } from './rate-limiter/paired.mjs';
import { report } from './rate-limiter/report.mjs';

export default {
  name: 'rate-limiter',
  /** Seconds this benchmark may take at most (run.mjs sums these into the run's time budget). */
  budgetS: 900,
  title: 'Rate limiter: added latency (micro: one hit against Redis; end to end: Redis limiter vs in-process)',
  measures:
    'RedisRateLimitStore.hit() vs PING / EVALSHA floors on the same client; a rate-limited merchant route served with REDIS_URL vs without (in-process limiter): added p50 (target < 1 ms)',

  async run() {
    const started = Date.now();

    // ------------------------------------------------------------------------------------
    // 1. Micro
    const micro = await runMicro();

    // ------------------------------------------------------------------------------------
    // 2. End to end: A (REDIS_URL) and B (no REDIS_URL) on one database.
    const workDir = tempDir('svc-bench-limiter-');
    const db = await freshDatabase();
    const encryptionKey = randomBytes(32);
    console.log(`\nend to end: database ${db.name}`);
    const serviceA = await startService({ databaseUrl: db.url, encryptionKey, dataDir: workDir });
    const serviceB = await startService({
      databaseUrl: db.url,
      encryptionKey,
      dataDir: tempDir('svc-bench-limiter-b-'),
      env: { REDIS_URL: undefined },
    });
    const serviceC = CONTROL
      ? await startService({ databaseUrl: db.url, encryptionKey, dataDir: tempDir('svc-bench-limiter-c-') })
      : undefined;
    const noRedisWarning = serviceB
      .logs()
      .some((line) => typeof line.msg === 'string' && line.msg.startsWith('no REDIS_URL'));
    check(noRedisWarning, 'service B says it limits in process (no REDIS_URL)');
    console.log(
      `service A (Redis limiter) pid ${serviceA.pid} on ${serviceA.url}; service B (in-process limiter, no REDIS_URL) pid ${serviceB.pid} on ${serviceB.url}`,
    );
    const merchant = await provisionMerchant(serviceA.url, {
      stores: 1,
      scopes: ['order:read'],
      redisKeyPrefix: serviceA.redisKeyPrefix,
    });
    const [storeId] = merchant.storeIds;
    const product = await createProduct(serviceA.url, merchant, storeId, {
      name: 'Bench limiter product',
      price: 9.99,
      deliveryMethods: ['manualDelivery'],
    });
    const placed = await expectStatus(
      request(`${serviceA.url}/api/v1/checkout`, {
        method: 'POST',
        body: { shopId: storeId, cart: [{ productId: product.id, quantity: 1 }], email: 'buyer@example.test' },
        localAddress: merchant.sourceAddress,
      }),
      200,
      'POST /api/v1/checkout',
    );
    const orderPath = `/api/merchant/v1/stores/${storeId}/orders/${placed.json.orderId}`;
    const auth = { authorization: `Bearer ${merchant.apiKey}` };
    const answerA = await expectStatus(
      request(`${serviceA.url}${orderPath}`, { headers: auth }),
      200,
      'service A GET merchant order',
    );
    const answerB = await expectStatus(
      request(`${serviceB.url}${orderPath}`, { headers: auth }),
      200,
      'service B GET merchant order',
    );
    check(isDeepStrictEqual(answerA.json, answerB.json), 'A and B answer the same order');
    check(
      answerA.headers['x-ratelimit-limit'] === '1000000000' && answerB.headers['x-ratelimit-limit'] === '1000000000',
      'both run the limiter on the route (X-RateLimit-Limit 1000000000)',
    );
    console.log(
      `checked: both answer GET ${orderPath.replace(storeId, '{storeId}').replace(placed.json.orderId, '{orderId}')} identically, each with X-RateLimit-* headers (A from Redis, B from memory)`,
    );

    const watch = await watchDatabase(db.name);
    for (const [label, service] of [
      ['A', serviceA],
      ['B', serviceB],
      ...(serviceC ? [['C (control, like A)', serviceC]] : []),
    ]) {
      process.stdout.write(`  pre-warming service ${label} ... `);
      const warm = await prewarm({ urls: [`${service.url}${orderPath}`], headers: auth, pid: service.pid });
      console.log(
        `${warm.requests.toLocaleString('en-US')} requests in ${warm.seconds} s; server CPU ms/request per 5 s: ${warm.curve.map((v) => fixed(v, 2)).join(' > ')}`,
      );
      check(warm.failures === 0, `pre-warm of service ${label} saw ${warm.failures} non-2xx answers or errors`);
    }
    // Paired, one request at a time: A against B, and (control) A against C, round by round.
    const paired = [];
    const control = [];
    console.log(
      `  paired, one request at a time (A B B A ...): ${PAIRED_ROUNDS} round(s) of ${LOAD_DEFAULTS.warmupS} s unmeasured + ${LOAD_DEFAULTS.durationS} s` +
        `${serviceC ? ', each followed by the control pair A vs C (both with the Redis limiter)' : ''}`,
    );
    for (let round = 1; round <= PAIRED_ROUNDS; round++) {
      paired.push(await pairedRound(serviceA, serviceB, ['A', 'B'], round, { orderPath, auth, watch }));
      if (serviceC) control.push(await pairedRound(serviceA, serviceC, ['A', 'C'], round, { orderPath, auth, watch }));
    }

    // Under load: autocannon, A and B alternately.
    const e2e = [];
    for (const connections of CONNECTION_COUNTS) {
      for (let round = 1; round <= ROUNDS; round++) {
        // Alternate which goes first, so a drift in the machine's load does not favour one.
        const order = round % 2 === 1 ? ['A', 'B'] : ['B', 'A'];
        for (const label of order) {
          const service = label === 'A' ? serviceA : serviceB;
          const name = `${label} ${label === 'A' ? 'Redis' : 'memory'} c${connections} r${round}`;
          process.stdout.write(`  ${name} ... `);
          const result = await measure({
            name,
            url: `${service.url}${orderPath}`,
            headers: auth,
            pid: service.pid,
            connections,
            backendPids: watch.backendPids,
            transactions: watch.transactions,
          });
          result.label = label;
          result.round = round;
          e2e.push(result);
          console.log(
            `${fixed(result.rps, 0)} req/s, p50 ${fixed(result.p50, 2)} ms, p99 ${fixed(result.p99, 2)} ms, non-2xx ${result.non2xx}, server CPU ${fixed(result.serverCpuMsPerRequest, 3)} ms/req; other cores ${fixed(result.cpu.other, 2)}`,
          );
          check(result.warmupFailuresAll === 0, `${name}: warm-up runs saw non-2xx answers or errors`);
        }
      }
    }
    await watch.close();
    const hwmA = memoryOf(serviceA.pid).hwmMiB;
    const hwmB = memoryOf(serviceB.pid).hwmMiB;
    const problems = (service) => {
      const lines = service.logs();
      const at = lines.findIndex((line) => typeof line.msg === 'string' && line.msg.startsWith('svc listening'));
      return lines.slice(at + 1).filter((line) => line.level >= 40);
    };
    const problemsA = problems(serviceA);
    const problemsB = problems(serviceB);
    if (serviceC) await serviceC.stop();
    await serviceB.stop();
    await serviceA.stop();
    await db.drop();

    // ------------------------------------------------------------------------------------
    // Figures
    const summary = report({ micro, paired, control, e2e, hwmA, hwmB, problemsA, problemsB });
    console.log(`\nrate-limiter took ${seconds(Date.now() - started)}`);

    const failed = e2e.filter((result) => result.non2xx > 0 || result.errors > 0 || result.timeouts > 0);
    for (const result of failed)
      console.log(
        `!! ${result.name}: non-2xx ${result.non2xx} ${JSON.stringify(result.statusCodes)}, errors ${result.errors}, timeouts ${result.timeouts}`,
      );
    if (failed.length > 0)
      throw new Error(`${failed.length} case(s) saw non-2xx answers or errors; the figures above do not count`);
    return { micro, paired, control, e2e, summary };
  },
};
