/**
 * Fault: Redis stopped under load, black-box. The built server uses a redis-server of the test's
 * own, which is killed while checkouts, settlements, merchant reads and catalog reads keep coming,
 * then started again on the same port.
 *
 * While it is down nothing answers 500 (nor anything but 200 on those routes), limits fall back
 * to the process and are still enforced on an IP-limited route of each kind (coupon checks,
 * order creation) and on the per-key merchant budget, and the dispatcher still delivers webhooks
 * (woken in process, or by polling). Once Redis is back the server reconnects by itself and the
 * windows live in Redis again. (test/rate-limit.test.ts covers the limiter alone, in process.)
 */
import { randomBytes } from 'node:crypto';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkout,
  createWebhook,
  seedShop,
  sleep,
  startLoad,
  tally,
  waitFor,
  type Load,
  type Shop,
} from './support/faults.js';
import { TEST_GATEWAY_SECRET } from './support/payments.js';
import { startRedisServer } from './support/redis-server.js';
import { createKeyFor } from './support/seller.js';
import { startServer } from './support/server.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

const MERCHANT_LIMIT = 150;
const prefix = `svc-test:${randomBytes(6).toString('hex')}:`;
let redis: Awaited<ReturnType<typeof startRedisServer>> | undefined;
let server: Awaited<ReturnType<typeof startServer>> | undefined;
let receiver: WebhookReceiver | undefined;
let activeLoad: Load | undefined;

beforeAll(async () => {
  redis = await startRedisServer();
  server = await startServer({
    REDIS_URL: redis.url,
    REDIS_KEY_PREFIX: prefix,
    TEST_GATEWAY_SECRET,
    MERCHANT_RATE_LIMIT_PER_MINUTE: String(MERCHANT_LIMIT),
    WEBHOOK_POLL_MS: '300',
  });
}, 90_000);

afterAll(async () => {
  await activeLoad?.stop();
  await receiver?.close();
  await server?.stop();
  await redis?.stop();
});

function validateCoupon(shop: Shop, ip: string) {
  return fetch(`${shop.baseUrl}/api/coupons/validate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
    body: JSON.stringify({ storeId: shop.storeId, code: 'NOPE' }),
  });
}

function createOrder(shop: Shop, ip: string) {
  return fetch(`${shop.baseUrl}/api/orders/create`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
    body: JSON.stringify({
      storeId: shop.storeId,
      cart: [{ productId: shop.instant.id, quantity: 1 }],
      email: 'buyer@example.test',
    }),
  });
}

/** Statuses of `n` calls made one after the other. */
async function statuses(n: number, call: () => Promise<Response>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const response = await call();
    await response.arrayBuffer();
    out.push(response.status);
  }
  return out;
}

const ip = () => `198.51.100.${1 + Math.floor(Math.random() * 250)}`;

describe('Redis stopped under load', () => {
  it(
    'keeps limiting in process, answers no 500, still delivers webhooks, and shares windows again once Redis is back',
    { timeout: 60_000 },
    async () => {
      const shop = await seedShop(server!.url, { keys: 500 });
      const { key: budgetKey } = await createKeyFor(shop.seller, { scopes: ['order:read'], storeIds: [shop.storeId] });
      // The receiver fails the first attempt of each event that arrives while `failing` is set:
      // the retries, due 5 s later, are found by polling alone (nothing wakes a dispatcher for them).
      let failing = false;
      const failedOnce = new Set<string>();
      receiver = await startWebhookReceiver({
        answer: (hit) => {
          if (
            !failing ||
            !hit.eventId ||
            failedOnce.has(hit.eventId) ||
            receiver?.received.filter((h) => h.eventId === hit.eventId).length !== 1
          )
            return { status: 200 };
          failedOnce.add(hit.eventId);
          return { status: 500, body: 'try later' };
        },
      });
      await createWebhook(shop, `${receiver.url}/orders`, ['order.created']);
      const probe = createClient({ url: redis!.url });
      probe.on('error', () => undefined);
      await probe.connect();
      try {
        // Limits are kept in Redis to begin with.
        const before = ip();
        expect(await statuses(3, () => validateCoupon(shop, before))).toEqual([200, 200, 200]);
        expect(await probe.zCard(`${prefix}rl:coupons.validate:${before}`)).toBe(3);
      } finally {
        await probe.close();
      }

      const load = startLoad(shop, { clients: 5, pauseMs: 150 });
      activeLoad = load;
      await sleep(2_000);
      const stopAt = Date.now();
      await redis!.stop();
      const downAt = Date.now();
      await sleep(500);
      failing = true;

      // Limits fall back to the process and still hold, on each kind of limited route.
      const couponIp = ip();
      expect(await statuses(22, () => validateCoupon(shop, couponIp))).toEqual([...Array(20).fill(200), 429, 429]);
      const orderIp = ip();
      expect(await statuses(12, () => createOrder(shop, orderIp))).toEqual([...Array(10).fill(201), 429, 429]);
      const limited = await validateCoupon(shop, couponIp);
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(await limited.json()).toEqual({
        error: 'Too many requests. Please try again later.',
        code: 'rate_limited',
      });
      const perKey = await statuses(MERCHANT_LIMIT + 1, () =>
        fetch(`${shop.baseUrl}/api/merchant/v1/stores/${shop.storeId}/orders?limit=1`, {
          headers: { authorization: `Bearer ${budgetKey}` },
        }),
      );
      expect(perKey.slice(0, MERCHANT_LIMIT).every((status) => status === 200)).toBe(true);
      expect(perKey.at(-1)).toBe(429);

      // The dispatcher still delivers: an order placed now reaches the receiver while Redis is down,
      // and so do the retries of the attempts the receiver failed meanwhile (polling).
      const placed = await checkout(shop, [{ productId: shop.instant.id, quantity: 1 }]);
      expect(placed.status).toBe(200);
      const { orderId } = await placed.json();
      await receiver.waitFor(1, {
        timeoutMs: 5_000,
        where: (hit) => (hit.body?.data.order as { id?: string } | undefined)?.id === orderId,
      });
      failing = false;
      expect(failedOnce.size).toBeGreaterThan(0);
      await waitFor(
        'the retries of the failed attempts, while Redis is down',
        () => [...failedOnce].every((id) => receiver!.received.filter((hit) => hit.eventId === id).length >= 2),
        9_000,
        100,
      );
      const health = await fetch(`${server!.url}/healthz`);
      expect(health.status).toBe(200);
      const ready = await (await fetch(`${server!.url}/readyz`)).json();
      expect(ready.checks).toEqual({ database: 'ok', redis: 'failing' });
      await sleep(1_000);

      // Redis comes back where it was; the server reconnects by itself.
      const startAt = Date.now();
      redis = await startRedisServer({ port: redis!.port });
      await waitFor(
        'the server to use Redis again',
        () =>
          server!.logs.some(
            (line) =>
              line.msg === 'rate limiter: Redis answers again; shared windows restored' && Number(line.time) >= startAt,
          ),
        15_000,
        200,
      );
      const recoveredAt = Date.now();
      await sleep(1_500);
      await load.stop();

      // Windows live in Redis again: counted there, and enforced from there.
      const after = ip();
      expect(await statuses(20, () => validateCoupon(shop, after))).toEqual(Array(20).fill(200));
      const probeAgain = createClient({ url: redis.url });
      probeAgain.on('error', () => undefined);
      await probeAgain.connect();
      try {
        expect(await probeAgain.zCard(`${prefix}rl:coupons.validate:${after}`)).toBe(20);
      } finally {
        await probeAgain.close();
      }
      expect((await validateCoupon(shop, after)).status).toBe(429);
      expect((await (await fetch(`${server!.url}/readyz`)).json()).checks).toEqual({ database: 'ok', redis: 'ok' });

      // The load: every answer a 200 before, during and after the outage; no 5xx, no hang-up.
      const summary = JSON.stringify(tally(load.samples));
      expect(
        load.samples.filter((s) => s.startedAt >= downAt && s.startedAt < startAt).length,
        summary,
      ).toBeGreaterThan(20);
      expect(
        load.samples.filter((s) => s.status !== 200),
        summary,
      ).toEqual([]);
      // ... and no slower for it: no request waited on the missing Redis (its commands fail at once;
      // the median is compared, so that one slow answer on a busy machine does not count).
      const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
      const latency = (from: number, to: number) =>
        median(load.samples.filter((s) => s.startedAt >= from && s.startedAt < to).map((s) => s.endedAt - s.startedAt));
      expect(latency(downAt, startAt)).toBeLessThan(2 * latency(0, stopAt) + 250);
      // Every order placed under load (before, during and after) reached the receiver.
      const placedIds = [...load.orders.map((o) => o.orderId), orderId];
      await waitFor(
        'every order.created at the receiver',
        () =>
          placedIds.every((id) =>
            receiver!.received.some((hit) => (hit.body?.data.order as { id?: string } | undefined)?.id === id),
          ),
        10_000,
        200,
      );
      // Errors logged (level >= 50) are the limiter's one report of the failure, not requests failing.
      await server!.logsSettled();
      const errors = server!.logs.filter((line) => line.level >= 50);
      expect(
        errors
          .filter(
            (line) =>
              line.reqId !== undefined &&
              line.msg !== 'rate limiter: Redis failed; limiting in process until it answers',
          )
          .map((line) => line.msg),
      ).toEqual([]);
      expect(recoveredAt - startAt, 'reconnected by itself within').toBeLessThan(15_000);
    },
  );
});
