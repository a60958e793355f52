/**
 * Child processes under measurement. Their stdout/stderr go straight to a log file (not
 * through a pipe into this process), so the load generator never spends CPU reading the
 * server's request logs; we poll the file only until the server says where it listens.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { onCleanup } from './cleanup.mjs';

function parseLines(text) {
  const lines = [];
  for (const raw of text.split('\n')) {
    if (!raw.startsWith('{')) continue;
    try {
      lines.push(JSON.parse(raw));
    } catch {
      // a partial last line, or not JSON
    }
  }
  return lines;
}

/**
 * `node ...nodeArgs <script> ...args` with exactly `env` (plus PATH/HOME), output to `logFile`,
 * stopped at cleanup (SIGTERM, SIGKILL after 15 s). For children that never listen (a worker,
 * `svc migrate`) as much as for servers.
 */
export function spawnLogged({ label, script, args = [], nodeArgs = [], env, cwd, logFile }) {
  const fd = openSync(logFile, 'a');
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
    cwd,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const alive = () => child.exitCode === null && child.signalCode === null;
  const stop = async () => {
    if (!alive()) return exited;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    try {
      return await exited;
    } finally {
      clearTimeout(timer);
    }
  };
  const unregister = onCleanup(`stop ${label} (pid ${child.pid})`, stop);
  const log = () => {
    try {
      return readFileSync(logFile, 'utf8');
    } catch {
      return '';
    }
  };
  return { label, pid: child.pid, exited, alive, stop: unregister, log, lines: () => parseLines(log()), logFile };
}

/**
 * Spawns `node ...nodeArgs <script> ...args` with exactly `env` (plus PATH/HOME), logging to `logFile`,
 * and resolves once a JSON log line satisfies `isReady` (its `port` is returned).
 */
export async function spawnNode({
  label,
  script,
  args = [],
  nodeArgs = [],
  env,
  cwd,
  logFile,
  isReady,
  timeoutMs = 90_000,
}) {
  const child = spawnLogged({ label, script, args, nodeArgs, env, cwd, logFile });
  const unregister = child.stop;
  const readLog = child.log;
  const started = Date.now();
  let port;
  while (port === undefined) {
    if (!child.alive()) {
      await unregister();
      throw new Error(
        `${label} exited (${child.exitCode ?? child.signalCode}) before listening; log ${logFile}:\n${readLog().slice(-4000)}`,
      );
    }
    if (Date.now() - started > timeoutMs) {
      await unregister();
      throw new Error(`${label} did not listen within ${timeoutMs} ms; log ${logFile}:\n${readLog().slice(-4000)}`);
    }
    const ready = parseLines(readLog()).find(isReady);
    if (ready) port = ready.port;
    else await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    label,
    pid: child.pid,
    port,
    url: `http://127.0.0.1:${port}`,
    logFile,
    /** The JSON log lines so far (read from the file; call it only outside measurements). */
    logs: () => parseLines(readLog()),
    stop: unregister,
  };
}

/** VmRSS / VmHWM of a live process in MiB, from /proc/<pid>/status. */
export function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMiB: kib('VmRSS') / 1024, hwmMiB: kib('VmHWM') / 1024 };
}

/**
 * Peak RSS of `pid` over a stretch of time, sampling VmRSS every 50 ms (the kernel's
 * VmHWM is left alone, so it still tells the whole-process peak at the end). `done()`
 * returns MiB.
 */
export function trackPeakRss(pid) {
  let peak = memoryOf(pid).rssMiB;
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, memoryOf(pid).rssMiB);
    } catch {
      // the process went away; the caller will notice
    }
  }, 50);
  return {
    done() {
      clearInterval(timer);
      try {
        peak = Math.max(peak, memoryOf(pid).rssMiB);
      } catch {
        // gone
      }
      return peak;
    },
  };
}

/** A free loopback port (listen on 0, read it, close). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}
