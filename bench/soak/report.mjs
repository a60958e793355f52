/** The soak's figures and verdict: the time series, each kind over the run, errors, RSS, webhooks. */
import { fixed, heading, seconds, table } from '../lib/format.mjs';
import { percentile } from '../lib/load.mjs';
import { DRAIN_S, KINDS, MIX, RATE, RSS_GROWTH_LIMIT, RSS_TARGET_MB, WARMUP_S, mean } from './knobs.mjs';

/** Prints them; returns the problems that make the run untrustworthy, and the figures the run returns. */
export function report({ load, windows, ended, receiverState, counters }) {
  const { errors, intended429, totals, pending } = load;
  const {
    expected,
    expectedTotal,
    drainMs,
    drainWindow,
    deliveryRows,
    undelivered,
    tableCounts,
    hwm,
    serviceProblems,
    serverCpuSeconds,
    postgresCpuSeconds,
  } = ended;
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
    problems.push(`${receiverState.badSignatures} deliveries with a bad signature (first: ${receiverState.firstBad})`);
  if (receiverState.badBodies > 0)
    problems.push(`${receiverState.badBodies} deliveries whose body does not match their headers`);
  if ((expected['order.created'] ?? 0) !== counters.checkouts200)
    problems.push(
      `order.created events ${expected['order.created'] ?? 0} != checkouts answered 200 ${counters.checkouts200}`,
    );
  if ((expected['order.paid'] ?? 0) !== counters.settled)
    problems.push(`order.paid events ${expected['order.paid'] ?? 0} != settlements ${counters.settled}`);
  if (pending.size > 0) problems.push(`${pending.size} requests still unanswered ${DRAIN_S} s after the load`);
  return { problems, kindRows, growth, floorGrowth, peakMiB, hwm };
}
