/** The webhooks benchmark's figures: the throughput and lag tables, the ratios, what the processes said. */
import { fixed, heading, ratioLine, table } from '../lib/format.mjs';
import { DISPATCHER_PER_ENDPOINT, EVENTS, FLOOR_CONCURRENCY, LAG_RATE, LAG_WARMUP_EVENTS, PAUSE_MS } from './knobs.mjs';

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

/** Prints the figures; returns the throughput runs and the ratios. */
export function printFigures({ worker, floor, floorSmall, workerDb, workerProblems, lagRuns, lagInfo, channel }) {
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
  return { throughput, ratios };
}
