/**
 * The rate-limiter benchmark's micro part, in this process against the real Redis: the service's
 * own limiter object, built as runtime.ts builds `deps.limiter`, one `hit()` at a time and 16 in
 * flight, beside PING, a trivial EVALSHA and the in-process MemoryRateLimitStore.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { check } from '../lib/check.mjs';
import { onCleanup } from '../lib/cleanup.mjs';
import { startCpuAccount, waitForQuiet } from '../lib/cpu.mjs';
import { fixed } from '../lib/format.mjs';
import { LOAD_DEFAULTS, percentile } from '../lib/load.mjs';
import { importDist, ownRedisPrefix, REDIS_URL } from '../lib/service.mjs';
import {
  MICRO_CONCURRENCY,
  MICRO_S,
  MICRO_WARMUP_S,
  MINUTE,
  ONE_KEY_MANY,
  REDIS_COMMAND_TIMEOUT_MS,
} from './knobs.mjs';

/** Redis's own CPU seconds so far (INFO cpu: used_cpu_user + used_cpu_sys, main and children). */
async function redisCpuSeconds(client) {
  const info = await client.info('cpu');
  const field = (name) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
  return field('used_cpu_user') + field('used_cpu_sys');
}

/** Redis's total commands processed so far (INFO stats), to tell how much of its CPU was ours. */
async function redisCommands(client) {
  const info = await client.info('stats');
  return Number(/^total_commands_processed:(\d+)/m.exec(info)?.[1] ?? 0);
}

/**
 * Runs `op(i)` for `seconds` with `concurrency` loops, each awaiting its own op before the
 * next; times every op (ms). Resolves sorted times, ops/s, this process's CPU ms per op.
 */
async function timeOps(op, { seconds: durationS, concurrency }) {
  const times = [];
  let i = 0;
  let failures = 0;
  let firstFailure;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const end = t0 + durationS * 1000;
  const loop = async () => {
    while (performance.now() < end) {
      const n = i++;
      const start = performance.now();
      try {
        await op(n);
      } catch (error) {
        failures++;
        firstFailure ??= error;
      }
      times.push(performance.now() - start);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  const elapsed = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  times.sort((a, b) => a - b);
  return {
    times,
    ops: times.length,
    opsPerS: times.length / elapsed,
    cpuMsPerOp: (cpu.user + cpu.system) / 1000 / Math.max(1, times.length),
    failures,
    firstFailure,
  };
}

/** Runs every micro case at each concurrency, printing a line per case; returns the rows. */
export async function runMicro() {
  const { connectRedis } = await importDist('runtime.js');
  const { FallbackRateLimitStore, MemoryRateLimitStore, RedisRateLimitStore } = await importDist('lib/rate-limit.js');
  const warnings = [];
  const log = {
    warn: (...args) => warnings.push(args),
    info: () => undefined,
    error: (...args) => warnings.push(args),
    debug: () => undefined,
  };
  const prefix = ownRedisPrefix();
  const client = connectRedis(REDIS_URL, log);
  const closeClient = onCleanup('close the micro-benchmark Redis client', () =>
    client.isOpen ? client.shutdown() : undefined,
  );
  for (let waited = 0; !client.isReady; waited += 20) {
    check(waited < 5_000, `Redis at ${REDIS_URL} not ready within 5 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  // Redis's pid (when it runs on this machine) for the CPU account: its cores are not "other".
  const redisPid = Number(/^process_id:(\d+)/m.exec(await client.info('server'))?.[1] ?? 0);
  const primary = new RedisRateLimitStore(
    client.withCommandOptions({ timeout: 0 }),
    `${prefix}rl:`,
    REDIS_COMMAND_TIMEOUT_MS,
  );
  const limiter = new FallbackRateLimitStore(primary, new MemoryRateLimitStore(), log);
  const memory = new MemoryRateLimitStore();
  const TRIVIAL = 'return {1, 1, 0}';
  const trivialSha = await client.scriptLoad(TRIVIAL);
  const allowed = { name: 'bench.allowed', max: 1_000_000_000, windowMs: MINUTE };
  const overBudget = { name: 'bench.over', max: 300, windowMs: MINUTE };
  const perClient = { name: 'bench.clients', max: 1_000_000_000, windowMs: MINUTE };
  const trivialArgs = (n) => ({
    keys: [`${prefix}floor:${n % ONE_KEY_MANY}`],
    arguments: [
      String(Date.now()),
      String(MINUTE),
      '1000000000',
      `${Date.now()}:${randomBytes(6).toString('base64url')}`,
    ],
  });
  const microCases = [
    { id: 'ping', name: 'floor: PING', op: () => client.ping() },
    { id: 'evalsha', name: 'floor: EVALSHA return {1,1,0}', op: (n) => client.evalSha(trivialSha, trivialArgs(n)) },
    {
      id: 'hit-allowed',
      name: 'hit(), 1 key, allowed',
      op: () => limiter.hit('one', allowed, Date.now()),
      redis: true,
    },
    {
      id: 'hit-over',
      name: 'hit(), 1 key, over budget (429 path)',
      op: () => limiter.hit('one', overBudget, Date.now()),
      redis: true,
    },
    {
      id: 'hit-many',
      name: `hit(), ${ONE_KEY_MANY.toLocaleString('en-US')} keys in turn`,
      op: (n) => limiter.hit(`client-${n % ONE_KEY_MANY}`, perClient, Date.now()),
      redis: true,
    },
    { id: 'memory', name: 'in-process MemoryRateLimitStore.hit()', op: () => memory.hit('one', allowed, Date.now()) },
  ];
  console.log(
    `micro: ${MICRO_WARMUP_S} s unmeasured + ${MICRO_S} s measured per case, sequential and ${MICRO_CONCURRENCY[1]} in flight; Redis ${REDIS_URL}, keys under ${prefix}`,
  );
  const micro = [];
  for (const concurrency of MICRO_CONCURRENCY) {
    for (const spec of microCases) {
      // The over-budget case starts over its budget: fill the window first.
      if (spec.id === 'hit-over')
        for (let i = 0; i < overBudget.max; i++) await limiter.hit('one', overBudget, Date.now());
      await waitForQuiet({ thresholdCores: LOAD_DEFAULTS.otherCoresLimit });
      await timeOps(spec.op, { seconds: MICRO_WARMUP_S, concurrency });
      const busy0 = await startCpuAccount({ serverPid: redisPid, backendPids: async () => [] });
      const redisCpu0 = await redisCpuSeconds(client);
      const redisCommands0 = await redisCommands(client);
      const result = await timeOps(spec.op, { seconds: MICRO_S, concurrency });
      const redisCpu = (await redisCpuSeconds(client)) - redisCpu0;
      const redisCommandCount = (await redisCommands(client)) - redisCommands0;
      const cpu = await busy0.stop();
      check(
        result.failures === 0,
        `${spec.name}: ${result.failures} operations failed (first: ${result.firstFailure?.message})`,
      );
      check(
        !limiter.usingFallback,
        `${spec.name}: the limiter fell back to memory (Redis failed or timed out): ${JSON.stringify(warnings.slice(-1))}`,
      );
      micro.push({
        id: spec.id,
        name: spec.name,
        concurrency,
        ops: result.ops,
        opsPerS: result.opsPerS,
        p50: percentile(result.times, 50),
        p90: percentile(result.times, 90),
        p99: percentile(result.times, 99),
        max: result.times[result.times.length - 1],
        clientCpuUs: result.cpuMsPerOp * 1000,
        redisCpuUs: spec.id === 'memory' ? NaN : (redisCpu * 1e6) / result.ops,
        // Commands Redis processed per op (our two INFOs taken out): 1 for PING / EVALSHA, plus
        // the script's own redis.call()s for a hit (5 allowed, 4 denied), plus whatever other
        // clients of the shared Redis sent meanwhile.
        commandsPerOp: spec.id === 'memory' ? NaN : (redisCommandCount - 2) / result.ops,
        other: cpu.other,
      });
      const row = micro[micro.length - 1];
      console.log(
        `  ${spec.name}, ${concurrency} in flight: ${fixed(row.opsPerS, 0)}/s, p50 ${fixed(row.p50 * 1000, 0)} us, p99 ${fixed(row.p99 * 1000, 0)} us; other cores ${fixed(cpu.other, 2)}`,
      );
    }
  }
  // The over-budget window held 300 and said no after that; the allowed one said yes throughout.
  const overDecision = await limiter.hit('one', overBudget, Date.now());
  check(
    !overDecision.allowed && overDecision.remaining === 0,
    `the over-budget key is denied (got ${JSON.stringify(overDecision)})`,
  );
  const allowedDecision = await limiter.hit('one', allowed, Date.now());
  check(allowedDecision.allowed, 'the allowed key is still allowed');
  await closeClient();
  return micro;
}
