/** The rate-limiter benchmark's figures: micro, paired (with the control), under load, against issue 9's 1 ms. */
import { fixed, heading, LOAD_COLUMNS, ratioLine, table } from '../lib/format.mjs';
import { LOAD_DEFAULTS } from '../lib/load.mjs';
import { CONNECTION_COUNTS, MICRO_CONCURRENCY, median } from './knobs.mjs';

/** Prints them; returns the loaded runs' summary per connection count. */
export function report({ micro, paired, control, e2e, hwmA, hwmB, problemsA, problemsB }) {
  console.log(heading('rate-limiter: micro (one hit, this process, real Redis)'));
  const us = (v) => fixed(v * 1000, v < 0.1 ? 1 : 0);
  console.log(
    table(micro, [
      { key: 'name', label: 'operation', align: 'left' },
      { key: 'concurrency', label: 'in flight', format: String },
      { key: 'opsPerS', label: 'ops/s', format: (v) => fixed(v, 0) },
      { key: 'p50', label: 'p50 us', format: us },
      { key: 'p90', label: 'p90 us', format: us },
      { key: 'p99', label: 'p99 us', format: us },
      { key: 'max', label: 'max us', format: us },
      { key: 'clientCpuUs', label: 'client CPU us/op', format: (v) => fixed(v, 1) },
      { key: 'redisCpuUs', label: 'Redis CPU us/op', format: (v) => fixed(v, 1) },
      { key: 'commandsPerOp', label: 'Redis cmds/op', format: (v) => (Number.isFinite(v) ? fixed(v, 2) : '-') },
      { key: 'other', label: 'other cores', format: (v) => fixed(v, 2) },
    ]),
  );
  const microOf = (id, concurrency) => micro.find((row) => row.id === id && row.concurrency === concurrency);
  console.log('');
  for (const concurrency of MICRO_CONCURRENCY) {
    const hit = microOf('hit-allowed', concurrency);
    const ping = microOf('ping', concurrency);
    const evalsha = microOf('evalsha', concurrency);
    console.log(
      `${concurrency} in flight: hit() p50 ${us(hit.p50)} us = PING ${us(ping.p50)} us + ${us(hit.p50 - ping.p50)} us ` +
        `(EVALSHA of a trivial script ${us(evalsha.p50)} us: the sliding-log Lua adds ${us(hit.p50 - evalsha.p50)} us); client CPU ${fixed(hit.clientCpuUs, 1)} us/hit vs ${fixed(ping.clientCpuUs, 1)} for a PING`,
    );
  }

  console.log(
    heading('rate-limiter: end to end, paired, one request at a time (A = Redis limiter, B = in-process, C = like A)'),
  );
  console.log(
    table(
      [...paired, ...control],
      [
        { key: 'pair', label: 'pair', align: 'left' },
        {
          key: 'round',
          label: 'round',
          align: 'left',
          format: (v, row) =>
            `${v}${row.attempt > 1 ? ` (attempt ${row.attempt})` : ''}${row.contaminated ? ' *' : ''}`,
        },
        { key: 'requestsA', label: 'requests 1st/2nd', format: (v, row) => `${v}/${row.requestsB}` },
        { key: 'p50A', label: 'p50 1st ms', format: (v) => fixed(v, 3) },
        { key: 'p50B', label: 'p50 2nd ms', format: (v) => fixed(v, 3) },
        { key: 'addedP50', label: 'p50 1st-2nd ms', format: (v) => fixed(v, 3) },
        { key: 'pairMedian', label: 'median 1st-2nd of neighbours ms', format: (v) => fixed(v, 3) },
        { key: 'p90A', label: 'p90 1st/2nd ms', format: (v, row) => `${fixed(v, 2)}/${fixed(row.p90B, 2)}` },
        { key: 'p99A', label: 'p99 1st/2nd ms', format: (v, row) => `${fixed(v, 2)}/${fixed(row.p99B, 2)}` },
        { key: 'cpuA', label: 'CPU 1st ms/req', format: (v) => fixed(v, 3) },
        { key: 'cpuB', label: 'CPU 2nd ms/req', format: (v) => fixed(v, 3) },
        { key: 'addedCpu', label: 'CPU 1st-2nd ms/req', format: (v) => fixed(v, 3) },
        { key: 'other', label: 'other cores', format: (v) => fixed(v, 2) },
      ],
    ),
  );
  if (paired.some((row) => row.contaminated))
    console.log(
      `* other processes kept more than ${LOAD_DEFAULTS.otherCoresLimit} cores busy during every attempt of this round (both services alike)`,
    );
  const pairedAddedP50 = median(paired.map((row) => row.addedP50));
  const pairedAddedCpu = median(paired.map((row) => row.addedCpu));
  const pairedNeighbours = median(paired.map((row) => row.pairMedian));
  console.log(
    `A - B, median over ${paired.length} round(s): added p50 ${fixed(pairedAddedP50, 3)} ms (median A - B of neighbouring requests ${fixed(pairedNeighbours, 3)} ms), ` +
      `added server CPU ${fixed(pairedAddedCpu, 3)} ms per request`,
  );
  const controlP50 = control.length ? median(control.map((row) => row.addedP50)) : NaN;
  if (control.length) {
    console.log(
      `A - C (control: two identical services, both with the Redis limiter), median over ${control.length} round(s): p50 ${fixed(controlP50, 3)} ms ` +
        `(rounds ${control.map((row) => fixed(row.addedP50, 3)).join(' / ')}), server CPU ${fixed(median(control.map((row) => row.addedCpu)), 3)} ms per request: ` +
        'what two identical processes differ by; A - B is the limiter only where it stands clear of this',
    );
  }

  const summary = [];
  if (e2e.length > 0) {
    console.log(heading('rate-limiter: end to end under load (autocannon; A = Redis limiter, B = in-process)'));
    console.log(table(e2e, LOAD_COLUMNS));
    if (e2e.some((result) => result.contaminated))
      console.log(
        `* other processes kept more than ${LOAD_DEFAULTS.otherCoresLimit} cores busy during this case in each of its attempts`,
      );
    for (const connections of CONNECTION_COUNTS) {
      const of = (label) => e2e.filter((result) => result.label === label && result.connections === connections);
      const a = of('A');
      const b = of('B');
      const pairs = a.map((ra) => ({ ra, rb: b.find((rb) => rb.round === ra.round) }));
      summary.push({
        connections,
        p50A: median(a.map((r) => r.p50)),
        p50B: median(b.map((r) => r.p50)),
        addedP50: median(pairs.map(({ ra, rb }) => ra.p50 - rb.p50)),
        addedP50Each: pairs.map(({ ra, rb }) => ra.p50 - rb.p50),
        rpsRatio: median(pairs.map(({ ra, rb }) => ra.rps / rb.rps)),
        cpuA: median(a.map((r) => r.serverCpuMsPerRequest)),
        cpuB: median(b.map((r) => r.serverCpuMsPerRequest)),
        addedCpu: median(pairs.map(({ ra, rb }) => ra.serverCpuMsPerRequest - rb.serverCpuMsPerRequest)),
        other: Math.max(...a.concat(b).map((r) => r.cpu.other)),
      });
    }
    console.log('');
    console.log(
      table(summary, [
        { key: 'connections', label: 'connections', format: String },
        { key: 'p50A', label: 'p50 A ms', format: (v) => fixed(v, 2) },
        { key: 'p50B', label: 'p50 B ms', format: (v) => fixed(v, 2) },
        { key: 'addedP50', label: 'added p50 ms', format: (v) => fixed(v, 2) },
        {
          key: 'addedP50Each',
          label: 'per round',
          align: 'left',
          format: (v) => v.map((x) => fixed(x, 2)).join(' / '),
        },
        { key: 'rpsRatio', label: 'A/B req/s', format: (v) => fixed(v, 2) },
        { key: 'cpuA', label: 'CPU A ms/req', format: (v) => fixed(v, 3) },
        { key: 'cpuB', label: 'CPU B ms/req', format: (v) => fixed(v, 3) },
        { key: 'addedCpu', label: 'added CPU ms/req', format: (v) => fixed(v, 3) },
        { key: 'other', label: 'max other cores', format: (v) => fixed(v, 2) },
      ]),
    );
    console.log('(medians over the rounds; "added" = A - B of the same round, then the median)');
  }
  console.log('');
  const sequentialHit = microOf('hit-allowed', 1);
  console.log(
    ratioLine('limiter: one hit, p50 ms (micro, sequential)', sequentialHit.p50, {
      op: '<=',
      value: 1,
      note: 'issue 9: < 1 ms',
    }),
  );
  console.log(
    ratioLine('limiter: added p50 ms end to end (paired, one request at a time)', pairedAddedP50, {
      op: '<=',
      value: 1,
      note: 'issue 9: < 1 ms',
    }),
  );
  for (const row of summary)
    console.log(ratioLine(`limiter: added p50 ms at ${row.connections} connections (queueing included)`, row.addedP50));
  if (control.length) console.log(ratioLine('control: A - C p50 ms (two identical services)', controlP50));
  console.log(`process peak RSS (VmHWM): service A ${fixed(hwmA, 0)} MiB, service B ${fixed(hwmB, 0)} MiB`);
  console.log(
    `service log lines at warn or above after start-up: A ${problemsA.length}, B ${problemsB.length}${problemsA.length + problemsB.length ? ` (first: ${JSON.stringify(problemsA[0] ?? problemsB[0]).slice(0, 300)})` : ''}`,
  );
  return summary;
}
