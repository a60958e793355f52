/**
 * CPU accounting over a measured stretch, from /proc: how much CPU the machine spent in
 * total, and how much of it went to the processes of the benchmark (the server under load,
 * this load-generating process, the PostgreSQL backends of the benchmark's database). The
 * rest ("other") is someone else's work on the same cores; when it is not near zero the
 * throughput and latency figures are contaminated, while CPU per request of the server is
 * much less so.
 */
import { readFileSync } from 'node:fs';

const HZ = 100; // USER_HZ: /proc reports clock ticks of 1/100 s on Linux

function machineBusyTicks() {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already inside user)
  const [user, nice, system, , , irq, softirq, steal] = fields;
  return user + nice + system + irq + softirq + (steal ?? 0);
}

function processTicks(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state); utime and stime are fields 14 and 15
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined; // gone
  }
}

/**
 * Starts an account. `serverPid` is the process under load; `backendPids()` returns the
 * PostgreSQL backend pids serving it (asked at the start and at the end). `stop()` returns
 * cores used on average: { total, server, load, postgres, other }.
 */
export async function startCpuAccount({ serverPid, backendPids }) {
  const t0 = process.hrtime.bigint();
  const busy0 = machineBusyTicks();
  const server0 = processTicks(serverPid) ?? 0;
  const self0 = process.cpuUsage();
  const backends0 = new Map();
  for (const pid of await backendPids()) backends0.set(pid, processTicks(pid) ?? 0);
  return {
    async stop() {
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      const busy = (machineBusyTicks() - busy0) / HZ;
      const server = ((processTicks(serverPid) ?? server0) - server0) / HZ;
      const self = process.cpuUsage(self0);
      const load = (self.user + self.system) / 1e6;
      let postgres = 0;
      const pids = new Set([...backends0.keys(), ...(await backendPids())]);
      for (const pid of pids) {
        const now = processTicks(pid);
        // A backend that went away before the end is lost to the account (counted as other).
        if (now !== undefined) postgres += (now - (backends0.get(pid) ?? 0)) / HZ;
      }
      const perSecond = (value) => value / seconds;
      return {
        total: perSecond(busy),
        server: perSecond(server),
        load: perSecond(load),
        postgres: perSecond(postgres),
        other: Math.max(0, perSecond(busy - server - load - postgres)),
        serverCpuSeconds: server,
        postgresCpuSeconds: postgres,
      };
    },
  };
}

/**
 * Waits (at most `maxWaitMs`) for a `windowMs` stretch in which the whole machine is busy
 * less than `thresholdCores`, so a case does not start in the middle of someone else's
 * build. Resolves { quiet, waitedMs, busyCores } either way.
 */
export async function waitForQuiet({ thresholdCores = 0.25, windowMs = 1000, maxWaitMs = 10_000 } = {}) {
  const started = Date.now();
  let busyCores = Infinity;
  while (true) {
    const before = machineBusyTicks();
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    busyCores = (machineBusyTicks() - before) / HZ / (windowMs / 1000);
    if (busyCores < thresholdCores) return { quiet: true, waitedMs: Date.now() - started, busyCores };
    if (Date.now() - started >= maxWaitMs) return { quiet: false, waitedMs: Date.now() - started, busyCores };
  }
}
