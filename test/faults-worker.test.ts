/**
 * Fault: a worker killed mid-delivery. `svc serve` (which runs a dispatcher too: there is no
 * switch to turn it off) and a separate `svc worker` share one database and Redis. The receiver
 * holds the first request of every event open; which process sent each is read from the
 * connection's source port (/proc). The worker is SIGKILLed with its attempts in flight and a
 * new `svc worker` is started.
 *
 * Each killed attempt is not lost (sent again once its lease has run out: WEBHOOK_LEASE_MS, made
 * short here), not sent again sooner (the live API process's dispatcher does not steal a held
 * lease), not doubled (one success per event in the log, two requests at the receiver), and is
 * recorded as failed (abandoned) instead of staying pending. The attempts the API process held
 * time out and are retried on the normal schedule.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from './support/databases.js';
import { TEST_REDIS_URL } from './support/env.js';
import {
  checkout,
  createWebhook,
  deliveryLog,
  killHard,
  seedShop,
  sleep,
  socketOwner,
  spawnWorker,
  waitFor,
  type RunningWorker,
} from './support/faults.js';
import { spawnServer, type RunningServer } from './support/server.js';

const TIMEOUT_MS = 4_000;
const LEASE_MS = 5_000;
const ABANDONED =
  'Abandoned: the sending dispatcher stopped before recording an answer; sent again as the next attempt.';

let db: Awaited<ReturnType<typeof freshDatabase>>;
const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-faults-worker-'));
const servers: RunningServer[] = [];
const workers: RunningWorker[] = [];
const receiver = createServer();
const held: ServerResponse[] = [];

interface Hit {
  eventId: string;
  deliveryId: string;
  remotePort: number;
  at: number;
}
const hits: Hit[] = [];

beforeAll(async () => {
  db = await freshDatabase();
  receiver.on('request', (req, res) => {
    req.resume();
    req.on('end', () => {
      const eventId = String(req.headers['x-service-event-id'] ?? '');
      const first = !hits.some((hit) => hit.eventId === eventId);
      hits.push({
        eventId,
        deliveryId: String(req.headers['x-service-delivery-id'] ?? ''),
        remotePort: req.socket.remotePort ?? 0,
        at: Date.now(),
      });
      if (first)
        held.push(res); // never answered
      else res.end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  for (const worker of workers) await worker.kill();
  for (const server of servers) await killHard(server.process);
  receiver.closeAllConnections();
  await new Promise((resolve) => receiver.close(resolve));
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('a dispatcher killed mid-delivery', () => {
  it(
    'sends each killed attempt again after its lease, once, and logs it as abandoned',
    { timeout: 60_000 },
    async () => {
      const env = {
        DATABASE_URL: db.url,
        REDIS_URL: TEST_REDIS_URL,
        REDIS_KEY_PREFIX: `svc-test:${randomBytes(6).toString('hex')}:`,
        TRUST_PROXY: '127.0.0.1',
        DATA_DIR: dataDir,
        APP_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
        WEBHOOK_POLL_MS: '200',
        WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
        WEBHOOK_LEASE_MS: String(LEASE_MS),
      };
      const api = await spawnServer(env);
      servers.push(api);
      const firstWorker = await spawnWorker(env);
      workers.push(firstWorker);

      const shop = await seedShop(api.url);
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      const hook = await createWebhook(shop, url, ['order.created']);
      // Eight orders at once. The API process's own dispatcher, woken in process, is quickest, but it
      // keeps at most 4 attempts in flight per endpoint (and claims none ahead for an endpoint it has
      // not seen answer fast): the worker must take the others.
      const ORDERS = 8;
      await Promise.all(
        Array.from({ length: ORDERS }, async () =>
          expect((await checkout(shop, [{ productId: shop.instant.id, quantity: 1 }])).status).toBe(200),
        ),
      );
      await waitFor(
        'every first attempt at the receiver',
        () => new Set(hits.map((hit) => hit.eventId)).size >= ORDERS,
        10_000,
        20,
      );
      const firsts = hits.filter((hit, i) => hits.findIndex((h) => h.eventId === hit.eventId) === i);
      const holders = new Map(
        firsts.map((hit) => [hit.eventId, socketOwner(hit.remotePort, [api.process.pid!, firstWorker.process.pid!])]),
      );
      const byWorker = firsts.filter((hit) => holders.get(hit.eventId) === firstWorker.process.pid);
      const byServe = firsts.filter((hit) => holders.get(hit.eventId) === api.process.pid);
      expect(byWorker.length + byServe.length, 'every attempt has its process').toBe(ORDERS);
      expect(byWorker.length, 'the worker holds some').toBeGreaterThan(0);

      // The worker dies with its attempts in flight (none was answered); a new one starts.
      await firstWorker.kill();
      const killedAt = Date.now();
      expect(hits).toHaveLength(ORDERS);
      const newWorker = await spawnWorker(env);
      workers.push(newWorker);

      // Every event ends delivered: one success each, and no attempt pending or queued.
      const log = await waitFor(
        'every event delivered',
        async () => {
          const entries = await deliveryLog(shop, hook.id);
          const done = firsts.every((hit) => entries.some((d) => d.eventId === hit.eventId && d.status === 'success'));
          return done && entries.every((d) => d.status === 'success' || d.status === 'failed') ? entries : undefined;
        },
        LEASE_MS + 12_000,
        200,
      );
      await sleep(1_000); // nothing more arrives
      expect(await deliveryLog(shop, hook.id)).toEqual(log);
      expect(hits).toHaveLength(2 * ORDERS);

      for (const hit of byWorker) {
        // Killed in flight: not lost (sent again once the lease ran out), not sooner (a held lease is
        // not stolen by the API process's dispatcher), logged as failed/abandoned, not left pending.
        const again = hits.filter((h) => h.eventId === hit.eventId);
        expect(again).toHaveLength(2);
        expect(again[1]!.at - hit.at).toBeGreaterThanOrEqual(LEASE_MS - 500);
        expect(again[1]!.at - killedAt).toBeLessThan(LEASE_MS + 5_000);
        const entries = log.filter((d) => d.eventId === hit.eventId);
        expect(entries.map((d) => [d.attempt, d.status, d.responseCode, d.errorMessage])).toEqual([
          [1, 'failed', null, ABANDONED],
          [2, 'success', 200, null],
        ]);
        expect(again.map((h) => h.deliveryId)).toEqual(entries.map((d) => d.id));
      }
      for (const hit of byServe) {
        // Held by the live API process: timed out as usual and retried on the schedule.
        const entries = log.filter((d) => d.eventId === hit.eventId);
        expect(entries.map((d) => [d.attempt, d.status, d.errorMessage])).toEqual([
          [1, 'failed', `Timed out after ${TIMEOUT_MS} ms.`],
          [2, 'success', null],
        ]);
      }

      // Abandoned attempts are not the receiver's failures: the endpoint's streak is clean.
      const endpoint = await (
        await fetch(`${api.url}/api/merchant/v1/stores/${shop.storeId}/webhooks/${hook.id}`, {
          headers: { authorization: `Bearer ${shop.apiKey}` },
        })
      ).json();
      expect([endpoint.enabled, endpoint.failureCount, endpoint.lastDeliveredAt !== null]).toEqual([true, 0, true]);
      // A live dispatcher said what it did.
      expect(
        [...newWorker.logs, ...api.logs].some(
          (line) => line.msg === 'webhook attempts abandoned past their lease; queued again',
        ),
      ).toBe(true);

      // Everything alive stops cleanly.
      for (const worker of workers.filter((w) => w.process.exitCode === null && w.process.signalCode === null))
        expect(await worker.stop()).toBe(0);
    },
  );
});
