/**
 * The webhooks benchmark's throughput run: one sender (the worker or the floor) started with
 * every event already queued, timed until the database shows them all delivered.
 */
import { performance } from 'node:perf_hooks';
import { startCpuAccount, waitForQuiet } from '../lib/cpu.mjs';
import { memoryOf, trackPeakRss } from '../lib/proc.mjs';
import { cpuSecondsOf } from './children.mjs';
import { EVENTS, THROUGHPUT_TIMEOUT_S, sleep, wall } from './knobs.mjs';

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

/** Sends and records EVENTS through one process (the worker or the floor); the common part of both. */
export async function deliveryRun({ name, receiver, start, watch, countSql, countParams, pgClient }) {
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
