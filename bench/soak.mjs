/**
 * soak (opt-in: `node bench/run.mjs soak`): one `svc serve` (HTTP + webhook dispatcher) under
 * a fixed, mixed, open-loop request rate for BENCH_SOAK_S seconds (600), sampled every
 * BENCH_SOAK_SAMPLE_S (10):
 *
 *   catalog     GET  /api/stores/by-subdomain/{subdomain}/storefront
 *   cart        GET  /api/v1/cart?storeId=&cart=<3-5 lines>
 *   checkout    POST /api/v1/checkout (one line; a license-key product and a manual one in turn)
 *   settlement  POST /api/payments/test/webhook, signed payment.succeeded for each order a
 *               checkout made, one second after its answer (so as many as checkouts)
 *   merchant    GET  /api/merchant/v1/stores/{storeId}/orders?limit=20 and .../orders/{recent id}
 *   limited     POST /api/coupons/validate from one address, above its budget of 20/min: the
 *               intended 429s
 *   webhooks    the dispatcher's deliveries of order.created / .paid / .completed to a
 *               receiver in this process (signature checked, lag = arrival - event createdAt)
 *
 * Requests are issued on a fixed schedule (open loop: the next request goes out when it is due,
 * whether or not earlier ones were answered; latency counts from the due time's issue, so a slow
 * server cannot hide behind its own slowness), each kind from its own keep-alive agent on a
 * random 127.x source address. Every window prints requests by status per kind, p50 / p99 of
 * the window, the server's RSS (VmRSS from /proc, sampled every second), its CPU and that of
 * PostgreSQL and of other processes, webhook deliveries received and their lag.
 *
 * The verdict: errors other than the intended 429s (count and first examples; any makes the
 * run fail), RSS growth after warm-up (BENCH_SOAK_WARMUP_S, 60: the mean of the last third of
 * the windows after it against the first third; flagged above 10 %; and, since RSS is a
 * sawtooth between major GCs, the lowest sample of each third as well), peak RSS against the
 * 250 MB target (issue 19), and every webhook event delivered exactly once with a good signature.
 *
 * Knobs: BENCH_SOAK_S (600), BENCH_SOAK_RATE (50 requests/s in all), BENCH_SOAK_SAMPLE_S (10),
 * BENCH_SOAK_WARMUP_S (60; at most a third of the run), BENCH_SOAK_DRAIN_S (60: the most the
 * end may wait for answers and deliveries).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { startCpuAccount } from './lib/cpu.mjs';
import { freshDatabase, watchDatabase, withClient } from './lib/db.mjs';
import { fixed, heading, seconds, table } from './lib/format.mjs';
import { onCleanup } from './lib/cleanup.mjs';
import { expectStatus, request } from './lib/http.mjs';
import { percentile } from './lib/load.mjs';
import { memoryOf } from './lib/proc.mjs';
import {
  createProduct,
  importKeys,
  problemsAfterStart,
  provisionMerchant,
  randomLoopback,
  startService,
  tempDir,
} from './lib/service.mjs';

const SOAK_S = Number(process.env.BENCH_SOAK_S ?? 600);
const RATE = Number(process.env.BENCH_SOAK_RATE ?? 50);
const SAMPLE_S = Number(process.env.BENCH_SOAK_SAMPLE_S ?? 10);
const WARMUP_S = Math.min(Number(process.env.BENCH_SOAK_WARMUP_S ?? 60), Math.floor(SOAK_S / 3));
const DRAIN_S = Number(process.env.BENCH_SOAK_DRAIN_S ?? 60);
const RSS_TARGET_MB = 250; // issue 19 (issue 9 said 300)
const RSS_GROWTH_LIMIT = 0.1;
const PUBLIC_URL = 'https://shop.bench.test';
/** Shares of RATE; settlements follow checkouts one for one, so they take the checkout share again. */
const MIX = { catalog: 0.24, cart: 0.24, checkout: 0.12, merchantList: 0.12, merchantOrder: 0.12, limited: 0.04 };
const KINDS = ['catalog', 'cart', 'checkout', 'settlement', 'merchantList', 'merchantOrder', 'limited'];
const SETTLE_AFTER_MS = 1000;
/** In flight per kind beyond which a due request is not sent but counted as an error (the server is not keeping up). */
const MAX_IN_FLIGHT = 256;
const REQUEST_TIMEOUT_MS = 30_000;
const WEBHOOK_EVENTS = ['order.created', 'order.paid', 'order.completed'];

function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const mean = (values) => values.reduce((sum, v) => sum + v, 0) / Math.max(1, values.length);

/** One request; resolves { status, ms, text } (status 0 on a socket error or timeout, with the error as text). */
function send(agent, url, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((resolve) => {
    const start = performance.now();
    const payload = body === undefined ? undefined : Buffer.from(body);
    const req = http.request(
      url,
      {
        method,
        agent,
        headers: {
          accept: 'application/json',
          ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
          ...headers,
        },
      },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode,
            ms: performance.now() - start,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', (error) =>
          resolve({ status: 0, ms: performance.now() - start, text: `response error: ${error.message}` }),
        );
      },
    );
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`no answer in ${REQUEST_TIMEOUT_MS / 1000} s`)));
    req.on('error', (error) =>
      resolve({ status: 0, ms: performance.now() - start, text: `request error: ${error.message}` }),
    );
    req.end(payload);
  });
}

/** A payment.succeeded notification, signed as test/support/payments.ts signs. */
function signedNotification(secret, orderId, amount) {
  const body = JSON.stringify({
    id: `tevt_${randomBytes(8).toString('hex')}`,
    type: 'payment.succeeded',
    orderId,
    amount,
    currency: 'USD',
  });
  const t = Math.floor(Date.now() / 1000);
  const v1 = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
  return { body, signature: `t=${t},v1=${v1}` };
}

function newWindow(index) {
  return {
    index,
    byKind: Object.fromEntries(KINDS.map((kind) => [kind, { statuses: {}, times: [] }])),
    times: [],
    deliveries: 0,
    lags: [],
    rssSamples: [],
  };
}

/** The webhook receiver: 200 at once, then checks the signature and counts by event and delivery id. */
async function startReceiver(state) {
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

export default {
  name: 'soak',
  /** Opt-in: not part of `npm run bench` without names; `node bench/run.mjs soak`. */
  optIn: true,
  budgetS: SOAK_S + 300,
  title: `Soak: ${RATE} req/s mixed for ${SOAK_S} s (catalog, cart, checkout, settlement, merchant reads, intended 429s, webhook deliveries)`,
  measures: `${SOAK_S} s at ${RATE} req/s fixed rate (BENCH_SOAK_S, BENCH_SOAK_RATE): errors by status, p99 and RSS every ${SAMPLE_S} s, webhook lag; RSS growth after warm-up and peak vs ${RSS_TARGET_MB} MB`,

  async run() {
    const started = Date.now();
    const workDir = tempDir('svc-bench-soak-');
    const db = await freshDatabase();
    const encryptionKey = randomBytes(32);
    const gatewaySecret = randomBytes(24).toString('hex');
    console.log(`database ${db.name}`);

    // 1. The receiver, the service, a seller with a store, products, keys and a webhook.
    const receiverState = {
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
    const receiver = await startReceiver(receiverState);
    const service = await startService({
      databaseUrl: db.url,
      encryptionKey,
      dataDir: workDir,
      env: { TEST_GATEWAY_SECRET: gatewaySecret, PUBLIC_URL },
    });
    console.log(
      `service pid ${service.pid} on ${service.url} (started in ${seconds(Date.now() - started)}); webhook receiver on 127.0.0.1:${receiver.port}`,
    );
    const merchant = await provisionMerchant(service.url, {
      stores: 1,
      scopes: ['order:read', 'webhook:read', 'webhook:write'],
      redisKeyPrefix: service.redisKeyPrefix,
    });
    const [storeId] = merchant.storeIds;
    const subdomain = await withClient(
      db.url,
      async (client) => (await client.query('select subdomain from store where id = $1', [storeId])).rows[0].subdomain,
    );
    const checkoutRate = RATE * MIX.checkout;
    const keysNeeded = Math.ceil((checkoutRate / 2) * SOAK_S * 1.25) + 200;
    const products = {
      keyed: await createProduct(service.url, merchant, storeId, {
        name: 'Soak licence',
        price: 9.99,
        deliveryMethods: ['licenseKeys'],
      }),
      manual: await createProduct(service.url, merchant, storeId, {
        name: 'Soak manual delivery',
        price: 4.99,
        deliveryMethods: ['manualDelivery'],
        maxQuantity: 5,
      }),
      bundle: await createProduct(service.url, merchant, storeId, {
        name: 'Soak bundle',
        price: 24.5,
        deliveryMethods: ['deliveryInstructions'],
        deliveryInstructions: 'Download from the link in your e-mail.',
        minQuantity: 2,
      }),
      draft: await createProduct(service.url, merchant, storeId, {
        name: 'Soak draft',
        price: 1,
        deliveryMethods: ['manualDelivery'],
        status: 'draft',
      }),
    };
    const imported = await importKeys(
      service.url,
      merchant,
      storeId,
      products.keyed.id,
      Array.from(
        { length: keysNeeded },
        (_, i) => `SOAK-${String(i).padStart(6, '0')}-${randomBytes(6).toString('hex')}`,
      ),
    );
    check(imported.added === keysNeeded, `imported ${keysNeeded} keys (got ${JSON.stringify(imported)})`);
    const auth = { authorization: `Bearer ${merchant.apiKey}` };
    const created = await expectStatus(
      request(`${service.url}/api/merchant/v1/stores/${storeId}/webhooks`, {
        method: 'POST',
        headers: auth,
        body: { name: 'soak receiver', url: `http://127.0.0.1:${receiver.port}/hook`, events: WEBHOOK_EVENTS },
        localAddress: merchant.sourceAddress,
      }),
      201,
      'POST /api/merchant/v1/stores/{storeId}/webhooks',
    );
    receiverState.secret = created.json.secret;
    check(
      typeof receiverState.secret === 'string' && receiverState.secret.length > 0,
      'the webhook answer carries its secret',
    );
    const webhookCreatedAt = new Date();
    console.log(
      `seller ${merchant.email}, store ${storeId} (${subdomain}); products ${Object.entries(products)
        .map(([key, p]) => `${key} ${p.id}`)
        .join(', ')}; ${keysNeeded} keys; webhook ${created.json.id} for ${WEBHOOK_EVENTS.join(', ')}`,
    );

    // 2. What each kind sends.
    const unknownId = `z${randomBytes(16).toString('hex').slice(0, 23)}`;
    const carts = [
      [
        { productId: products.keyed.id, quantity: 1 },
        { productId: products.manual.id, quantity: 2 },
        { productId: products.keyed.id, quantity: 1 },
      ],
      [
        { productId: products.manual.id, quantity: 4 },
        { productId: products.bundle.id, quantity: 1 },
        { productId: unknownId, quantity: 1 },
        { productId: products.manual.id, quantity: 3 },
      ],
      [
        { productId: products.bundle.id, quantity: 2 },
        { productId: products.draft.id, quantity: 1 },
        { productId: products.keyed.id, quantity: 2 },
        { productId: unknownId, quantity: 1 },
        { productId: products.manual.id, quantity: 1 },
      ],
    ].map((lines) => `/api/v1/cart?${new URLSearchParams({ storeId, cart: JSON.stringify(lines) })}`);
    const address = randomLoopback();
    const limitedAddress = randomLoopback();
    const agents = Object.fromEntries(
      KINDS.map((kind) => [
        kind,
        new http.Agent({
          keepAlive: true,
          maxSockets: 64,
          localAddress: kind === 'limited' ? limitedAddress : address,
        }),
      ]),
    );
    onCleanup('destroy the soak agents', () => Object.values(agents).forEach((agent) => agent.destroy()));
    const recentOrders = [];
    const settleQueue = [];
    let checkoutCount = 0;
    const counters = { checkouts200: 0, settled: 0, notSettled: 0 };
    const builders = {
      catalog: () => ({ url: `${service.url}/api/stores/by-subdomain/${subdomain}/storefront` }),
      cart: (n) => ({ url: `${service.url}${carts[n % carts.length]}` }),
      checkout: () => {
        const n = checkoutCount++;
        const product = n % 2 === 0 ? products.keyed : products.manual;
        return {
          url: `${service.url}/api/v1/checkout`,
          method: 'POST',
          headers: { 'user-agent': 'svc-bench-soak/1' },
          body: JSON.stringify({
            shopId: storeId,
            cart: [{ productId: product.id, quantity: 1 }],
            email: `buyer-${n % 5000}@example.test`,
          }),
          amount: product.price,
        };
      },
      merchantList: () => ({ url: `${service.url}/api/merchant/v1/stores/${storeId}/orders?limit=20`, headers: auth }),
      merchantOrder: (n) => {
        const orderId =
          recentOrders.length > 0
            ? recentOrders[recentOrders.length - 1 - (n % Math.min(50, recentOrders.length))]
            : undefined;
        return orderId
          ? { url: `${service.url}/api/merchant/v1/stores/${storeId}/orders/${orderId}`, headers: auth }
          : { url: `${service.url}/api/merchant/v1/stores/${storeId}/orders?limit=1`, headers: auth };
      },
      limited: () => ({
        url: `${service.url}/api/coupons/validate`,
        method: 'POST',
        body: JSON.stringify({ storeId, code: 'SOAK-NO-SUCH-CODE' }),
      }),
    };

    // Check each kind once before the clock starts (and warm nothing else).
    for (const kind of ['catalog', 'cart', 'merchantList', 'limited']) {
      const spec = builders[kind](0);
      const answer = await send(agents[kind], spec.url, spec);
      check(
        answer.status === 200,
        `${kind}: ${spec.method ?? 'GET'} ${spec.url.replace(service.url, '')} answers 200 (got ${answer.status}: ${answer.text.slice(0, 300)})`,
      );
    }
    checkoutCount = 0;

    // 3. The load.
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

    // Sampling: RSS every second, a window every SAMPLE_S.
    const watch = await watchDatabase(db.name);
    const windows = [];
    const rssSampler = setInterval(() => {
      try {
        windowState.rssSamples.push(memoryOf(service.pid).rssMiB);
      } catch {
        // gone: noticed below
      }
    }, 1000);
    const stopRss = onCleanup('stop the soak RSS sampler', () => clearInterval(rssSampler));
    let account = await startCpuAccount({ serverPid: service.pid, backendPids: watch.backendPids });
    const windowCount = Math.ceil(SOAK_S / SAMPLE_S);
    console.log(
      `load: ${RATE} req/s for ${SOAK_S} s (${Object.entries(MIX)
        .map(([kind, share]) => `${kind} ${fixed(RATE * share, 1)}/s`)
        .join(
          ', ',
        )}, settlement = checkouts 200 answered, ${SETTLE_AFTER_MS} ms later), windows of ${SAMPLE_S} s; warm-up ${WARMUP_S} s`,
    );
    console.log(
      '  window  t s   req   non-2xx(not 429)  429   p50 ms  p99 ms  RSS MiB  cores srv/pg/other  deliveries  lag p50/p99 ms',
    );
    for (let w = 0; w < windowCount; w++) {
      const closeAt = t0 + Math.min((w + 1) * SAMPLE_S, SOAK_S) * 1000;
      await sleep(Math.max(0, closeAt - performance.now()));
      check(service.alive?.() ?? true, 'the service is alive');
      const closed = windowState;
      windowState = newWindow(w + 1);
      receiverState.window = windowState;
      const cpu = await account.stop();
      account = await startCpuAccount({ serverPid: service.pid, backendPids: watch.backendPids });
      let rssNow;
      try {
        rssNow = memoryOf(service.pid).rssMiB;
      } catch {
        throw new Error(`the service (pid ${service.pid}) is gone; log ${service.logFile}`);
      }
      closed.rssSamples.push(rssNow);
      closed.times.sort((a, b) => a - b);
      closed.lags.sort((a, b) => a - b);
      const requests = closed.times.length;
      const n429 = closed.byKind.limited.statuses[429] ?? 0;
      const bad = KINDS.reduce(
        (sum, kind) =>
          sum +
          Object.entries(closed.byKind[kind].statuses)
            .filter(
              ([status]) =>
                !(Number(status) >= 200 && Number(status) < 300) && !(kind === 'limited' && status === '429'),
            )
            .reduce((s, [, n]) => s + n, 0),
        0,
      );
      const row = {
        window: w + 1,
        endS: Math.min((w + 1) * SAMPLE_S, SOAK_S),
        requests,
        rps: requests / SAMPLE_S,
        bad,
        n429,
        p50: percentile(closed.times, 50),
        p99: percentile(closed.times, 99),
        rssMean: mean(closed.rssSamples),
        rssMax: Math.max(...closed.rssSamples),
        rssMin: Math.min(...closed.rssSamples),
        rssEnd: rssNow,
        cpu,
        deliveries: closed.deliveries,
        lagP50: percentile(closed.lags, 50),
        lagP99: percentile(closed.lags, 99),
        inFlight: KINDS.reduce((sum, kind) => sum + inFlight[kind], 0),
        byKind: Object.fromEntries(
          KINDS.map((kind) => [
            kind,
            {
              statuses: closed.byKind[kind].statuses,
              p99: percentile(
                closed.byKind[kind].times.sort((a, b) => a - b),
                99,
              ),
            },
          ]),
        ),
      };
      windows.push(row);
      console.log(
        `  ${String(row.window).padStart(6)}  ${String(row.endS).padStart(3)}  ${String(requests).padStart(4)}  ${String(bad).padStart(16)}  ${String(n429).padStart(3)}  ${fixed(row.p50, 1).padStart(6)}  ${fixed(row.p99, 1).padStart(6)}  ${fixed(row.rssEnd, 0).padStart(7)}  ` +
          `${[cpu.server, cpu.postgres, cpu.other]
            .map((v) => fixed(v, 2))
            .join('/')
            .padStart(18)}  ${String(row.deliveries).padStart(10)}  ${fixed(row.lagP50, 0)}/${fixed(row.lagP99, 0)}`,
      );
    }
    await stopTicker();
    tick(); // anything due at the very end, and the settlements still queued, go out now

    // 4. Drain: answers still in flight, the settlements they cause, and the deliveries.
    const drainStarted = performance.now();
    while (performance.now() - drainStarted < DRAIN_S * 1000 && (pending.size > 0 || settleQueue.length > 0)) {
      tick();
      await Promise.race([Promise.all([...pending]), sleep(200)]);
    }
    const expectedEvents = async () =>
      withClient(db.url, async (client) => {
        const { rows } = await client.query(
          `select e.type, count(*)::int as n from event e where e.store_id = $1 and e.type = any($2) and e.created_at >= $3 group by e.type order by e.type`,
          [storeId, WEBHOOK_EVENTS, webhookCreatedAt],
        );
        return Object.fromEntries(rows.map((row) => [row.type, row.n]));
      });
    let expected = await expectedEvents();
    const expectedTotal = () => Object.values(expected).reduce((sum, n) => sum + n, 0);
    while (performance.now() - drainStarted < DRAIN_S * 1000 && receiverState.events.size < expectedTotal()) {
      await sleep(500);
      expected = await expectedEvents();
    }
    const drainMs = performance.now() - drainStarted;
    // A late window for what arrived during the drain.
    const drainWindow = windowState;
    clearInterval(rssSampler);
    await stopRss();
    const deliveryRows = await withClient(
      db.url,
      async (client) =>
        (
          await client.query(
            `select status, count(*)::int as n from webhook_delivery where webhook_id = $1 group by status order by status`,
            [created.json.id],
          )
        ).rows,
    );
    const undelivered = await withClient(
      db.url,
      async (client) =>
        (
          await client.query(
            `select e.id, e.type, e.created_at from event e where e.store_id = $1 and e.type = any($2) and e.created_at >= $3
             and not exists (select 1 from webhook_delivery d where d.event_id = e.id and d.status = 'success') order by e.created_at limit 5`,
            [storeId, WEBHOOK_EVENTS, webhookCreatedAt],
          )
        ).rows,
    );
    const tableCounts = await withClient(
      db.url,
      async (client) =>
        (
          await client.query(
            `select (select count(*)::int from "order" where store_id = $1) as orders, (select count(*)::int from event where store_id = $1) as events, (select count(*)::int from webhook_delivery) as deliveries, pg_size_pretty(pg_database_size(current_database())) as db_size`,
            [storeId],
          )
        ).rows[0],
    );
    await watch.close();
    const hwm = memoryOf(service.pid).hwmMiB;
    const serviceLogs = service.logs();
    const serviceProblems = problemsAfterStart(serviceLogs);
    const serverCpuSeconds = windows.reduce((sum, row) => sum + row.cpu.serverCpuSeconds, 0);
    const postgresCpuSeconds = windows.reduce((sum, row) => sum + row.cpu.postgresCpuSeconds, 0);
    await service.stop();
    await receiver.close();
    await db.drop();

    // 5. Figures.
    console.log(heading('soak: time series'));
    console.log(
      table(windows, [
        { key: 'endS', label: 't s', format: String },
        { key: 'requests', label: 'answers', format: String },
        {
          key: 'byKind',
          label: 'catalog/cart/checkout/settle/m-list/m-order/limited 2xx',
          align: 'left',
          format: (v) =>
            KINDS.map((kind) =>
              Object.entries(v[kind].statuses)
                .filter(([s]) => Number(s) >= 200 && Number(s) < 300)
                .reduce((sum, [, n]) => sum + n, 0),
            ).join('/'),
        },
        { key: 'n429', label: '429 (intended)', format: String },
        { key: 'bad', label: 'errors', format: String },
        { key: 'p50', label: 'p50 ms', format: (v) => fixed(v, 1) },
        { key: 'p99', label: 'p99 ms', format: (v) => fixed(v, 1) },
        {
          key: 'byKind',
          label: 'p99 checkout/settle ms',
          format: (v) => `${fixed(v.checkout.p99, 0)}/${fixed(v.settlement.p99, 0)}`,
        },
        { key: 'rssMean', label: 'RSS mean MiB', format: (v) => fixed(v, 0) },
        { key: 'rssMin', label: 'RSS min MiB', format: (v) => fixed(v, 0) },
        { key: 'rssMax', label: 'RSS max MiB', format: (v) => fixed(v, 0) },
        {
          key: 'cpu',
          label: 'cores srv/pg/load/other',
          format: (v) => [v.server, v.postgres, v.load, v.other].map((x) => fixed(x, 2)).join('/'),
        },
        { key: 'deliveries', label: 'webhooks recvd', format: String },
        { key: 'lagP50', label: 'lag p50/p99 ms', format: (v, row) => `${fixed(v, 0)}/${fixed(row.lagP99, 0)}` },
        { key: 'inFlight', label: 'in flight', format: String },
      ]),
    );
    console.log(
      `(drain after the load: ${seconds(drainMs)}, ${drainWindow.times.length} answers, ${drainWindow.deliveries} deliveries)`,
    );

    console.log(heading('soak: per kind, whole run'));
    const kindRows = KINDS.map((kind) => {
      const times = totals[kind].times.sort((a, b) => a - b);
      return {
        kind,
        sent: totals[kind].sent,
        skipped: totals[kind].skipped,
        statuses: totals[kind].statuses,
        p50: percentile(times, 50),
        p99: percentile(times, 99),
        max: times[times.length - 1],
      };
    });
    console.log(
      table(kindRows, [
        { key: 'kind', label: 'kind', align: 'left' },
        { key: 'sent', label: 'sent', format: String },
        {
          key: 'statuses',
          label: 'answers by status',
          align: 'left',
          format: (v) =>
            Object.entries(v)
              .map(([s, n]) => `${s === '0' ? 'socket error' : s}: ${n}`)
              .join(', ') || '-',
        },
        { key: 'skipped', label: 'not sent (too many in flight)', format: String },
        { key: 'p50', label: 'p50 ms', format: (v) => fixed(v, 1) },
        { key: 'p99', label: 'p99 ms', format: (v) => fixed(v, 1) },
        { key: 'max', label: 'max ms', format: (v) => fixed(v, 1) },
      ]),
    );
    const totalAnswers = kindRows.reduce((sum, row) => sum + Object.values(row.statuses).reduce((s, n) => s + n, 0), 0);
    console.log(
      `server CPU ${fixed((serverCpuSeconds * 1000) / Math.max(1, totalAnswers), 2)} ms per answered request over the run (PostgreSQL ${fixed((postgresCpuSeconds * 1000) / Math.max(1, totalAnswers), 2)} ms; dispatcher work included)`,
    );
    console.log(
      `rows at the end: ${tableCounts.orders} orders, ${tableCounts.events} events, ${tableCounts.deliveries} webhook deliveries; database ${tableCounts.db_size}`,
    );
    console.log(
      `service log lines at warn or above after start-up: ${serviceProblems.length}${serviceProblems.length ? ` (first: ${JSON.stringify(serviceProblems[0]).slice(0, 300)})` : ''}`,
    );

    console.log(heading('soak: verdict'));
    const problems = [];
    // Errors other than the intended 429s.
    if (errors.length === 0)
      console.log(
        `errors other than the intended 429s: none (${intended429.count} intended 429s from the limited stream)`,
      );
    else {
      const byKindStatus = {};
      for (const error of errors)
        byKindStatus[`${error.kind} ${error.status}`] = (byKindStatus[`${error.kind} ${error.status}`] ?? 0) + 1;
      console.log(
        `errors other than the intended 429s: ${errors.length} (${Object.entries(byKindStatus)
          .map(([key, n]) => `${key}: ${n}`)
          .join(', ')}); first ones:`,
      );
      for (const error of errors.slice(0, 5))
        console.log(`  at ${fixed(error.atS, 1)} s ${error.kind} ${error.url}: ${error.problem} ${error.text}`);
      problems.push(`${errors.length} errors other than the intended 429s`);
    }
    const limitedTotal = Object.values(totals.limited.statuses).reduce((sum, n) => sum + n, 0);
    const limited200 = totals.limited.statuses[200] ?? 0;
    console.log(
      `limiter: the limited stream (coupons.validate, 20/min per address, sent at ${fixed(RATE * MIX.limited * 60, 0)}/min) got ${limited200} x 200 and ${intended429.count} x 429 of ${limitedTotal} (expected about ${fixed(Math.min(1, 20 / (RATE * MIX.limited * 60)) * 100, 0)} % allowed)`,
    );

    // RSS after warm-up: first third against last third.
    const after = windows.filter((row) => row.endS > WARMUP_S);
    const third = Math.max(1, Math.floor(after.length / 3));
    const firstThird = mean(after.slice(0, third).map((row) => row.rssMean));
    const lastThird = mean(after.slice(-third).map((row) => row.rssMean));
    const growth = (lastThird - firstThird) / firstThird;
    // A sawtooth (the heap grows to a major GC, then RSS drops) makes the means depend on where
    // the teeth fall; the lowest sample of each third (the floor RSS returns to) is the
    // steadier sign of a leak.
    const rssMin = (rows) => Math.min(...rows.map((row) => row.rssMin));
    const firstFloor = rssMin(after.slice(0, third));
    const lastFloor = rssMin(after.slice(-third));
    const floorGrowth = (lastFloor - firstFloor) / firstFloor;
    const peakMiB = Math.max(...windows.map((row) => row.rssMax));
    const peakMB = (peakMiB * 1024 * 1024) / 1e6;
    const hwmMB = (hwm * 1024 * 1024) / 1e6;
    console.log(
      `RSS after the ${WARMUP_S} s warm-up (${after.length} windows): mean of the first third ${fixed(firstThird, 1)} MiB, of the last third ${fixed(lastThird, 1)} MiB: ` +
        `${growth >= 0 ? '+' : ''}${fixed(growth * 100, 1)} % (flag above +${RSS_GROWTH_LIMIT * 100} %): ${growth > RSS_GROWTH_LIMIT ? 'GROWTH FLAGGED' : 'no growth beyond the limit'}`,
    );
    console.log(
      `RSS floor (lowest 1 s sample) of the first third ${fixed(firstFloor, 1)} MiB, of the last third ${fixed(lastFloor, 1)} MiB: ${floorGrowth >= 0 ? '+' : ''}${fixed(floorGrowth * 100, 1)} %` +
        `${floorGrowth > RSS_GROWTH_LIMIT ? ' (GROWTH: the floor itself rises)' : ''}; RSS range after warm-up ${fixed(rssMin(after), 0)}-${fixed(Math.max(...after.map((row) => row.rssMax)), 0)} MiB`,
    );
    console.log(
      `peak RSS (1 s samples) ${fixed(peakMiB, 0)} MiB = ${fixed(peakMB, 0)} MB; process VmHWM ${fixed(hwm, 0)} MiB = ${fixed(hwmMB, 0)} MB; target < ${RSS_TARGET_MB} MB: ${Math.max(peakMB, hwmMB) < RSS_TARGET_MB ? 'met' : 'NOT met'}`,
    );
    const overallP99 = windows.filter((row) => row.endS > WARMUP_S).map((row) => row.p99);
    console.log(
      `p99 per window after warm-up: min ${fixed(Math.min(...overallP99), 1)} ms, median ${fixed(overallP99.sort((a, b) => a - b)[Math.floor(overallP99.length / 2)], 1)} ms, max ${fixed(Math.max(...overallP99), 1)} ms`,
    );

    // Webhooks: every event once, good signatures.
    receiverState.lags.sort((a, b) => a - b);
    const expectedSum = expectedTotal();
    console.log(
      `webhooks: ${receiverState.events.size} of ${expectedSum} events received (${Object.entries(expected)
        .map(([type, n]) => `${type} ${receiverState.byEvent[type] ?? 0}/${n}`)
        .join(', ')}), ` +
        `${receiverState.requests} requests, ${receiverState.duplicateDeliveries} duplicate delivery ids, ${receiverState.repeatedEvents} repeated events, ${receiverState.badSignatures} bad signatures, ${receiverState.badBodies} bad bodies; ` +
        `lag p50 ${fixed(percentile(receiverState.lags, 50), 0)} ms, p99 ${fixed(percentile(receiverState.lags, 99), 0)} ms, max ${fixed(receiverState.lags[receiverState.lags.length - 1], 0)} ms; ` +
        `webhook_delivery rows ${deliveryRows.map((row) => `${row.status} ${row.n}`).join(', ')}`,
    );
    console.log(
      `orders: ${counters.checkouts200} checkouts answered 200, ${counters.settled} settled (${counters.notSettled} other outcomes); order.created ${expected['order.created'] ?? 0}, order.paid ${expected['order.paid'] ?? 0}, order.completed ${expected['order.completed'] ?? 0}`,
    );
    if (receiverState.events.size < expectedSum)
      problems.push(
        `${expectedSum - receiverState.events.size} events not delivered within ${DRAIN_S} s after the load (first: ${JSON.stringify(undelivered[0] ?? null)})`,
      );
    if (receiverState.badSignatures > 0)
      problems.push(
        `${receiverState.badSignatures} deliveries with a bad signature (first: ${receiverState.firstBad})`,
      );
    if (receiverState.badBodies > 0)
      problems.push(`${receiverState.badBodies} deliveries whose body does not match their headers`);
    if ((expected['order.created'] ?? 0) !== counters.checkouts200)
      problems.push(
        `order.created events ${expected['order.created'] ?? 0} != checkouts answered 200 ${counters.checkouts200}`,
      );
    if ((expected['order.paid'] ?? 0) !== counters.settled)
      problems.push(`order.paid events ${expected['order.paid'] ?? 0} != settlements ${counters.settled}`);
    if (pending.size > 0) problems.push(`${pending.size} requests still unanswered ${DRAIN_S} s after the load`);
    for (const problem of problems) console.log(`!! ${problem}`);
    console.log(`\nsoak took ${seconds(Date.now() - started)}`);
    if (problems.length > 0) throw new Error(`${problems.length} check(s) failed; the soak cannot be trusted as run`);
    return { windows, kindRows, growth, floorGrowth, peakMiB, hwm, errors };
  },
};
