/**
 * The limiter as a client meets it: real HTTP to a limited route, a clock the test moves,
 * Redis shared and then stopped, proxies trusted or not, tRPC batches.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../apps/server/src/lib/clock.js';
import { createLogger } from '../apps/server/src/lib/logger.js';
import {
  FallbackRateLimitStore,
  MemoryRateLimitStore,
  RedisRateLimitStore,
  type RateLimitStore,
} from '../apps/server/src/lib/rate-limit.js';
import { connectRedis } from '../apps/server/src/runtime.js';
import { TEST_REDIS_URL } from './support/env.js';
import { startInProcess, type InProcessApp } from './support/in-process.js';
import { PROBE_LIMIT, createProbeRouter } from './support/probe-router.js';
import { startRedisServer } from './support/redis-server.js';

const log = createLogger('silent');
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function connected(url: string) {
  const client = connectRedis(url, log);
  if (!client.isReady) await new Promise((resolve) => client.once('ready', resolve));
  return client;
}

let sharedRedis: ReturnType<typeof connectRedis>;
beforeAll(async () => {
  sharedRedis = await connected(TEST_REDIS_URL);
});
afterAll(() => sharedRedis?.close());

/** A Redis-backed limiter whose keys no other test run shares. */
function redisLimiter(prefix = `svc:test:${randomBytes(6).toString('hex')}:`): RateLimitStore {
  return new FallbackRateLimitStore(
    new RedisRateLimitStore(sharedRedis.withCommandOptions({ timeout: 0 }), prefix, 250),
    new MemoryRateLimitStore(),
    log,
  );
}

async function start(limiter: RateLimitStore, clock = new ManualClock(), env: Record<string, string> = {}) {
  const app = await startInProcess({ router: createProbeRouter(), clock, limiter, env });
  cleanups.push(() => app.close());
  return { app, clock };
}

function hit(app: InProcessApp, headers: Record<string, string> = {}) {
  return fetch(`${app.url}/api/probe/limited`, { headers });
}

describe.each([
  ['Redis', redisLimiter],
  ['in-process', () => new MemoryRateLimitStore()],
])('sliding window (%s)', (_name, makeLimiter) => {
  it('answers request N+1 inside the window with 429 and the full header set', async () => {
    const { app } = await start(makeLimiter());
    for (let i = 1; i <= PROBE_LIMIT.max; i++) {
      const response = await hit(app);
      expect(response.status).toBe(200);
      expect(response.headers.get('x-ratelimit-limit')).toBe('5');
      expect(response.headers.get('x-ratelimit-remaining')).toBe(String(PROBE_LIMIT.max - i));
      expect(response.headers.get('ratelimit-policy')).toBe('"probe";q=5;w=60');
    }
    const limited = await hit(app);
    expect(limited.status).toBe(429);
    expect(await limited.json()).toEqual({ error: 'Too many requests. Please try again later.', code: 'rate_limited' });
    expect(limited.headers.get('retry-after')).toBe('60');
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(limited.headers.get('x-ratelimit-reset')).toBe('60');
    expect(limited.headers.get('ratelimit')).toBe('"probe";r=0;t=60');

    const rpc = await fetch(`${app.url}/trpc/probe.limited?input=%7B%7D`);
    expect(rpc.status).toBe(429);
    expect(rpc.headers.get('retry-after')).toBe('60');
    expect((await rpc.json()).error.data.code).toBe('rate_limited');
  });

  it('allows no double burst across a window edge', async () => {
    const { app, clock } = await start(makeLimiter());
    clock.advance(59_000); // the burst lands at the end of a fixed window
    for (let i = 0; i < PROBE_LIMIT.max; i++) expect((await hit(app)).status).toBe(200);
    clock.advance(2_000); // a fixed window would have reset here
    const crossing = await hit(app);
    expect(crossing.status).toBe(429);
    expect(crossing.headers.get('retry-after')).toBe('58');
    clock.advance(57_999);
    expect((await hit(app)).status).toBe(429);
    clock.advance(2); // the burst has left the window
    expect((await hit(app)).status).toBe(200);
  });

  it('ignores a spoofed X-Forwarded-For without TRUST_PROXY', async () => {
    const { app } = await start(makeLimiter());
    for (let i = 0; i < PROBE_LIMIT.max; i++) await hit(app, { 'x-forwarded-for': `10.0.0.${i}` });
    const spoofed = await hit(app, { 'x-forwarded-for': '203.0.113.9' });
    expect(spoofed.status).toBe(429);
  });

  it('limits per forwarded client behind a trusted proxy', async () => {
    const { app } = await start(makeLimiter(), new ManualClock(), { TRUST_PROXY: '127.0.0.1' });
    for (let i = 0; i < PROBE_LIMIT.max; i++)
      expect((await hit(app, { 'x-forwarded-for': '203.0.113.1' })).status).toBe(200);
    expect((await hit(app, { 'x-forwarded-for': '203.0.113.1' })).status).toBe(429);
    expect((await hit(app, { 'x-forwarded-for': '203.0.113.2' })).status).toBe(200);
  });

  it('counts every call of a tRPC batch', async () => {
    const { app } = await start(makeLimiter());
    const calls = Array.from({ length: PROBE_LIMIT.max + 2 }, () => 'probe.limited');
    const input = Object.fromEntries(calls.map((_, i) => [String(i), {}]));
    const response = await fetch(
      `${app.url}/trpc/${calls.join(',')}?batch=1&input=${encodeURIComponent(JSON.stringify(input))}`,
    );
    const results = (await response.json()) as Array<{ result?: unknown; error?: { data: { code: string } } }>;
    expect(results.filter((r) => r.result)).toHaveLength(PROBE_LIMIT.max);
    expect(results.filter((r) => r.error?.data.code === 'rate_limited')).toHaveLength(2);
  });
});

describe('Redis shared and then stopped', () => {
  it('shares one window between two API processes through Redis', async () => {
    const prefix = `svc:test:${randomBytes(6).toString('hex')}:`;
    const clock = new ManualClock();
    // Two apps with limiters of their own on the same Redis keys: two API processes.
    const { app: a } = await start(redisLimiter(prefix), clock);
    const { app: b } = await start(redisLimiter(prefix), clock);
    for (let i = 0; i < 3; i++) expect((await hit(a)).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await hit(b)).status).toBe(200);
    expect((await hit(a)).status).toBe(429);
    expect((await hit(b)).status).toBe(429);
  });

  it('keeps limiting in process and never answers 500 when Redis goes away', async () => {
    const redis = await startRedisServer();
    cleanups.push(() => redis.stop());
    const client = await connected(redis.url);
    cleanups.push(() => client.close().catch(() => undefined));
    const limiter = new FallbackRateLimitStore(
      new RedisRateLimitStore(client.withCommandOptions({ timeout: 0 }), undefined, 250),
      new MemoryRateLimitStore(),
      log,
    );
    const { app } = await start(limiter);
    for (let i = 0; i < 3; i++) expect((await hit(app)).status).toBe(200);

    await redis.stop();

    const statuses: number[] = [];
    for (let i = 0; i < PROBE_LIMIT.max + 3; i++) statuses.push((await hit(app)).status);
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    // The in-process window starts empty: it allows the budget once more, then limits.
    expect(statuses.slice(0, PROBE_LIMIT.max)).toEqual(Array(PROBE_LIMIT.max).fill(200));
    expect(statuses.slice(PROBE_LIMIT.max)).toEqual([429, 429, 429]);
    expect(limiter.usingFallback).toBe(true);
  });

  it('answers from memory within its deadline when Redis stops answering, and from Redis again when it answers', async () => {
    const redis = await startRedisServer();
    cleanups.push(() => redis.stop());
    const client = await connected(redis.url);
    cleanups.push(() => client.close().catch(() => undefined));
    const limiter = new FallbackRateLimitStore(
      new RedisRateLimitStore(client.withCommandOptions({ timeout: 0 }), undefined, 250),
      new MemoryRateLimitStore(),
      log,
    );
    const { app } = await start(limiter);
    expect((await hit(app)).status).toBe(200);
    expect(limiter.usingFallback).toBe(false);

    redis.pause();
    cleanups.push(() => Promise.resolve().then(() => redis.resume()));
    const started = performance.now();
    const stalled = await hit(app);
    const waited = performance.now() - started;
    expect(stalled.status).toBe(200);
    expect(limiter.usingFallback).toBe(true);
    // The 250 ms deadline, not the stalled server, decides how long the request waits.
    expect(waited).toBeGreaterThanOrEqual(240);
    expect(waited).toBeLessThan(2_000);

    redis.resume();
    const deadline = Date.now() + 10_000;
    while (limiter.usingFallback && Date.now() < deadline) await hit(app);
    expect(limiter.usingFallback).toBe(false);
  });
});
