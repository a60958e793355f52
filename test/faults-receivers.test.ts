/**
 * Fault: receivers that misbehave, black-box. The built server's own dispatcher sends real
 * events (an order placed through the theme checkout, product updates) to real receivers on
 * loopback, and the delivery log is read through the merchant API:
 *  - one that never answers: the attempt fails at WEBHOOK_TIMEOUT_MS and is retried later;
 *  - 301, 302 and 307 to another URL: not followed (nothing reaches that URL), failed with the status;
 *  - 5 MB answers: success or failure by status, at most 1 KB kept, the server's RSS steady;
 *  - a socket closed in the middle of the status line/headers, and one in the middle of the body
 *    (after a 200 head): failed with an error message, and retried.
 * Each misbehaves on the first attempt only and answers 200 afterwards, so the log ends in one success.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboard } from './support/seller.js';
import {
  checkout,
  createWebhook,
  deliveryLog,
  rssKiB,
  seedShop,
  sleep,
  waitFor,
  type Delivery,
  type Shop,
} from './support/faults.js';
import { startServer } from './support/server.js';

const TIMEOUT_MS = 1_500;
const BIG = 5 * 1024 * 1024;

interface Hit {
  path: string;
  eventId: string;
  deliveryId: string;
  at: number;
}

let server: Awaited<ReturnType<typeof startServer>>;
let shop: Shop;
const listeners: Server[] = [];
const hits: Hit[] = [];
const landed: string[] = [];
let base = '';
let landingUrl = '';

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const http = createServer(handler);
  http.keepAliveTimeout = 30_000;
  listeners.push(http);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
}

/** What each path does on its first attempt of an event; later attempts answer 200. */
const misbehave: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
  '/hang': () => undefined, // reads the request, never answers
  '/r301': (_req, res) => res.writeHead(301, { location: `${landingUrl}/moved` }).end(),
  '/r302': (_req, res) => res.writeHead(302, { location: `${landingUrl}/found` }).end('see there'),
  '/r307': (_req, res) => res.writeHead(307, { location: `${landingUrl}/temporary` }).end(),
  '/big500': (_req, res) => bigAnswer(res, 500),
  '/cut-head': (_req, res) => {
    res.socket!.write('HTTP/1.1 200 OK\r\nContent-Type: text/pl');
    setTimeout(() => res.socket!.destroy(), 50);
  },
  '/cut-body': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '4096' });
    res.write('accepted, but then');
    setTimeout(() => res.socket!.destroy(), 50);
  },
};

function bigAnswer(res: ServerResponse, status: number): void {
  res.on('error', () => undefined);
  res.writeHead(status, { 'content-type': 'text/plain', 'content-length': String(BIG) });
  const chunk = Buffer.alloc(64 * 1024, 'x');
  let left = BIG;
  const pump = () => {
    while (left > 0 && !res.destroyed) {
      left -= chunk.length;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
    if (!res.destroyed) res.end();
  };
  pump();
}

beforeAll(async () => {
  server = await startServer({ WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS), WEBHOOK_POLL_MS: '200' });
  shop = await seedShop(server.url);
  landingUrl = await listen((req, res) => {
    landed.push(req.url ?? '');
    res.end('followed');
  });
  base = await listen((req, res) => {
    req.resume();
    req.on('end', () => {
      const path = req.url ?? '/';
      const eventId = String(req.headers['x-service-event-id'] ?? '');
      const first = !hits.some((hit) => hit.path === path && hit.eventId === eventId);
      hits.push({ path, eventId, deliveryId: String(req.headers['x-service-delivery-id'] ?? ''), at: Date.now() });
      if (path === '/big200') return bigAnswer(res, 200);
      const bad = misbehave[path];
      if (first && bad) return bad(req, res);
      res.end('ok');
    });
  });
}, 90_000);

afterAll(async () => {
  for (const http of listeners) {
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
  }
  await server?.stop();
});

describe('misbehaving receivers', () => {
  it(
    'times out, does not follow redirects, keeps 1 KB of 5 MB, fails early closes, and retries each',
    { timeout: 60_000 },
    async () => {
      const paths = Object.keys(misbehave);
      const hooks: Record<string, string> = {};
      for (const path of paths) hooks[path] = (await createWebhook(shop, `${base}${path}`, ['order.created'], path)).id;
      hooks['/big200'] = (await createWebhook(shop, `${base}/big200`, ['product.updated'], 'big200')).id;

      const placed = await checkout(shop, [{ productId: shop.instant.id, quantity: 1 }]);
      expect(placed.status).toBe(200);
      const { orderId } = await placed.json();

      // Every endpoint's first attempt arrives at once, the retries about 5 s after each failure.
      await waitFor('first attempts', () => paths.every((path) => hits.some((hit) => hit.path === path)), 10_000);
      const eventId = hits.find((hit) => hit.path === '/hang')!.eventId;
      expect(eventId).toMatch(/^evt_/);

      // Meanwhile, twelve 5 MB answers: the server reads 1 KB of each and hangs up.
      const rssBefore = rssKiB(server.process.pid!);
      for (let i = 0; i < 12; i++) {
        const patched = await dashboard(
          shop.seller,
          'PATCH',
          `/api/dashboard/stores/${shop.storeId}/products/${shop.instant.id}`,
          { name: `Guide v${i}` },
        );
        expect(patched.status).toBe(200);
      }
      await waitFor('twelve 5 MB answers', () => hits.filter((hit) => hit.path === '/big200').length >= 12, 15_000);

      await waitFor(
        'a retry at every endpoint',
        () => paths.every((path) => hits.filter((hit) => hit.path === path).length >= 2),
        15_000,
        200,
      );
      const logs: Record<string, Delivery[]> = {};
      await waitFor(
        'every log to end in success',
        async () => {
          for (const [path, id] of Object.entries(hooks)) logs[path] = await deliveryLog(shop, id);
          return Object.entries(logs).every(
            ([path, log]) =>
              log.length > 0 &&
              log.every((d) => d.status === 'success' || d.status === 'failed') &&
              (path === '/big200' ? log.length === 12 : true),
          );
        },
        10_000,
        250,
      );
      await sleep(500);
      const rssAfter = rssKiB(server.process.pid!);

      const row = (d: Delivery) => ({
        attempt: d.attempt,
        status: d.status,
        responseCode: d.responseCode,
        errorMessage: d.errorMessage,
      });
      for (const path of paths) {
        const log = logs[path]!;
        expect(log.map((d) => d.eventId)).toEqual([eventId, eventId]);
        expect(log[1], path).toMatchObject({ attempt: 2, status: 'success', responseCode: 200, errorMessage: null });
        const attempts = hits.filter((hit) => hit.path === path);
        // The same event again, as a new attempt (its own delivery id), after the retry delay (5 s +/- 10 %).
        expect(attempts.map((hit) => hit.eventId)).toEqual([eventId, eventId]);
        expect(attempts.map((hit) => hit.deliveryId)).toEqual([log[0]!.id, log[1]!.id]);
        expect(attempts[1]!.at - attempts[0]!.at, path).toBeGreaterThanOrEqual(4_400);
      }
      const first = (path: string) => logs[path]![0]!;

      // Hangs: failed when the attempt's budget ran out, not before, not much after.
      expect(row(first('/hang'))).toEqual({
        attempt: 1,
        status: 'failed',
        responseCode: null,
        errorMessage: `Timed out after ${TIMEOUT_MS} ms.`,
      });
      expect(first('/hang').durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
      expect(first('/hang').durationMs).toBeLessThan(TIMEOUT_MS + 1_000);
      const hang = hits.filter((hit) => hit.path === '/hang');
      expect(hang[1]!.at - hang[0]!.at).toBeGreaterThanOrEqual(TIMEOUT_MS + 4_400);

      // Redirects: not followed, failed with their status and where they pointed.
      for (const [path, status, to] of [
        ['/r301', 301, 'moved'],
        ['/r302', 302, 'found'],
        ['/r307', 307, 'temporary'],
      ] as const) {
        expect(row(first(path))).toEqual({
          attempt: 1,
          status: 'failed',
          responseCode: status,
          errorMessage: `Redirect not followed (${status} to ${landingUrl}/${to}).`,
        });
      }
      expect(landed).toEqual([]);

      // 5 MB: judged by status; at most 1 KB kept.
      expect(row(first('/big500'))).toEqual({
        attempt: 1,
        status: 'failed',
        responseCode: 500,
        errorMessage: 'The receiver answered 500.',
      });
      expect(first('/big500').responseBodyPreview).toBe('x'.repeat(1024));
      const big200 = logs['/big200']!;
      expect(big200).toHaveLength(12);
      for (const d of big200) {
        expect(row(d)).toEqual({ attempt: 1, status: 'success', responseCode: 200, errorMessage: null });
        expect(d.responseBodyPreview).toBe('x'.repeat(1024));
      }
      // 13 answers of 5 MB (65 MB) went by; the server holds no more than a few MB for them.
      expect(rssAfter - rssBefore, `RSS ${rssBefore} -> ${rssAfter} KiB`).toBeLessThan(32 * 1024);

      // Early closes: failed with a message, never a success on half an answer.
      expect(row(first('/cut-head'))).toEqual({
        attempt: 1,
        status: 'failed',
        responseCode: null,
        errorMessage: 'Connection reset by the receiver.',
      });
      expect(row(first('/cut-body'))).toEqual({
        attempt: 1,
        status: 'failed',
        responseCode: 200,
        errorMessage: 'The receiver closed the connection before its answer was complete (200).',
      });
      expect(first('/cut-body').responseBodyPreview).toBe('accepted, but then');

      // The endpoints: the failures counted, the success cleared them; the order is the one placed.
      const list = await (
        await fetch(`${server.url}/api/merchant/v1/stores/${shop.storeId}/webhooks`, {
          headers: { authorization: `Bearer ${shop.apiKey}` },
        })
      ).json();
      for (const hook of list.webhooks)
        expect([hook.name, hook.enabled, hook.failureCount, hook.lastDeliveredAt !== null]).toEqual([
          hook.name,
          true,
          0,
          true,
        ]);
      expect(orderId).toBeTruthy();
    },
  );
});
