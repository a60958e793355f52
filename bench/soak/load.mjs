/**
 * The soak's load: each kind on its fixed schedule (open loop), the settlements one second after
 * each checkout's answer, every answer recorded into the current window and the run's totals.
 */
import { performance } from 'node:perf_hooks';
import { onCleanup } from '../lib/cleanup.mjs';
import { send, signedNotification } from './http.mjs';
import { KINDS, MAX_IN_FLIGHT, MIX, RATE, SETTLE_AFTER_MS, SOAK_S } from './knobs.mjs';
import { newWindow } from './receiver.mjs';

/** Starts the load; the answers go into `load.window` until `nextWindow` closes it. */
export function startLoad({
  service,
  gatewaySecret,
  receiverState,
  builders,
  agents,
  recentOrders,
  settleQueue,
  counters,
}) {
  const errors = [];
  const intended429 = { count: 0 };
  const totals = Object.fromEntries(KINDS.map((kind) => [kind, { statuses: {}, times: [], sent: 0, skipped: 0 }]));
  const inFlight = Object.fromEntries(KINDS.map((kind) => [kind, 0]));
  let windowState = newWindow(0);
  receiverState.window = windowState;
  const t0 = performance.now();
  const endAt = t0 + SOAK_S * 1000;
  const pending = new Set();

  const record = (kind, answer, spec) => {
    const status = answer.status;
    const bucket = windowState.byKind[kind];
    bucket.statuses[status] = (bucket.statuses[status] ?? 0) + 1;
    bucket.times.push(answer.ms);
    windowState.times.push(answer.ms);
    totals[kind].statuses[status] = (totals[kind].statuses[status] ?? 0) + 1;
    totals[kind].times.push(answer.ms);
    let problem;
    if (kind === 'limited' && status === 429) intended429.count++;
    else if (status < 200 || status >= 300) problem = `${status}`;
    else if (kind === 'checkout') {
      let orderId;
      try {
        orderId = JSON.parse(answer.text).orderId;
      } catch {
        // handled below
      }
      if (typeof orderId !== 'string') problem = 'checkout answered 2xx without orderId';
      else {
        counters.checkouts200++;
        recentOrders.push(orderId);
        if (recentOrders.length > 200) recentOrders.splice(0, 100);
        settleQueue.push({ orderId, amount: spec.amount, dueAt: performance.now() + SETTLE_AFTER_MS });
      }
    } else if (kind === 'settlement') {
      let outcome;
      try {
        outcome = JSON.parse(answer.text).outcome;
      } catch {
        // handled below
      }
      if (outcome === 'settled') counters.settled++;
      else {
        counters.notSettled++;
        problem = `settlement outcome ${outcome}`;
      }
    }
    if (problem)
      errors.push({
        kind,
        status,
        problem,
        atS: (performance.now() - t0) / 1000,
        url: spec.url.replace(service.url, '').slice(0, 120),
        text: answer.text.slice(0, 300),
      });
  };

  const issue = (kind, spec) => {
    if (inFlight[kind] >= MAX_IN_FLIGHT) {
      totals[kind].skipped++;
      errors.push({
        kind,
        status: 'skipped',
        problem: `${MAX_IN_FLIGHT} already in flight`,
        atS: (performance.now() - t0) / 1000,
        url: spec.url.replace(service.url, '').slice(0, 120),
        text: '',
      });
      return;
    }
    inFlight[kind]++;
    totals[kind].sent++;
    const promise = send(agents[kind], spec.url, spec).then((answer) => {
      inFlight[kind]--;
      pending.delete(promise);
      record(kind, answer, spec);
    });
    pending.add(promise);
  };

  const paced = Object.entries(MIX).map(([kind, share], i) => ({
    kind,
    interval: 1000 / (RATE * share),
    next: t0 + i * 7,
    n: 0,
  }));
  const tick = () => {
    const now = performance.now();
    if (now < endAt) {
      for (const stream of paced) {
        while (stream.next <= now && stream.next < endAt) {
          issue(stream.kind, builders[stream.kind](stream.n++));
          stream.next += stream.interval;
        }
      }
    }
    while (settleQueue.length > 0 && (settleQueue[0].dueAt <= now || now >= endAt)) {
      const { orderId, amount } = settleQueue.shift();
      const notification = signedNotification(gatewaySecret, orderId, amount);
      issue('settlement', {
        url: `${service.url}/api/payments/test/webhook`,
        method: 'POST',
        headers: { 'x-test-signature': notification.signature },
        body: notification.body,
      });
    }
  };
  const ticker = setInterval(tick, 5);
  const stopTicker = onCleanup('stop the soak load', () => clearInterval(ticker));
  return {
    errors,
    intended429,
    totals,
    inFlight,
    pending,
    settleQueue,
    t0,
    endAt,
    tick,
    stopTicker,
    /** The window the answers and deliveries go into now. */
    get window() {
      return windowState;
    },
    /** Closes the current window and opens window `index`; returns the closed one. */
    nextWindow(index) {
      const closed = windowState;
      windowState = newWindow(index);
      receiverState.window = windowState;
      return closed;
    },
  };
}
