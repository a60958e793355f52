/**
 * The rate-limiter benchmark's paired measurement: one client, one request at a time, A and B
 * alternately, so both services see the same machine at the same moments.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { check } from '../lib/check.mjs';
import { startCpuAccount, waitForQuiet } from '../lib/cpu.mjs';
import { fixed } from '../lib/format.mjs';
import { LOAD_DEFAULTS, percentile } from '../lib/load.mjs';

/** One GET over `agent`; resolves { status, ms }. */
function timedGet(url, headers, agent) {
  return new Promise((resolve) => {
    const start = performance.now();
    const req = http.get(url, { agent, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, ms: performance.now() - start }));
      res.on('error', () => resolve({ status: 0, ms: performance.now() - start }));
    });
    req.setTimeout(10_000, () => req.destroy(new Error('no answer in 10 s')));
    req.on('error', () => resolve({ status: 0, ms: performance.now() - start }));
  });
}

/**
 * One client, one request at a time, alternating A and B in the order A B B A (repeated) so
 * neither always follows the other; `seconds` long. Resolves the sorted latencies of each,
 * the non-200 count, and a CPU account for each server (cores; `other` excludes both).
 */
async function pairedSequential({ urlA, urlB, headers, pidA, pidB, backendPids, seconds: durationS }) {
  const agents = [
    new http.Agent({ keepAlive: true, maxSockets: 1 }),
    new http.Agent({ keepAlive: true, maxSockets: 1 }),
  ];
  const urls = [urlA, urlB];
  const times = [[], []];
  let bad = 0;
  const accountA = await startCpuAccount({ serverPid: pidA, backendPids });
  const accountB = await startCpuAccount({ serverPid: pidB, backendPids: async () => [] });
  const end = performance.now() + durationS * 1000;
  const pattern = [0, 1, 1, 0];
  // A - B of neighbouring requests: (1st, 2nd) and (4th, 3rd) of every four.
  const pairDiffs = [];
  let previous;
  for (let i = 0; performance.now() < end || i % 2 === 1; i++) {
    const which = pattern[i % 4];
    const answer = await timedGet(urls[which], headers, agents[which]);
    if (answer.status !== 200) bad++;
    times[which].push(answer.ms);
    if (i % 2 === 1) pairDiffs.push(which === 1 ? previous - answer.ms : answer.ms - previous);
    previous = answer.ms;
  }
  pairDiffs.sort((a, b) => a - b);
  const cpuA = await accountA.stop();
  const cpuB = await accountB.stop();
  for (const agent of agents) agent.destroy();
  for (const list of times) list.sort((a, b) => a - b);
  return {
    timesA: times[0],
    timesB: times[1],
    pairDiffs,
    bad,
    cpuA,
    cpuB,
    // accountA counts B's process as "other"; take it out.
    other: Math.max(0, cpuA.other - cpuB.server),
  };
}

/**
 * One round of `first` against `second` (each `{ url, pid }`) on `orderPath`: a warm-up, then the
 * measured run, repeated (LOAD_DEFAULTS.retries) while other processes kept the machine busy; the
 * cleanest attempt's row.
 */
export async function pairedRound(first, second, labels, round, { orderPath, auth, watch }) {
  let best;
  for (let attempt = 1; attempt <= 1 + LOAD_DEFAULTS.retries; attempt++) {
    await waitForQuiet({ thresholdCores: LOAD_DEFAULTS.otherCoresLimit });
    const spec = {
      urlA: `${first.url}${orderPath}`,
      urlB: `${second.url}${orderPath}`,
      headers: auth,
      pidA: first.pid,
      pidB: second.pid,
      backendPids: watch.backendPids,
    };
    if (LOAD_DEFAULTS.warmupS > 0) await pairedSequential({ ...spec, seconds: LOAD_DEFAULTS.warmupS });
    const run = await pairedSequential({ ...spec, seconds: LOAD_DEFAULTS.durationS });
    const row = {
      pair: labels.join('-'),
      round,
      attempt,
      requestsA: run.timesA.length,
      requestsB: run.timesB.length,
      bad: run.bad,
      p50A: percentile(run.timesA, 50),
      p50B: percentile(run.timesB, 50),
      p90A: percentile(run.timesA, 90),
      p90B: percentile(run.timesB, 90),
      p99A: percentile(run.timesA, 99),
      p99B: percentile(run.timesB, 99),
      cpuA: (run.cpuA.serverCpuSeconds * 1000) / Math.max(1, run.timesA.length),
      cpuB: (run.cpuB.serverCpuSeconds * 1000) / Math.max(1, run.timesB.length),
      other: run.other,
    };
    row.addedP50 = row.p50A - row.p50B;
    row.pairMedian = percentile(run.pairDiffs, 50);
    row.addedCpu = row.cpuA - row.cpuB;
    console.log(
      `    ${labels.join(' vs ')} round ${round}${attempt > 1 ? ` (attempt ${attempt})` : ''}: ${labels[0]} p50 ${fixed(row.p50A, 3)} ms, ${labels[1]} p50 ${fixed(row.p50B, 3)} ms, difference ${fixed(row.addedP50, 3)} ms (median of neighbour differences ${fixed(row.pairMedian, 3)} ms); ` +
        `CPU ${fixed(row.cpuA, 3)} / ${fixed(row.cpuB, 3)} ms/req; ${row.requestsA + row.requestsB} requests, non-200 ${row.bad}; other cores ${fixed(row.other, 2)}`,
    );
    check(row.bad === 0, `paired round ${round} (${labels.join(' vs ')}): ${row.bad} answers were not 200`);
    if (!best || row.other < best.other) best = row;
    if (row.other <= LOAD_DEFAULTS.otherCoresLimit) break;
  }
  best.contaminated = best.other > LOAD_DEFAULTS.otherCoresLimit;
  return best;
}
