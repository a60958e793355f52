/**
 * @svc/sdk's retry rules against a server listening on a real port, with the server's clock
 * in the test's hands: the merchant budget runs out, the server answers 429 with a
 * Retry-After, and the SDK waits exactly that long before its retry succeeds.
 */
import { createMerchantClient, SvcRateLimitError } from '@svc/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../apps/server/src/lib/clock.js';
import { startInProcess, type InProcessApp } from './support/in-process.js';
import { createKeyFor, createStoreFor, registerSeller } from './support/seller.js';

const clock = new ManualClock(Date.now());
let app: InProcessApp;

beforeAll(async () => {
  app = await startInProcess({ clock, env: { MERCHANT_RATE_LIMIT_PER_MINUTE: '2' } });
});
afterAll(async () => {
  await app?.close();
});

interface Seen {
  status: number;
  retryAfter: string | null;
  at: number;
}

/** A merchant key of its own (its own rate-limit window) and a fetch that records every answer. */
async function merchantWithLog(
  options: { maxRetries?: number; maxRetryAfterSeconds?: number; onAnswer?: (seen: Seen) => void } = {},
) {
  const seller = await registerSeller(app.url);
  const store = await createStoreFor(seller);
  const { key } = await createKeyFor(seller, { scopes: ['order:read'], storeIds: [store.id] });
  const seen: Seen[] = [];
  const client = createMerchantClient({
    baseUrl: app.url,
    apiKey: key,
    maxRetries: options.maxRetries,
    maxRetryAfterSeconds: options.maxRetryAfterSeconds,
    fetch: async (url, init) => {
      const response = await fetch(url, init);
      const entry = { status: response.status, retryAfter: response.headers.get('retry-after'), at: Date.now() };
      seen.push(entry);
      options.onAnswer?.(entry);
      return response;
    },
  });
  return { client, storeId: store.id, seen };
}

describe('rate limits seen through the SDK', () => {
  it('waits out the Retry-After of a 429 and then succeeds', async () => {
    const start = clock.now().getTime();
    clock.set(start);
    // When the 429 arrives, time moves on past the window, as it would while the SDK waits.
    const { client, storeId, seen } = await merchantWithLog({
      onAnswer: ({ status }) => {
        if (status === 429) clock.set(start + 61_000);
      },
    });
    await client.orders.list({ storeId });
    await client.orders.list({ storeId });
    clock.set(start + 59_500); // 0.5 s left in the window: the server says Retry-After: 1
    const page = await client.orders.list({ storeId });
    expect(page.orders).toEqual([]);
    expect(seen.map((s) => s.status)).toEqual([200, 200, 429, 200]);
    expect(seen[2]!.retryAfter).toBe('1');
    const waited = seen[3]!.at - seen[2]!.at;
    expect(waited).toBeGreaterThanOrEqual(1000);
    expect(waited).toBeLessThan(2500);
  });

  it('with retries off, answers a typed SvcRateLimitError carrying retryAfter', async () => {
    const start = clock.now().getTime();
    const { client, storeId, seen } = await merchantWithLog({ maxRetries: 0 });
    await client.orders.list({ storeId });
    await client.orders.list({ storeId });
    clock.set(start + 30_000);
    const error = await client.orders.list({ storeId }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SvcRateLimitError);
    expect(error).toMatchObject({ status: 429, code: 'rate_limited', type: 'rate_limit', retryAfter: 30 });
    expect(seen.map((s) => s.status)).toEqual([200, 200, 429]);
  });

  it('does not wait for a Retry-After beyond maxRetryAfterSeconds', async () => {
    const { client, storeId, seen } = await merchantWithLog({ maxRetryAfterSeconds: 5 });
    await client.orders.list({ storeId });
    await client.orders.list({ storeId });
    const started = Date.now();
    const error = await client.orders.list({ storeId }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SvcRateLimitError);
    expect((error as SvcRateLimitError).retryAfter).toBeGreaterThan(5);
    expect(seen.map((s) => s.status)).toEqual([200, 200, 429]);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("retries a 5xx that is not the API's own answer with backoff, and gives up after maxRetries", async () => {
    const seen: Seen[] = [];
    const failing = createMerchantClient({
      baseUrl: app.url,
      apiKey: `sk_${'Z'.repeat(40)}`,
      maxRetries: 2,
      fetch: () => {
        seen.push({ status: 503, retryAfter: null, at: Date.now() });
        return Promise.resolve(
          new Response('<html>upstream down</html>', { status: 503, headers: { 'content-type': 'text/html' } }),
        );
      },
    });
    const error = await failing.orders.list({ storeId: 'any' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 503, code: 'service_unavailable', type: 'api' });
    expect(seen).toHaveLength(3);
    // 0.5 s then 1 s, each +-25 %.
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(375);
    expect(seen[2]!.at - seen[1]!.at).toBeGreaterThanOrEqual(750);
  });
});
