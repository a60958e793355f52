/**
 * A webhook receiver as a merchant would write one: a `node:http` server that reads the raw
 * body, verifies both signature schemes with its own code (not the service's signing module),
 * records every request and answers what the test scripts.
 *
 *  - ours (interface document): `X-Service-Signature: t=<unix>,v1=<hex>`, hex = HMAC-SHA256 of
 *    `<t>.<raw body>` keyed with the secret string;
 *  - Standard Webhooks: `webhook-signature` is a space-separated list of `v1,<base64>`, each an
 *    HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<raw body>` keyed with the base64-decoded
 *    part of the secret after `whsec_`.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort } from './ports.js';

export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  body: { id: string; event: string; createdAt: string; storeId: string; data: Record<string, unknown> } | undefined;
  eventId: string | undefined;
  deliveryId: string | undefined;
  /** Our scheme verified with the secret this path was given. */
  serviceSignatureValid: boolean;
  /** Standard Webhooks verified with the same secret. */
  standardSignatureValid: boolean;
  receivedAt: number;
}

export interface ReceiverAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Send this many bytes of body instead of `body` (written in 64 KB chunks). */
  bodyBytes?: number;
  /** Wait before answering. */
  delayMs?: number;
}

export interface WebhookReceiver {
  url: string;
  port: number;
  received: ReceivedWebhook[];
  /** Big answers whose body was written out completely (false: the client hung up early). */
  bigBodyFinished: boolean[];
  /** Resolves once `count` requests (optionally matching) arrived; rejects after `timeoutMs`. */
  waitFor(
    count: number,
    opts?: { timeoutMs?: number; where?: (hit: ReceivedWebhook) => boolean },
  ): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

function equalText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

export function verifyServiceSignature(secret: string, header: string | undefined, rawBody: string): boolean {
  if (!header) return false;
  const parts = Object.fromEntries(header.split(',').map((part) => part.split('=', 2) as [string, string]));
  if (!parts.t || !parts.v1 || !/^\d+$/.test(parts.t)) return false;
  const expected = createHmac('sha256', secret).update(`${parts.t}.${rawBody}`).digest('hex');
  return equalText(expected, parts.v1);
}

export function verifyStandardSignature(secret: string, headers: IncomingHttpHeaders, rawBody: string): boolean {
  const id = first(headers['webhook-id']);
  const timestamp = first(headers['webhook-timestamp']);
  const signatures = first(headers['webhook-signature']);
  if (!id || !timestamp || !signatures || !secret.startsWith('whsec_')) return false;
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${rawBody}`).digest('base64');
  return signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',', 2);
    return version === 'v1' && signature !== undefined && equalText(expected, signature);
  });
}

/**
 * Starts the receiver on 127.0.0.1 (`port` 0: any free port). `secretFor(path)` says which
 * secret a path's endpoint was given; `answer(hit, index)` decides each response (default 200).
 */
export async function startWebhookReceiver(
  opts: {
    port?: number;
    secretFor?: (path: string) => string | undefined;
    answer?: (hit: ReceivedWebhook, index: number) => ReceiverAnswer;
  } = {},
): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const bigBodyFinished: boolean[] = [];
  const waiters = new Set<() => void>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const path = req.url ?? '/';
      const secret = opts.secretFor?.(path);
      let body: ReceivedWebhook['body'];
      try {
        body = JSON.parse(rawBody);
      } catch {
        body = undefined;
      }
      const hit: ReceivedWebhook = {
        path,
        headers: req.headers,
        rawBody,
        body,
        eventId: first(req.headers['x-service-event-id']),
        deliveryId: first(req.headers['x-service-delivery-id']),
        serviceSignatureValid:
          secret !== undefined && verifyServiceSignature(secret, first(req.headers['x-service-signature']), rawBody),
        standardSignatureValid: secret !== undefined && verifyStandardSignature(secret, req.headers, rawBody),
        receivedAt: Date.now(),
      };
      const index = received.push(hit) - 1;
      for (const wake of waiters) wake();
      const answer = opts.answer?.(hit, index) ?? { status: 200, body: 'ok' };
      const respond = () => {
        res.on('error', () => undefined);
        if (answer.bodyBytes !== undefined) {
          const slot = bigBodyFinished.push(false) - 1;
          res.on('finish', () => (bigBodyFinished[slot] = true));
          res.writeHead(answer.status, {
            'content-type': 'text/plain',
            'content-length': String(answer.bodyBytes),
            ...answer.headers,
          });
          const chunk = Buffer.alloc(64 * 1024, 'x');
          let left = answer.bodyBytes;
          const pump = () => {
            while (left > 0 && !res.destroyed) {
              const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
              left -= piece.length;
              if (!res.write(piece)) return void res.once('drain', pump);
            }
            if (!res.destroyed) res.end();
          };
          pump();
          return;
        }
        res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
        res.end(answer.body ?? '');
      };
      if (answer.delayMs) setTimeout(respond, answer.delayMs);
      else respond();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    received,
    bigBodyFinished,
    waitFor(count, { timeoutMs = 20_000, where = () => true } = {}) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const hits = received.filter(where);
          if (hits.length < count) return false;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(hits);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`receiver: ${received.filter(where).length} of ${count} requests after ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** A loopback port that was free a moment ago (for a receiver that starts later). */
export const reservePort = freePort;
