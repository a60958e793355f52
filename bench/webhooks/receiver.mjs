/**
 * The webhooks benchmark's receiver: a node:http server on 127.0.0.1 that answers 200 at once,
 * then checks the X-Service-Signature and counts deliveries and events, phase by phase.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import { check } from '../lib/check.mjs';
import { onCleanup } from '../lib/cleanup.mjs';
import { PAUSE_MS, wall } from './knobs.mjs';

function newPhase(name) {
  return {
    name,
    requests: 0,
    badSignatures: 0,
    staleTimestamps: 0,
    badBodies: 0,
    duplicateDeliveries: 0,
    repeatedEvents: 0,
    deliveryIds: new Set(),
    /** event id -> wall ms of its first arrival */
    arrivals: new Map(),
    /** event id -> sha1 of the body (to compare worker and floor bodies) */
    bodyHashes: new Map(),
    /** event id -> payload.sentAtMs when present */
    sentAt: new Map(),
    firstAt: undefined,
    lastAt: undefined,
    /** Gaps of at least PAUSE_MS between two arrivals: how many, and the time they add up to. */
    pauses: 0,
    pausedMs: 0,
    longestGapMs: 0,
    firstBadSignature: undefined,
  };
}

/** A node:http receiver on 127.0.0.1: 200 at once, then checks the signature and counts. */
export async function startReceiver(secret) {
  let phase = newPhase('idle');
  const verify = (header, raw, p, nowS) => {
    const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? '');
    if (!match) return false;
    const expected = createHmac('sha256', secret).update(`${match[1]}.`).update(raw).digest();
    if (!timingSafeEqual(expected, Buffer.from(match[2], 'hex'))) return false;
    if (Math.abs(nowS - Number(match[1])) > 300) p.staleTimestamps++;
    return true;
  };
  const server = http.createServer((req, res) => {
    const at = wall();
    const p = phase;
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
      res.end('ok');
      const raw = Buffer.concat(chunks);
      p.requests++;
      p.firstAt ??= at;
      if (p.lastAt !== undefined && at > p.lastAt) {
        const gap = at - p.lastAt;
        p.longestGapMs = Math.max(p.longestGapMs, gap);
        if (gap >= PAUSE_MS) {
          p.pauses++;
          p.pausedMs += gap;
        }
      }
      p.lastAt = Math.max(p.lastAt ?? at, at);
      if (!verify(req.headers['x-service-signature'], raw, p, Math.floor(Date.now() / 1000))) {
        p.badSignatures++;
        p.firstBadSignature ??= req.headers['x-service-signature'];
      }
      const deliveryId = req.headers['x-service-delivery-id'];
      if (p.deliveryIds.has(deliveryId)) p.duplicateDeliveries++;
      else p.deliveryIds.add(deliveryId);
      const eventId = req.headers['x-service-event-id'];
      let body;
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        body = undefined;
      }
      if (
        !body ||
        body.id !== eventId ||
        body.event !== req.headers['x-service-event'] ||
        req.method !== 'POST' ||
        req.url !== '/hook'
      )
        p.badBodies++;
      if (p.arrivals.has(eventId)) {
        p.repeatedEvents++;
        return;
      }
      p.arrivals.set(eventId, at);
      p.bodyHashes.set(eventId, createHash('sha1').update(raw).digest('base64'));
      if (typeof body?.data?.sentAtMs === 'number') p.sentAt.set(eventId, body.data.sentAtMs);
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const close = onCleanup('close webhook receiver', () =>
    new Promise((resolve) => server.close(() => resolve())).then(() => server.closeAllConnections?.()),
  );
  return {
    url: `http://127.0.0.1:${server.address().port}/hook`,
    begin(name) {
      phase = newPhase(name);
      return phase;
    },
    close: async () => {
      server.closeAllConnections?.();
      await close();
    },
  };
}

export function checkReceived(run, expectedEvents, label) {
  const p = run.phase;
  check(
    p.badSignatures === 0,
    `${label}: ${p.badSignatures} requests with a bad X-Service-Signature (first: ${p.firstBadSignature})`,
  );
  check(p.badBodies === 0, `${label}: ${p.badBodies} requests whose body does not match their headers`);
  check(p.duplicateDeliveries === 0, `${label}: ${p.duplicateDeliveries} duplicate x-service-delivery-id`);
  check(p.repeatedEvents === 0, `${label}: ${p.repeatedEvents} events delivered more than once`);
  check(
    p.requests === expectedEvents.length,
    `${label}: the receiver got ${p.requests} requests, expected exactly ${expectedEvents.length}`,
  );
  check(
    expectedEvents.every((id) => p.arrivals.has(id)),
    `${label}: every event arrived`,
  );
}
