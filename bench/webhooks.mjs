/**
 * webhooks: outgoing webhook delivery by ONE `svc worker` (the built
 * `apps/server/dist/main.js worker`) to a loopback receiver in this process, beside a floor
 * (floors/webhooks-floor.mjs):
 *
 *  1. throughput: 10,000 `order.created` events already in the outbox when the worker starts
 *     (WEBHOOK_POLL_MS=200); timed from the worker's spawn until the database shows 10,000
 *     `success` rows in webhook_delivery (polled every 100 ms): fan-out + claim + send + record;
 *  2. lag: events committed one per transaction at a steady 200/s, each followed by the
 *     PUBLISH on `<REDIS_KEY_PREFIX>events` that the service's own commit hook sends, to a
 *     worker with the default poll (1000 ms), so the wake-up is Redis pub/sub; commit to first
 *     arrival at the receiver, p50/p99/max; controls: 200/s without the PUBLISH (poll only),
 *     and 20/s with and without it;
 *  3. floor: a bare pg + node:http sender doing the same deliveries (same bodies, same signed
 *     headers, 32 at once, one UPDATE per delivery into a table of its own), and once more 4
 *     at once (the dispatcher's per-endpoint limit).
 *
 * The receiver answers 200 at once and checks on every request the X-Service-Signature (hex
 * HMAC-SHA256 of `<t>.<raw body>` with the endpoint's secret), counts deliveries by
 * `x-service-delivery-id` (no duplicates allowed) and events by `x-service-event-id`.
 *
 * Set-up is SQL in a fresh database (migrated by `svc migrate`, without REDIS_URL: with it this
 * build's `svc migrate` does not exit): a user, a store, one webhook whose secret is sealed as
 * the service seals it (AES-256-GCM under deriveKey(APP_ENCRYPTION_KEY, 'webhook-secret'),
 * from the built lib/crypto.js), the events. Its own REDIS_KEY_PREFIX; keys under it are
 * deleted at the end (the worker itself writes none).
 *
 * Knobs: BENCH_WEBHOOK_EVENTS (10000), BENCH_WEBHOOK_POLL_MS (200, the throughput worker's
 * WEBHOOK_POLL_MS), BENCH_WEBHOOK_TIMEOUT_S (180: the most a throughput run may take),
 * BENCH_WEBHOOK_FLOOR_SMALL (1; 0 skips the floor at 4 at once), BENCH_WEBHOOK_LAG_EVENTS
 * (4000; 0 skips the lag runs), BENCH_WEBHOOK_LAG_RATE (200 /s), BENCH_WEBHOOK_POLL_ONLY_EVENTS
 * (1000; 0 skips that control), BENCH_WEBHOOK_LOW_RATE / BENCH_WEBHOOK_LOW_EVENTS (20 / 100;
 * 0 events skips the light pair), BENCH_WORKER_NODE_ARGS (node flags for the workers).
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { createClient } from 'redis';
import { onCleanup } from './lib/cleanup.mjs';
import { startCpuAccount, waitForQuiet } from './lib/cpu.mjs';
import { freshDatabase, watchDatabase, withClient } from './lib/db.mjs';
import { fixed, heading, ratioLine, seconds, table } from './lib/format.mjs';
import { percentile } from './lib/load.mjs';
import { memoryOf, spawnLogged, trackPeakRss } from './lib/proc.mjs';
import {
  importDist,
  REDIS_URL,
  REPO_ROOT,
  SERVER_ENTRY,
  serviceEnv,
  serviceNodeArgs,
  tempDir,
} from './lib/service.mjs';

const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 10_000);
const LAG_EVENTS = Number(process.env.BENCH_WEBHOOK_LAG_EVENTS ?? 4_000);
const LAG_RATE = Number(process.env.BENCH_WEBHOOK_LAG_RATE ?? 200);
const POLL_ONLY_EVENTS = Number(process.env.BENCH_WEBHOOK_POLL_ONLY_EVENTS ?? 1_000);
/** A light stream as well (BENCH_WEBHOOK_LOW_RATE /s, BENCH_WEBHOOK_LOW_EVENTS events, with and without PUBLISH): the wake-up path on an idle worker. */
const LOW_RATE = Number(process.env.BENCH_WEBHOOK_LOW_RATE ?? 20);
const LOW_RATE_EVENTS = Number(process.env.BENCH_WEBHOOK_LOW_EVENTS ?? 100);
const THROUGHPUT_TIMEOUT_S = Number(process.env.BENCH_WEBHOOK_TIMEOUT_S ?? 180);
const FLOOR_SMALL = process.env.BENCH_WEBHOOK_FLOOR_SMALL !== '0';
const THROUGHPUT_POLL_MS = Number(process.env.BENCH_WEBHOOK_POLL_MS ?? 200);
/** Node flags for the worker processes: svc's own (lib/service.mjs), then BENCH_WORKER_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof". */
const workerNodeArgs = () => serviceNodeArgs(process.env.BENCH_WORKER_NODE_ARGS);
/** An inter-arrival gap at least this long counts as a pause of the sender. */
const PAUSE_MS = 50;
const FLOOR_CONCURRENCY = 32;
/** The dispatcher's defaults (scheduler.ts, Dispatcher constructor): 32 in flight, at most 4 per endpoint. */
const DISPATCHER_PER_ENDPOINT = 4;
/** Unmeasured events before the lag run, at the same rate, so a fresh worker's first (cold) passes do not count. */
const LAG_WARMUP_EVENTS = LAG_RATE;

const wall = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
}

// ---------------------------------------------------------------------------------------------
// Child processes without a listening port (the worker logs nothing at LOG_LEVEL=warn)

/** A child under measurement, in the repository root (lib/proc.mjs). */
function spawnChild(options) {
  return spawnLogged({ cwd: REPO_ROOT, ...options });
}

/** CPU seconds (user + system) of a live process so far, from /proc/<pid>/stat. */
function cpuSecondsOf(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

// ---------------------------------------------------------------------------------------------
// Redis: our own prefix, the wake-up channel, cleanup of every key under the prefix

async function redisClient() {
  const client = createClient({ url: REDIS_URL, socket: { connectTimeout: 2_000, reconnectStrategy: false } });
  client.on('error', () => undefined);
  await client.connect();
  onCleanup('close bench Redis client', () => (client.isOpen ? client.close() : undefined));
  return client;
}

async function deleteKeysUnder(client, prefix) {
  let deleted = 0;
  for await (const batch of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) {
    const keys = Array.isArray(batch) ? batch : [batch];
    if (keys.length > 0) deleted += await client.del(keys);
  }
  return deleted;
}

// ---------------------------------------------------------------------------------------------
// The receiver

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
async function startReceiver(secret) {
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

// ---------------------------------------------------------------------------------------------
// Data

const PRODUCTS = [
  'Lifetime License - Pro Edition',
  'Game Key (Steam, Global)',
  'Premium Theme Pack',
  'Discord Bot Subscription (1 month)',
  'E-book: Practical PostgreSQL',
];
const COUNTRIES = ['US', 'DE', 'GB', 'FR', 'NL', 'CA', 'BR', 'PL'];

/** An `order.created` payload as checkout writes it ({ order: toOrderDetail(order) }), about 1 KB. */
function orderPayload(storeId, n, at, extra = {}) {
  const price = 4.99 + (n % 40) * 2.5;
  const iso = at.toISOString();
  return {
    order: {
      id: randomBytes(12).toString('hex').slice(0, 24),
      orderId: `ORD-${100_000 + n}`,
      storeId,
      status: 'pending',
      productName: PRODUCTS[n % PRODUCTS.length],
      price: Number(price.toFixed(2)),
      paid: 0,
      paymentMethod: ['stripe', 'paypal', 'crypto'][n % 3],
      customerEmail: `buyer-${n % 5000}@example.test`,
      country: COUNTRIES[n % COUNTRIES.length],
      keyCount: 0,
      createdAt: iso,
      completedAt: null,
      updatedAt: iso,
      note:
        n % 3 === 0
          ? 'Please send the key to my second address as well; I bought this as a gift for a friend who will redeem it on another account.'
          : '',
      customFieldResponses: [
        { name: 'Discord username', value: `buyer_${n % 5000}#${String(1000 + (n % 9000)).padStart(4, '0')}` },
        { name: 'Minecraft username', value: `Player${n % 5000}` },
        {
          name: 'How did you hear about us?',
          value: 'A friend recommended the store on a community server; the reviews looked trustworthy.',
        },
        {
          name: 'Company / VAT number (optional)',
          value: n % 4 === 0 ? `DE${String(100_000_000 + n).slice(0, 9)}` : '',
        },
        {
          name: 'Anything else?',
          value: 'Thanks! Looking forward to the delivery, please keep the invoice in English.',
        },
      ],
    },
    ...extra,
  };
}

/** A user, a store and one webhook whose `secret` is sealed as the service seals it; returns the ids. */
async function seedEndpoint(url, encryptionKey, receiverUrl, secret) {
  const { seal, deriveKey } = await importDist('lib/crypto.js');
  const { newId } = await importDist('lib/ids.js');
  const tag = randomBytes(4).toString('hex');
  const ids = { userId: newId(), storeId: newId(), webhookId: newId() };
  await withClient(url, async (client) => {
    await client.query('begin');
    await client.query(
      `insert into "user" (id, email, password_hash, created_at, updated_at) values ($1, $2, null, now(), now())`,
      [ids.userId, `bench-${tag}@example.test`],
    );
    await client.query(
      `insert into store (id, name, subdomain, currency, created_at, updated_at) values ($1, 'Bench store', $2, 'USD', now(), now())`,
      [ids.storeId, `bench-${tag}`],
    );
    await client.query(
      `insert into store_member (id, store_id, user_id, role, created_at) values ($1, $2, $3, 'owner', now())`,
      [newId(), ids.storeId, ids.userId],
    );
    await client.query(
      `insert into webhook (id, store_id, name, url, secret_enc, secret_prefix, events, enabled, created_at, updated_at)
       values ($1, $2, 'Bench receiver', $3, $4, $5, '{order.created}', true, now(), now())`,
      [
        ids.webhookId,
        ids.storeId,
        receiverUrl,
        seal(deriveKey(encryptionKey, 'webhook-secret'), secret),
        secret.slice(0, 12),
      ],
    );
    await client.query('commit');
  });
  return { ...ids, secret, newId };
}

/** `count` events inserted in one statement, created "now" (ms precision, as the service writes them). */
async function seedEvents(url, storeId, count, newId) {
  const now = new Date();
  const ids = Array.from({ length: count }, () => `evt_${newId()}`);
  const payloads = ids.map((_, n) => JSON.stringify(orderPayload(storeId, n, now)));
  await withClient(url, (client) =>
    client.query(
      `insert into event (id, store_id, type, payload, created_at, dispatched_at)
       select id, $3, 'order.created', payload, $4, null from unnest($1::text[], $2::jsonb[]) as t(id, payload)`,
      [ids, payloads, storeId, now],
    ),
  );
  const bytes = payloads.reduce((sum, p) => sum + Buffer.byteLength(p), 0) / count;
  return { ids, bytes };
}

// ---------------------------------------------------------------------------------------------
// Measurements

/**
 * Polls `sql` (returns { ok, failed }) every 100 ms until ok >= target, the child exits or the
 * time is up. Returns the time it was first seen complete and how many polls it made.
 */
async function pollUntilDone(client, sql, params, target, child, timeoutMs) {
  let polls = 0;
  const started = performance.now();
  for (;;) {
    const { rows } = await client.query(sql, params);
    polls++;
    const { ok, failed } = rows[0];
    if (ok >= target) return { doneAt: performance.now(), polls, ok, failed, complete: true };
    if (!child.alive())
      throw new Error(
        `${child.label} exited (${await child.exited}) after ${ok} of ${target} deliveries; log ${child.logFile}:\n${child.log().slice(-3000)}`,
      );
    if (performance.now() - started > timeoutMs)
      return { doneAt: performance.now(), polls, ok, failed, complete: false };
    await sleep(100);
  }
}

function workerEnv({ db, encryptionKey, dataDir, redisKeyPrefix, pollMs }) {
  return {
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    DATABASE_URL: db.url,
    REDIS_URL,
    APP_ENCRYPTION_KEY: encryptionKey.toString('base64'),
    DATA_DIR: dataDir,
    REDIS_KEY_PREFIX: redisKeyPrefix,
    ...(pollMs === undefined ? {} : { WEBHOOK_POLL_MS: String(pollMs) }),
  };
}

/** Sends and records EVENTS through one process (the worker or the floor); the common part of both. */
async function deliveryRun({ name, receiver, start, watch, countSql, countParams, pgClient }) {
  const quiet = await waitForQuiet({ thresholdCores: 0.25, maxWaitMs: 5_000 });
  const phase = receiver.begin(name);
  await sleep(200);
  const tx0 = await watch.transactions();
  const t0 = performance.now();
  const t0Wall = wall();
  const child = start();
  const cpu = await startCpuAccount({ serverPid: child.pid, backendPids: watch.backendPids });
  const peak = trackPeakRss(child.pid);
  // The child's CPU time when the first delivery arrives: what start-up cost, apart from delivering.
  let cpuAtFirst;
  const firstWatch = setInterval(() => {
    if (cpuAtFirst === undefined && phase.firstAt !== undefined) {
      try {
        cpuAtFirst = cpuSecondsOf(child.pid);
      } catch {
        // gone
      }
    }
  }, 5);
  let polled;
  try {
    polled = await pollUntilDone(pgClient, countSql, countParams, EVENTS, child, THROUGHPUT_TIMEOUT_S * 1000);
  } finally {
    clearInterval(firstWatch);
  }
  const account = await cpu.stop();
  const peakRssMiB = peak.done();
  const cpuTotal = cpuSecondsOf(child.pid);
  const hwmMiB = memoryOf(child.pid).hwmMiB;
  // Anything still on its way (there should be nothing: every success row was sent first).
  await sleep(300);
  // An idle backend may hold its last transaction counts back for up to 10 s; one that exits
  // flushes them. So: stop the sender, wait for its connections to close, then count.
  await child.stop();
  const closedBy = performance.now() + 10_000;
  while ((await watch.backendPids()).some((pid) => pid !== pgClient.processID) && performance.now() < closedBy)
    await sleep(50);
  await sleep(100);
  const tx1 = await watch.transactions();
  const elapsedS = (polled.doneAt - t0) / 1000;
  const delivered = polled.ok;
  const steadyS = phase.lastAt !== undefined ? (phase.lastAt - phase.firstAt) / 1000 : NaN;
  // Deliveries per second in consecutive 5 s windows from the first arrival: does the rate hold?
  const perWindow = [];
  for (const at of phase.arrivals.values())
    perWindow[Math.floor((at - phase.firstAt) / 5000)] = (perWindow[Math.floor((at - phase.firstAt) / 5000)] ?? 0) + 1;
  const windowRates = Array.from(perWindow, (n) => (n ?? 0) / 5);
  return {
    name,
    child,
    phase,
    complete: polled.complete,
    delivered,
    failedRows: polled.failed,
    elapsedS,
    rate: delivered / elapsedS,
    firstArrivalS: (phase.firstAt - t0Wall) / 1000,
    steadyRate: (phase.requests - 1) / steadyS,
    windowRates,
    cpuMsPerDelivery: (cpuTotal * 1000) / Math.max(1, delivered),
    startupCpuS: cpuAtFirst ?? NaN,
    deliveryCpuMsPerDelivery: ((cpuTotal - (cpuAtFirst ?? 0)) * 1000) / Math.max(1, delivered),
    pgCpuMsPerDelivery: (account.postgresCpuSeconds * 1000) / Math.max(1, delivered),
    stmtsPerDelivery: (tx1 - tx0 - polled.polls) / Math.max(1, delivered),
    peakRssMiB,
    hwmMiB,
    cpu: account,
    quiet,
  };
}

function checkReceived(run, expectedEvents, label) {
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

/**
 * Commits `count` events one per transaction at `rate`/s (absolute schedule, no catch-up
 * bursts), each followed (when `publish`) by the wake-up the service's commit hook sends.
 * Returns event id -> wall ms of the commit acknowledgement.
 */
async function paced({ pool, redis, channel, storeId, newId, count, rate, publish, label }) {
  const committed = new Map();
  const interval = 1000 / rate;
  const start = performance.now() + 20;
  let late = 0;
  const inserts = [];
  const insertOne = async (i) => {
    const id = `evt_${newId()}`;
    const sentAtMs = wall();
    const at = new Date(Math.floor(sentAtMs));
    // One autocommit INSERT: its own transaction, committed when it answers.
    await pool.query(
      `insert into event (id, store_id, type, payload, created_at) values ($1, $2, 'order.created', $3::jsonb, $4)`,
      [id, storeId, JSON.stringify(orderPayload(storeId, i, at, { sentAtMs, bench: label })), at],
    );
    committed.set(id, wall());
    if (publish) await redis.publish(channel, '1');
  };
  for (let i = 0; i < count; i++) {
    const due = start + i * interval;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait - 0.5);
    while (performance.now() < due) {
      // the last fraction of a millisecond
    }
    if (performance.now() - due > interval) late++;
    // On schedule even when an earlier insert is slow to answer (a pool of a few connections).
    inserts.push(insertOne(i));
  }
  await Promise.all(inserts);
  return { committed, seconds: (performance.now() - start) / 1000, late };
}

async function lagRun({ receiver, name, pool, redis, channel, storeId, newId, count, rate, publish, worker, watch }) {
  const phase = receiver.begin(name);
  const start = performance.now();
  const cpu0 = cpuSecondsOf(worker.pid);
  const account = await startCpuAccount({ serverPid: worker.pid, backendPids: watch.backendPids });
  const sent = await paced({ pool, redis, channel, storeId, newId, count, rate, publish, label: name });
  // The last events: up to one poll period (1 s) when nothing wakes the worker, plus the send,
  // plus whatever backlog the worker built up (up to 30 s), so it does not spill into the next case.
  const deadline = performance.now() + 30_000;
  while (phase.arrivals.size < count && performance.now() < deadline) await sleep(20);
  const drainedS = (performance.now() - start) / 1000 - sent.seconds;
  const cpuS = cpuSecondsOf(worker.pid) - cpu0;
  const cpu = await account.stop();
  const lags = [];
  const fromInsert = [];
  for (const [id, committedAt] of sent.committed) {
    const arrived = phase.arrivals.get(id);
    if (arrived === undefined) continue;
    lags.push(arrived - committedAt);
    fromInsert.push(arrived - phase.sentAt.get(id));
  }
  // In commit order: the first and the last fifth, to see whether a backlog builds up.
  const byCommit = [...sent.committed]
    .sort((a, b) => a[1] - b[1])
    .map(([id, at]) => phase.arrivals.get(id) - at)
    .filter(Number.isFinite);
  const fifth = Math.max(1, Math.floor(byCommit.length / 5));
  const firstFifthP50 = percentile(
    byCommit.slice(0, fifth).sort((a, b) => a - b),
    50,
  );
  const lastFifthP50 = percentile(
    byCommit.slice(-fifth).sort((a, b) => a - b),
    50,
  );
  // p50 per 2 s of commits: how the lag moves through the run.
  const firstCommit = Math.min(...sent.committed.values());
  const buckets = [];
  for (const [id, at] of sent.committed) {
    const arrived = phase.arrivals.get(id);
    if (arrived === undefined) continue;
    (buckets[Math.floor((at - firstCommit) / 2000)] ??= []).push(arrived - at);
  }
  const series = buckets.map((values) =>
    percentile(
      (values ?? []).sort((a, b) => a - b),
      50,
    ),
  );
  lags.sort((a, b) => a - b);
  fromInsert.sort((a, b) => a - b);
  return {
    name,
    phase,
    count,
    received: lags.length,
    sentSeconds: sent.seconds,
    rate: count / sent.seconds,
    late: sent.late,
    p50: percentile(lags, 50),
    p90: percentile(lags, 90),
    p99: percentile(lags, 99),
    max: lags.at(-1),
    min: lags[0],
    insertP50: percentile(fromInsert, 50),
    firstFifthP50,
    lastFifthP50,
    series,
    workerCpuMsPerDelivery: (cpuS * 1000) / Math.max(1, lags.length),
    pgCpuMsPerEvent: (cpu.postgresCpuSeconds * 1000) / Math.max(1, lags.length),
    cpu,
    drainedS,
    ids: [...sent.committed.keys()],
  };
}

// ---------------------------------------------------------------------------------------------

const THROUGHPUT_COLUMNS = [
  { key: 'name', label: 'sender', align: 'left' },
  { key: 'rate', label: 'deliveries/s', format: (v, row) => `${fixed(v, 0)}${row.complete ? '' : ' (incomplete)'}` },
  { key: 'elapsedS', label: 'total s', format: (v) => fixed(v, 2) },
  { key: 'firstArrivalS', label: '1st arrival s', format: (v) => fixed(v, 2) },
  { key: 'steadyRate', label: '1st-last /s', format: (v) => fixed(v, 0) },
  { key: 'received', label: 'received', format: (_, row) => String(row.phase.requests) },
  {
    key: 'dups',
    label: 'dup ids',
    format: (_, row) => String(row.phase.duplicateDeliveries + row.phase.repeatedEvents),
  },
  { key: 'bad', label: 'bad sig', format: (_, row) => String(row.phase.badSignatures) },
  {
    key: 'pauses',
    label: `pauses >=${PAUSE_MS}ms`,
    format: (_, row) => `${row.phase.pauses} (${fixed(row.phase.pausedMs / 1000, 1)} s)`,
  },
  { key: 'peakRssMiB', label: 'peak RSS MiB', format: (v) => fixed(v, 0) },
  { key: 'cpuMsPerDelivery', label: 'CPU ms/dlv', format: (v) => fixed(v, 3) },
  { key: 'deliveryCpuMsPerDelivery', label: 'excl. start-up', format: (v) => fixed(v, 3) },
  { key: 'pgCpuMsPerDelivery', label: 'pg CPU ms/dlv', format: (v) => fixed(v, 3) },
  { key: 'stmtsPerDelivery', label: 'pg xacts/dlv', format: (v) => fixed(v, 2) },
  {
    key: 'cpu',
    label: 'cores: sender/pg/bench/other',
    align: 'left',
    format: (v) => [v.server, v.postgres, v.load, v.other].map((x) => fixed(x, 2)).join('/'),
  },
];

const LAG_COLUMNS = [
  { key: 'name', label: 'case', align: 'left' },
  { key: 'received', label: 'events', format: (v, row) => `${v}/${row.count}` },
  { key: 'rate', label: 'events/s', format: (v) => fixed(v, 1) },
  { key: 'p50', label: 'p50 ms', format: (v) => fixed(v, 1) },
  { key: 'p90', label: 'p90 ms', format: (v) => fixed(v, 1) },
  { key: 'p99', label: 'p99 ms', format: (v) => fixed(v, 1) },
  { key: 'max', label: 'max ms', format: (v) => fixed(v, 1) },
  { key: 'drainedS', label: 'drain s', format: (v) => fixed(v, 1) },
  {
    key: 'firstFifthP50',
    label: 'p50 1st/last fifth',
    format: (v, row) => `${fixed(v, 0)}/${fixed(row.lastFifthP50, 0)}`,
  },
  { key: 'workerCpuMsPerDelivery', label: 'worker CPU ms/event', format: (v) => fixed(v, 2) },
  { key: 'pgCpuMsPerEvent', label: 'pg CPU ms/event', format: (v) => fixed(v, 2) },
  {
    key: 'cpu',
    label: 'cores: worker/pg/bench/other',
    align: 'left',
    format: (v) => [v.server, v.postgres, v.load, v.other].map((x) => fixed(x, 2)).join('/'),
  },
];

export default {
  name: 'webhooks',
  title: `Webhook delivery by one worker: ${EVENTS.toLocaleString('en-US')} events to a loopback receiver, lag at ${LAG_RATE}/s, vs a bare sender`,
  measures: `svc worker: deliveries/s for ${EVENTS.toLocaleString('en-US')} queued events, commit-to-delivery lag at ${LAG_RATE} events/s (Redis wake-up), against a bare pg + http sender`,
  budgetS: 420,

  async run() {
    const started = Date.now();
    const workDir = tempDir('svc-bench-webhooks-');
    const db = await freshDatabase();
    const encryptionKey = randomBytes(32);
    const redisKeyPrefix = `svc:bench:${randomBytes(4).toString('hex')}:`;
    const channel = `${redisKeyPrefix}events`;
    const redis = await redisClient();
    onCleanup(`delete Redis keys ${redisKeyPrefix}*`, () => deleteKeysUnder(redis, redisKeyPrefix));
    console.log(`database ${db.name}, Redis prefix ${redisKeyPrefix} (wake-up channel ${channel})`);
    const processEnv = await serviceEnv();
    const env = (pollMs) => ({
      ...processEnv,
      ...workerEnv({ db, encryptionKey, dataDir: workDir, redisKeyPrefix, pollMs }),
    });

    // 1. Schema: `svc migrate`, then the endpoint and the events, in SQL. Without REDIS_URL:
    // migrations do not use Redis, and with it this build's `svc migrate` never exits (the
    // Redis client it connects in the background keeps the process alive).
    const { REDIS_URL: _unused, ...migrateEnv } = env();
    const migrating = spawnChild({
      label: 'svc migrate',
      script: SERVER_ENTRY,
      args: ['migrate'],
      env: { ...migrateEnv, LOG_LEVEL: 'info' },
      logFile: path.join(workDir, 'migrate.log'),
    });
    const migrated = await Promise.race([migrating.exited, sleep(120_000).then(() => 'timeout')]);
    check(migrated === 0, `svc migrate exited ${migrated}; log:\n${migrating.log().slice(-3000)}`);
    await migrating.stop();
    const { newWebhookSecret } = await importDist('modules/webhooks/signing.js');
    const secret = newWebhookSecret();
    const hooks = await startReceiver(secret);
    const endpoint = await seedEndpoint(db.url, encryptionKey, hooks.url, secret);
    const seedStarted = Date.now();
    const events = await seedEvents(db.url, endpoint.storeId, EVENTS, endpoint.newId);
    await withClient(db.url, (client) => client.query('vacuum analyze event'));
    console.log(
      `store ${endpoint.storeId}, webhook ${endpoint.webhookId} -> ${hooks.url} (order.created, secret ${endpoint.secret.slice(0, 12)}...); ` +
        `${EVENTS.toLocaleString('en-US')} events in one insert (${fixed(events.bytes, 0)} B payload each) in ${seconds(Date.now() - seedStarted)}`,
    );

    const workerArgs = await workerNodeArgs();
    const watch = await watchDatabase(db.name);
    const pgClient = new pg.Client({ connectionString: db.url });
    await pgClient.connect();
    const closePgClient = onCleanup('close bench pg client', () => pgClient.end());

    // 2. Throughput: one worker, every event already queued in the outbox.
    process.stdout.write(
      `  worker (WEBHOOK_POLL_MS=${THROUGHPUT_POLL_MS}), ${EVENTS.toLocaleString('en-US')} events ... `,
    );
    const worker = await deliveryRun({
      name: 'svc worker',
      receiver: hooks,
      start: () =>
        spawnChild({
          label: 'svc worker',
          script: SERVER_ENTRY,
          args: ['worker'],
          nodeArgs: workerArgs,
          env: env(THROUGHPUT_POLL_MS),
          logFile: path.join(workDir, 'worker.log'),
        }),
      watch,
      countSql: `select count(*) filter (where status = 'success')::int as ok, count(*) filter (where status = 'failed')::int as failed from webhook_delivery`,
      countParams: [],
      pgClient,
    });
    console.log(
      `${fixed(worker.rate, 0)} deliveries/s (${fixed(worker.elapsedS, 2)} s from spawn${worker.complete ? '' : `, INCOMPLETE: ${worker.delivered} after ${THROUGHPUT_TIMEOUT_S} s`})`,
    );
    const workerDb = (
      await pgClient.query(
        `select (select count(*)::int from event where dispatched_at is null) as undispatched,
                (select count(*)::int from webhook_delivery) as deliveries,
                (select count(distinct event_id)::int from webhook_delivery) as events,
                (select json_object_agg(status, n) from (select status, count(*)::int as n from webhook_delivery group by status) s) as by_status,
                (select failure_count from webhook where id = $1) as failure_count`,
        [endpoint.webhookId],
      )
    ).rows[0];
    const workerProblems = worker.child.lines().filter((line) => line.level >= 40);
    await worker.child.stop();
    if (worker.complete) checkReceived(worker, events.ids, 'worker');

    // 3. The floor: same events, same bodies and headers, same receiver, 32 at once.
    await pgClient.query(
      `create table floor_delivery (id varchar(48) primary key, event_id varchar(40) not null, status text not null, response_code integer null,
         response_body_preview varchar(1024) null, error_message varchar(500) null, duration_ms integer null, created_at timestamptz not null, updated_at timestamptz not null)`,
    );
    const floorRun = async (concurrency, label) => {
      await pgClient.query('truncate floor_delivery');
      process.stdout.write(`  ${label} ... `);
      const run = await deliveryRun({
        name: label,
        receiver: hooks,
        start: () =>
          spawnChild({
            label,
            script: path.join(REPO_ROOT, 'bench/floors/webhooks-floor.mjs'),
            env: {
              FLOOR_DATABASE_URL: db.url,
              FLOOR_STORE_ID: endpoint.storeId,
              FLOOR_SECRET: endpoint.secret,
              FLOOR_RECEIVER_URL: hooks.url,
              FLOOR_CONCURRENCY: String(concurrency),
              NODE_ENV: 'production',
            },
            logFile: path.join(workDir, `floor-${concurrency}.log`),
          }),
        watch,
        countSql: `select count(*) filter (where status = 'success')::int as ok, count(*) filter (where status = 'failed')::int as failed from floor_delivery`,
        countParams: [],
        pgClient,
      });
      const done = run.child.lines().find((line) => line.msg === 'floor done');
      await run.child.stop();
      console.log(`${fixed(run.rate, 0)} deliveries/s (${fixed(run.elapsedS, 2)} s from spawn)`);
      if (run.complete) checkReceived(run, events.ids, label);
      // The same bytes as the worker sent, event by event.
      run.sameBodies = events.ids.filter(
        (id) => worker.phase.bodyHashes.get(id) === run.phase.bodyHashes.get(id),
      ).length;
      run.done = done;
      return run;
    };
    const floor = await floorRun(FLOOR_CONCURRENCY, `floor, ${FLOOR_CONCURRENCY} at once`);
    const floorSmall = FLOOR_SMALL
      ? await floorRun(DISPATCHER_PER_ENDPOINT, `floor, ${DISPATCHER_PER_ENDPOINT} at once`)
      : undefined;

    // 4. Lag: a fresh worker with the default poll (1000 ms); wake-ups through Redis pub/sub.
    const lagRuns = [];
    let lagInfo;
    if (LAG_EVENTS > 0) {
      const lagWorker = spawnChild({
        label: 'svc worker (lag)',
        script: SERVER_ENTRY,
        args: ['worker'],
        nodeArgs: workerArgs,
        env: env(undefined),
        logFile: path.join(workDir, 'worker-lag.log'),
      });
      // Ready when its dispatcher has subscribed to the wake-up channel.
      const subscribedBy = performance.now() + 60_000;
      for (;;) {
        const [, subscribers] = await redis.sendCommand(['PUBSUB', 'NUMSUB', channel]);
        if (Number(subscribers) >= 1) break;
        if (!lagWorker.alive())
          throw new Error(`the lag worker exited (${await lagWorker.exited}); log:\n${lagWorker.log().slice(-3000)}`);
        check(
          performance.now() < subscribedBy,
          `the lag worker did not subscribe to its wake-up channel within 60 s; log:\n${lagWorker.log().slice(-3000)}`,
        );
        await sleep(50);
      }
      const lagPeak = trackPeakRss(lagWorker.pid);
      const insertPool = new pg.Pool({ connectionString: db.url, max: 4 });
      const closeInsertPool = onCleanup('close bench insert pool', () => insertPool.end());
      const lagArgs = {
        receiver: hooks,
        watch,
        pool: insertPool,
        redis,
        channel,
        storeId: endpoint.storeId,
        newId: endpoint.newId,
        worker: lagWorker,
      };
      const lagCase = async (label, options) => {
        process.stdout.write(`  lag: ${label} ... `);
        const run = await lagRun({ ...lagArgs, ...options });
        console.log(`p50 ${fixed(run.p50, 1)} ms, p99 ${fixed(run.p99, 1)} ms, max ${fixed(run.max, 1)} ms`);
        lagRuns.push(run);
      };
      await lagRun({ ...lagArgs, name: 'warm-up', count: LAG_WARMUP_EVENTS, rate: LAG_RATE, publish: true });
      await lagCase(
        `${LAG_EVENTS.toLocaleString('en-US')} events at ${LAG_RATE}/s with PUBLISH (after ${LAG_WARMUP_EVENTS} unmeasured)`,
        {
          name: `${LAG_RATE}/s, PUBLISH after each commit`,
          count: LAG_EVENTS,
          rate: LAG_RATE,
          publish: true,
        },
      );
      if (POLL_ONLY_EVENTS > 0) {
        await lagCase(`${POLL_ONLY_EVENTS.toLocaleString('en-US')} events at ${LAG_RATE}/s without PUBLISH`, {
          name: `${LAG_RATE}/s, no PUBLISH (poll only)`,
          count: POLL_ONLY_EVENTS,
          rate: LAG_RATE,
          publish: false,
        });
      }
      if (LOW_RATE_EVENTS > 0) {
        await lagCase(`${LOW_RATE_EVENTS} events at ${LOW_RATE}/s with PUBLISH`, {
          name: `${LOW_RATE}/s, PUBLISH after each commit`,
          count: LOW_RATE_EVENTS,
          rate: LOW_RATE,
          publish: true,
        });
        await lagCase(`${LOW_RATE_EVENTS} events at ${LOW_RATE}/s without PUBLISH`, {
          name: `${LOW_RATE}/s, no PUBLISH (poll only)`,
          count: LOW_RATE_EVENTS,
          rate: LOW_RATE,
          publish: false,
        });
      }
      const peakMiB = lagPeak.done();
      const problems = lagWorker.lines().filter((line) => line.level >= 40);
      await lagWorker.stop();
      await closeInsertPool();
      const byStatus = (
        await pgClient.query(
          `select json_object_agg(status, n) as by_status from (select status, count(*)::int as n from webhook_delivery group by status) s`,
        )
      ).rows[0].by_status;
      lagInfo = { peakMiB, problems, byStatus };
    }

    await watch.close();
    await hooks.close();
    await closePgClient();
    await db.drop();
    const redisLeft = await deleteKeysUnder(redis, redisKeyPrefix);

    // 5. Figures.
    const throughput = [worker, floor, ...(floorSmall ? [floorSmall] : [])];
    console.log(heading('webhooks results: throughput'));
    console.log(table(throughput, THROUGHPUT_COLUMNS));
    console.log(
      `deliveries/s: ${EVENTS.toLocaleString('en-US')} / seconds from the sender's spawn until the database shows ${EVENTS.toLocaleString('en-US')} success rows (polled every 100 ms); ` +
        '1st-last /s: receiver arrivals between the first and the last delivery; CPU ms/dlv: the sender process over its whole life (start-up included), ' +
        '"excl. start-up" from its first delivery on; pg xacts/dlv: transactions of the bench database per delivery (the bench\'s own polls taken out)',
    );
    console.log('');
    const ratios = {
      workerFloor: worker.rate / floor.rate,
      workerFloorSteady: worker.steadyRate / floor.steadyRate,
      workerFloorCpu: worker.deliveryCpuMsPerDelivery / floor.deliveryCpuMsPerDelivery,
      ...(floorSmall ? { workerFloorSmall: worker.rate / floorSmall.rate } : {}),
    };
    console.log(
      ratioLine(`worker/floor throughput (floor ${FLOOR_CONCURRENCY} at once)`, ratios.workerFloor, {
        op: '>=',
        value: 0.5,
      }),
    );
    console.log(ratioLine('worker/floor throughput, first to last delivery', ratios.workerFloorSteady));
    if (floorSmall)
      console.log(
        ratioLine(
          `worker/floor throughput (floor ${DISPATCHER_PER_ENDPOINT} at once, the dispatcher's per-endpoint limit)`,
          ratios.workerFloorSmall,
        ),
      );
    console.log(ratioLine('worker/floor CPU per delivery (from the first delivery on)', ratios.workerFloorCpu));
    console.log(
      `worker: start-up to first delivery ${fixed(worker.firstArrivalS, 2)} s (${fixed(worker.startupCpuS, 2)} CPU s); whole-process peak RSS (VmHWM) ${fixed(worker.hwmMiB, 0)} MiB; ` +
        `database after the run: ${JSON.stringify(workerDb.by_status)}, ${workerDb.deliveries} delivery rows for ${workerDb.events} events, ${workerDb.undispatched} events undispatched, endpoint failure_count ${workerDb.failure_count}`,
    );
    console.log(
      `worker deliveries/s per 5 s from its first delivery: ${worker.windowRates.map((v) => fixed(v, 0)).join(' ')} (the last window is partial)`,
    );
    console.log(
      `worker log lines at warn or above: ${workerProblems.length}${workerProblems.length ? ` (first: ${JSON.stringify(workerProblems[0]).slice(0, 300)})` : ''}`,
    );
    for (const run of [floor, floorSmall].filter(Boolean)) {
      console.log(
        `${run.name}: VmHWM ${fixed(run.hwmMiB, 0)} MiB; bodies byte-identical to the worker's: ${run.sameBodies}/${EVENTS}; ` +
          `its own timeline: fan-out + read ${fixed((run.done?.readAt - run.done?.startedAt) / 1000, 2)} s, sending ${fixed((run.done?.doneAt - run.done?.readAt) / 1000, 2)} s`,
      );
    }
    const contaminated = throughput.filter((run) => run.cpu.other > 0.25);
    if (contaminated.length > 0)
      console.log(
        `note: other processes used more than 0.25 cores during: ${contaminated.map((run) => `${run.name} (${fixed(run.cpu.other, 2)})`).join(', ')}`,
      );

    if (lagInfo) {
      console.log(heading('webhooks results: commit-to-delivery lag'));
      console.log(table(lagRuns, LAG_COLUMNS));
      console.log(
        `lag: from the commit acknowledgement of the event's insert (one autocommit INSERT, then PUBLISH '1' on ${channel} as the service's commit hook does) ` +
          `to the event's first arrival at the receiver; insert start to arrival, p50 of the first case: ${fixed(lagRuns[0].insertP50, 1)} ms (payload.sentAtMs). ` +
          `p50 1st/last fifth: the p50 of the first and of the last fifth of the events (in commit order): a backlog shows as a rising figure. ` +
          `drain s: how long the last events took to arrive after the last insert.`,
      );
      for (const run of lagRuns.filter((r) => r.series.length > 2))
        console.log(`p50 ms per 2 s of commits, ${run.name}: ${run.series.map((v) => fixed(v, 0)).join(' ')}`);
      console.log(
        `lag worker: default WEBHOOK_POLL_MS (1000), ${LAG_WARMUP_EVENTS} unmeasured warm-up events at ${LAG_RATE}/s first; peak RSS ${fixed(lagInfo.peakMiB, 0)} MiB; ` +
          `deliveries by status afterwards ${JSON.stringify(lagInfo.byStatus)}; log lines at warn or above: ${lagInfo.problems.length}`,
      );
    }
    console.log(`Redis keys left under ${redisKeyPrefix} at the end: ${redisLeft} deleted`);
    console.log(`\nwebhooks took ${seconds(Date.now() - started)}`);

    check(worker.complete, `the worker delivered ${worker.delivered} of ${EVENTS} within ${THROUGHPUT_TIMEOUT_S} s`);
    check(floor.complete && (!floorSmall || floorSmall.complete), 'the floor delivered every event');
    for (const run of lagRuns) {
      check(run.received === run.count, `${run.name}: ${run.received} of ${run.count} events arrived`);
      check(
        run.phase.badSignatures === 0 && run.phase.duplicateDeliveries === 0 && run.phase.repeatedEvents === 0,
        `${run.name}: bad signatures or duplicates`,
      );
    }
    return { throughput, lag: lagRuns, ratios };
  },
};
