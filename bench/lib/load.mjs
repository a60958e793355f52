/**
 * The load generator: autocannon, in this process, against one URL, closed loop (each
 * connection sends its next request when the answer arrives), no pipelining.
 *
 * - prewarm(): before a server's first case, load on all its case URLs until its CPU per
 *   request stops falling (a fresh Node process is several times slower at first).
 * - measure(): waits for a quiet machine, runs a short warm-up (discarded), then the
 *   measured run; latency percentiles come from every response time (fractional ms, from
 *   autocannon's `response` event; autocannon's own histogram rounds to whole ms); peak RSS
 *   of the server is sampled over the measured run; a CPU account (lib/cpu.mjs) says how
 *   much CPU the server, PostgreSQL, this process and everybody else used. A run during
 *   which other processes were busy is repeated and the cleanest attempt kept.
 *
 * Requests are GET without a body unless a case gives `method` and `body` (a string, sent
 * as is with the case's headers, e.g. a JSON POST); `setupRequest` (autocannon's) rewrites each
 * request before it is sent. Every run also reports what it sent and
 * what came back (`tally`: sent, answered, 2xx): autocannon abandons the requests still in
 * flight when a timed run ends, and for a request that writes (a checkout) the server may
 * still commit them, so a benchmark that reconciles rows with answers needs those counts.
 *
 * Knobs (env): BENCH_CONNECTIONS 16, BENCH_DURATION 10 s, BENCH_WARMUP 2 s,
 * BENCH_PREWARM_MIN 20 s, BENCH_PREWARM_MAX 60 s, BENCH_OTHER_CORES 0.25, BENCH_RETRIES 1.
 */
import autocannon from 'autocannon';
import { startCpuAccount, waitForQuiet } from './cpu.mjs';
import { heading, LOAD_COLUMNS, table } from './format.mjs';
import { trackPeakRss } from './proc.mjs';

export const LOAD_DEFAULTS = {
  connections: Number(process.env.BENCH_CONNECTIONS ?? 16),
  durationS: Number(process.env.BENCH_DURATION ?? 10),
  warmupS: Number(process.env.BENCH_WARMUP ?? 2),
  /** Load on every case URL of a server before its first measured case (JIT, heap, pools), until its CPU per request settles. */
  prewarmMinS: Number(process.env.BENCH_PREWARM_MIN ?? 20),
  prewarmMaxS: Number(process.env.BENCH_PREWARM_MAX ?? 60),
  /** A case during which other processes kept more than this many cores busy is run again. */
  otherCoresLimit: Number(process.env.BENCH_OTHER_CORES ?? 0.25),
  retries: Number(process.env.BENCH_RETRIES ?? 1),
};

/** What one autocannon run sent and got back (requests abandoned at its end = sent - answered). */
export function tallyOf(result) {
  return { sent: result.requests.sent, answered: result.requests.total, ok: result['2xx'] };
}

/** Sums tallies. */
export function addTallies(...tallies) {
  return tallies.reduce(
    (sum, t) => ({
      sent: sum.sent + (t?.sent ?? 0),
      answered: sum.answered + (t?.answered ?? 0),
      ok: sum.ok + (t?.ok ?? 0),
    }),
    { sent: 0, answered: 0, ok: 0 },
  );
}

function fire(opts, onResponse) {
  return new Promise((resolve, reject) => {
    const instance = autocannon(opts, (error, result) => (error ? reject(error) : resolve(result)));
    if (onResponse) instance.on('response', onResponse);
  });
}

/**
 * Brings a freshly started server to its steady state: load that cycles through `urls`
 * (same origin) on every connection, in slices of `sliceS` seconds, until the server's CPU
 * per request stops falling (a slice no better than 3% below the best before it), after at
 * least `minS` seconds and `minRequests` requests, and at most `maxS` seconds. Requests are
 * GETs unless `method` and `body` say otherwise. Nothing is measured for the report; returns
 * the CPU ms per request of each slice (the warm-up curve), the requests, the failures and
 * the tally (sent / answered / 2xx).
 */
export async function prewarm({
  urls,
  headers = {},
  pid,
  method = 'GET',
  body,
  setupRequest,
  connections = LOAD_DEFAULTS.connections,
  minS = LOAD_DEFAULTS.prewarmMinS,
  minRequests = 0,
  maxS = LOAD_DEFAULTS.prewarmMaxS,
  sliceS = 5,
}) {
  const curve = [];
  let requests = 0;
  let failures = 0;
  let tally = addTallies();
  if (maxS <= 0 || urls.length === 0) return { curve, requests, failures, seconds: 0, tally };
  const origin = new URL(urls[0]).origin;
  const paths = urls.map((url) => {
    const parsed = new URL(url);
    if (parsed.origin !== origin) throw new Error(`prewarm: ${url} is not on ${origin}`);
    return {
      method,
      path: `${parsed.pathname}${parsed.search}`,
      ...(body === undefined ? {} : { body }),
      ...(setupRequest ? { setupRequest } : {}),
    };
  });
  let elapsed = 0;
  while (elapsed < maxS) {
    const account = await startCpuAccount({ serverPid: pid, backendPids: async () => [] });
    const result = await fire({
      url: origin,
      headers,
      connections,
      pipelining: 1,
      timeout: 10,
      duration: sliceS,
      requests: paths,
      renderProgressBar: false,
      renderResultsTable: false,
      renderLatencyTable: false,
    });
    const cpu = await account.stop();
    elapsed += sliceS;
    requests += result.requests.total;
    failures += result.non2xx + result.errors + result.timeouts;
    tally = addTallies(tally, tallyOf(result));
    const msPerRequest = (cpu.serverCpuSeconds * 1000) / Math.max(1, result.requests.total);
    const best = Math.min(...curve);
    curve.push(msPerRequest);
    if (elapsed >= minS && requests >= minRequests && curve.length > 1 && msPerRequest > best * 0.97) break;
  }
  return { curve, requests, failures, seconds: elapsed, tally };
}

/** Nearest-rank percentile of sorted `values`. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/**
 * Measures `url` with `headers` while `pid` serves it. Returns requests/s (2xx only),
 * latency percentiles (ms), status and error counts, the peak RSS (MiB) of `pid` and a
 * CPU account (lib/cpu.mjs; `backendPids` lists the PostgreSQL backends serving `pid`)
 * and, when `transactions` counts the database's transactions, statements per request.
 */
async function measureOnce({
  name,
  url,
  headers = {},
  method = 'GET',
  body,
  setupRequest,
  pid,
  backendPids = async () => [],
  transactions,
  connections = LOAD_DEFAULTS.connections,
  durationS = LOAD_DEFAULTS.durationS,
  warmupS = LOAD_DEFAULTS.warmupS,
}) {
  const base = {
    url,
    headers,
    method,
    ...(body === undefined ? {} : { body }),
    connections,
    pipelining: 1,
    timeout: 10,
    renderProgressBar: false,
    renderResultsTable: false,
    renderLatencyTable: false,
  };
  // A request rewritten before each send (say, a client address of its own per request).
  if (setupRequest) {
    const parsed = new URL(url);
    base.requests = [
      { method, path: `${parsed.pathname}${parsed.search}`, ...(body === undefined ? {} : { body }), setupRequest },
    ];
  }
  let warmupTally = addTallies();
  let warmupFailures = 0;
  if (warmupS > 0) {
    const warm = await fire({ ...base, duration: warmupS });
    warmupTally = tallyOf(warm);
    warmupFailures = warm.non2xx + warm.errors + warm.timeouts;
  }
  const times = [];
  const rss = trackPeakRss(pid);
  const account = await startCpuAccount({ serverPid: pid, backendPids });
  const transactions0 = transactions ? await transactions() : NaN;
  let result;
  let peakRssMiB;
  let cpu;
  try {
    result = await fire({ ...base, duration: durationS }, (_client, _status, _bytes, responseTime) =>
      times.push(responseTime),
    );
  } finally {
    cpu = await account.stop();
    peakRssMiB = rss.done();
  }
  // Backends flush these counters at most once a second, so up to a second of traffic is
  // missing at the end and up to a second of warm-up is counted at the start: about even.
  const transactionCount = transactions ? (await transactions()) - transactions0 : NaN;
  times.sort((a, b) => a - b);
  const elapsedS = (new Date(result.finish).getTime() - new Date(result.start).getTime()) / 1000;
  return {
    name,
    connections,
    durationS,
    requests: times.length,
    rps: result['2xx'] / elapsedS,
    mean: times.reduce((sum, t) => sum + t, 0) / times.length,
    p50: percentile(times, 50),
    p90: percentile(times, 90),
    p99: percentile(times, 99),
    max: times[times.length - 1],
    non2xx: result.non2xx,
    statusCodes: result.statusCodeStats,
    errors: result.errors,
    timeouts: result.timeouts,
    bytesPerResponse: result.throughput.total / Math.max(1, times.length),
    peakRssMiB,
    cpu,
    /** Database transactions (autocommit statements) per answered request; approximate (see above). */
    transactionsPerRequest: transactionCount / Math.max(1, times.length),
    /** CPU milliseconds the server process spent per answered request. */
    serverCpuMsPerRequest: (cpu.serverCpuSeconds * 1000) / Math.max(1, times.length),
    /** CPU milliseconds the PostgreSQL backends spent per answered request. */
    postgresCpuMsPerRequest: (cpu.postgresCpuSeconds * 1000) / Math.max(1, times.length),
    /** Sent / answered / 2xx of the measured run, and of the measured run plus its warm-up. */
    tally: tallyOf(result),
    tallyWithWarmup: addTallies(tallyOf(result), warmupTally),
    warmupFailures,
  };
}

/**
 * measureOnce after waiting for a quiet machine; when other processes still took more than
 * LOAD_DEFAULTS.otherCoresLimit cores during the run, waits and runs it again (up to
 * LOAD_DEFAULTS.retries times) and keeps the cleanest attempt. `contaminated` says when even
 * that one shared the machine.
 */
export async function measure(
  spec,
  { retries = LOAD_DEFAULTS.retries, otherCoresLimit = LOAD_DEFAULTS.otherCoresLimit } = {},
) {
  let best;
  let attempts = 0;
  // Everything every attempt sent (warm-ups included), for benchmarks that count rows written.
  let tallyAll = addTallies();
  let warmupFailures = 0;
  while (attempts <= retries) {
    attempts++;
    const quiet = await waitForQuiet({ thresholdCores: otherCoresLimit });
    const result = { ...(await measureOnce(spec)), startedQuiet: quiet.quiet };
    tallyAll = addTallies(tallyAll, result.tallyWithWarmup);
    warmupFailures += result.warmupFailures;
    if (!best || result.cpu.other < best.cpu.other) best = result;
    if (result.cpu.other <= otherCoresLimit) break;
  }
  return {
    ...best,
    attempts,
    contaminated: best.cpu.other > otherCoresLimit,
    tallyAll,
    warmupFailuresAll: warmupFailures,
  };
}

/**
 * Prints a benchmark's load results: its heading, the table, and a footnote when a case ran
 * while other processes kept the machine busy. Returns the results by case id.
 */
export function printLoadResults(title, cases, results) {
  console.log(heading(title));
  console.log(table(results, LOAD_COLUMNS));
  if (results.some((result) => result.contaminated)) {
    console.log(
      `* other processes kept more than ${LOAD_DEFAULTS.otherCoresLimit} cores busy during this case in each of its attempts (up to ${LOAD_DEFAULTS.retries + 1}); ` +
        'its req/s and latency understate this machine, CPU ms/req is less affected',
    );
  }
  console.log('');
  return Object.fromEntries(results.map((result, i) => [cases[i].id, result]));
}
