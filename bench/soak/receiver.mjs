/** The soak's webhook receiver and the windows it and the load count into. */
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import { onCleanup } from '../lib/cleanup.mjs';
import { KINDS } from './knobs.mjs';

export function newWindow(index) {
  return {
    index,
    byKind: Object.fromEntries(KINDS.map((kind) => [kind, { statuses: {}, times: [] }])),
    times: [],
    deliveries: 0,
    lags: [],
    rssSamples: [],
  };
}

/** What the receiver counts over the whole run; `secret` is set once the webhook exists, `window` by the load. */
export function newReceiverState() {
  return {
    secret: undefined,
    requests: 0,
    badSignatures: 0,
    badBodies: 0,
    duplicateDeliveries: 0,
    repeatedEvents: 0,
    deliveryIds: new Set(),
    events: new Map(),
    byEvent: {},
    lags: [],
    window: newWindow(0),
    firstBad: undefined,
  };
}

/** The webhook receiver: 200 at once, then checks the signature and counts by event and delivery id. */
export async function startReceiver(state) {
  const server = http.createServer((req, res) => {
    const arrived = Date.now();
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
      res.end('ok');
      const raw = Buffer.concat(chunks);
      state.requests++;
      const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(req.headers['x-service-signature'] ?? '');
      const good =
        match &&
        state.secret &&
        timingSafeEqual(
          createHmac('sha256', state.secret).update(`${match[1]}.`).update(raw).digest(),
          Buffer.from(match[2], 'hex'),
        );
      if (!good) {
        state.badSignatures++;
        state.firstBad ??= `${req.headers['x-service-signature']} on ${raw.toString('utf8').slice(0, 120)}`;
      }
      const deliveryId = req.headers['x-service-delivery-id'];
      if (state.deliveryIds.has(deliveryId)) state.duplicateDeliveries++;
      else state.deliveryIds.add(deliveryId);
      let body;
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        state.badBodies++;
        return;
      }
      if (body.id !== req.headers['x-service-event-id'] || body.event !== req.headers['x-service-event'])
        state.badBodies++;
      if (state.events.has(body.id)) {
        state.repeatedEvents++;
        return;
      }
      state.events.set(body.id, body.event);
      state.byEvent[body.event] = (state.byEvent[body.event] ?? 0) + 1;
      const lag = arrived - Date.parse(body.createdAt);
      state.lags.push(lag);
      state.window.deliveries++;
      state.window.lags.push(lag);
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const close = onCleanup(
    'close the soak webhook receiver',
    () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return { port: server.address().port, close, server };
}
