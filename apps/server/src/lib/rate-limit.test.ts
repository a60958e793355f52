import { describe, expect, it } from 'vitest';
import { createLogger } from './logger.js';
import { Deadlines, FallbackRateLimitStore, MemoryRateLimitStore, type RateLimitStore } from './rate-limit.js';

const rule = { name: 'unit', max: 3, windowMs: 10_000 };

describe('MemoryRateLimitStore', () => {
  it('is an exact sliding log: a request counts for exactly windowMs', async () => {
    const store = new MemoryRateLimitStore();
    expect((await store.hit('a', rule, 0)).allowed).toBe(true);
    expect((await store.hit('a', rule, 4_000)).allowed).toBe(true);
    const third = await store.hit('a', rule, 9_000);
    expect(third).toEqual({ allowed: true, limit: 3, remaining: 0, resetMs: 1_000 });
    expect((await store.hit('a', rule, 9_999)).allowed).toBe(false);
    expect((await store.hit('a', rule, 10_000)).allowed).toBe(true); // the first left the window
    expect((await store.hit('a', rule, 10_001)).allowed).toBe(false);
  });

  it('keeps clients and rules apart', async () => {
    const store = new MemoryRateLimitStore();
    for (let i = 0; i < 3; i++) await store.hit('a', rule, 0);
    expect((await store.hit('a', rule, 1)).allowed).toBe(false);
    expect((await store.hit('b', rule, 1)).allowed).toBe(true);
    expect((await store.hit('a', { ...rule, name: 'other' }, 1)).allowed).toBe(true);
  });

  it('clears one window and no other', async () => {
    const store = new MemoryRateLimitStore();
    for (let i = 0; i < 3; i++) {
      await store.hit('a', rule, i);
      await store.hit('b', rule, i);
    }
    await store.clear('a', rule);
    expect((await store.hit('a', rule, 5)).remaining).toBe(2);
    expect((await store.hit('b', rule, 5)).allowed).toBe(false);
  });

  it('does not count refused requests', async () => {
    const store = new MemoryRateLimitStore();
    for (let i = 0; i < 10; i++) await store.hit('a', rule, i);
    // Only the three allowed ones (at 0, 1, 2) are in the log.
    expect((await store.hit('a', rule, 10_002)).allowed).toBe(true);
  });
});

describe('FallbackRateLimitStore', () => {
  const failing: RateLimitStore = {
    hit: () => Promise.reject(new Error('ECONNREFUSED')),
    clear: () => Promise.reject(new Error('ECONNREFUSED')),
  };

  it('answers from memory when the primary fails, and logs the switch once', async () => {
    const messages: string[] = [];
    const log = createLogger('silent');
    log.error = ((_obj: unknown, msg: string) => messages.push(msg)) as unknown as typeof log.error;
    const store = new FallbackRateLimitStore(failing, new MemoryRateLimitStore(), log);
    const decisions = [];
    for (let i = 0; i < 4; i++) decisions.push((await store.hit('a', rule, i)).allowed);
    expect(decisions).toEqual([true, true, true, false]);
    expect(store.usingFallback).toBe(true);
    expect(messages).toHaveLength(1);
  });

  it('clears the window in memory even when the primary fails to', async () => {
    const log = createLogger('silent');
    const store = new FallbackRateLimitStore(failing, new MemoryRateLimitStore(), log);
    for (let i = 0; i < 3; i++) await store.hit('a', rule, i);
    await store.clear('a', rule);
    expect((await store.hit('a', rule, 5)).allowed).toBe(true);
  });
});

describe('Deadlines', () => {
  it('passes an answer through, and fails a command that outlives its deadline, one timer for all', async () => {
    const deadlines = new Deadlines(40);
    expect(await deadlines.watch(Promise.resolve('answer'))).toBe('answer');
    await expect(deadlines.watch(Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    const started = Date.now();
    const never = new Promise<never>(() => undefined);
    const late = new Promise((resolve) => setTimeout(() => resolve('late'), 300));
    const results = await Promise.allSettled([
      deadlines.watch(never),
      deadlines.watch(late),
      deadlines.watch(Promise.resolve('quick')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'fulfilled']);
    expect(String((results[0] as PromiseRejectedResult).reason)).toContain('did not answer within 40 ms');
    // Failed at the deadline plus at most a quarter of it (and a busy machine's slack), not at 300 ms.
    expect(Date.now() - started).toBeLessThan(250);
  });
});
