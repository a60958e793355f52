/**
 * The soak's sampling: the service's RSS every second, and every SAMPLE_S a window closed and
 * printed (answers by status, p50 / p99, RSS, cores, webhook deliveries and their lag).
 */
import { performance } from 'node:perf_hooks';
import { check } from '../lib/check.mjs';
import { onCleanup } from '../lib/cleanup.mjs';
import { startCpuAccount } from '../lib/cpu.mjs';
import { fixed } from '../lib/format.mjs';
import { percentile } from '../lib/load.mjs';
import { memoryOf } from '../lib/proc.mjs';
import { KINDS, MIX, RATE, SAMPLE_S, SETTLE_AFTER_MS, SOAK_S, WARMUP_S, mean, sleep } from './knobs.mjs';

/**
 * Samples until the run's last window closes. Returns the windows, and `stopRss` for the RSS
 * sampler, which goes on into the drain (its samples land in the window open then).
 */
export async function sampleWindows({ service, watch, load }) {
  const windows = [];
  const rssSampler = setInterval(() => {
    try {
      load.window.rssSamples.push(memoryOf(service.pid).rssMiB);
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
    const closeAt = load.t0 + Math.min((w + 1) * SAMPLE_S, SOAK_S) * 1000;
    await sleep(Math.max(0, closeAt - performance.now()));
    check(service.alive?.() ?? true, 'the service is alive');
    const closed = load.nextWindow(w + 1);
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
            ([status]) => !(Number(status) >= 200 && Number(status) < 300) && !(kind === 'limited' && status === '429'),
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
      inFlight: KINDS.reduce((sum, kind) => sum + load.inFlight[kind], 0),
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
  return {
    windows,
    stopRss: async () => {
      clearInterval(rssSampler);
      await stopRss();
    },
  };
}
