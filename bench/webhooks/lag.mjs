/**
 * The webhooks benchmark's lag runs: events committed one per transaction at a steady rate, each
 * followed (or not) by the wake-up PUBLISH the service's commit hook sends; commit to first
 * arrival at the receiver.
 */
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { check } from '../lib/check.mjs';
import { onCleanup } from '../lib/cleanup.mjs';
import { startCpuAccount } from '../lib/cpu.mjs';
import { fixed } from '../lib/format.mjs';
import { percentile } from '../lib/load.mjs';
import { trackPeakRss } from '../lib/proc.mjs';
import { SERVER_ENTRY } from '../lib/service.mjs';
import { cpuSecondsOf, spawnChild } from './children.mjs';
import {
  LAG_EVENTS,
  LAG_RATE,
  LAG_WARMUP_EVENTS,
  LOW_RATE,
  LOW_RATE_EVENTS,
  POLL_ONLY_EVENTS,
  sleep,
  wall,
} from './knobs.mjs';
import { orderPayload } from './seed.mjs';

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

/**
 * The lag cases: a fresh worker with the default poll (1000 ms), wake-ups through Redis pub/sub,
 * an unmeasured warm-up, then each case at its rate with and without the PUBLISH. Returns the
 * measured runs, and what the worker and the database said afterwards (`lagInfo`, undefined when
 * BENCH_WEBHOOK_LAG_EVENTS is 0).
 */
export async function lagCases({ hooks, watch, redis, channel, db, endpoint, env, workerArgs, workDir, pgClient }) {
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
  return { lagRuns, lagInfo };
}
