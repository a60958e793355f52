/** What the figures were measured on. */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serverSettings, serverVersion } from './db.mjs';

export async function describeMachine() {
  let cpu = os.cpus()[0]?.model ?? 'unknown';
  try {
    cpu = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpu;
  } catch {
    // not Linux
  }
  return {
    cpus: os.availableParallelism?.() ?? os.cpus().length,
    cpu,
    memoryGiB: (os.totalmem() / 1024 ** 3).toFixed(1),
    node: process.version,
    postgres: await serverVersion(),
    postgresSettings: await serverSettings(),
    kernel: `${os.type()} ${os.release()}`,
  };
}

/**
 * Which build was measured: git HEAD (read-only `git rev-parse`) and the newest file time
 * under apps/server/dist, since the working tree may hold uncommitted changes or be rebuilt.
 */
export function describeBuild(repoRoot, distDir) {
  let head = 'unknown';
  try {
    head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: repoRoot,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    // not a checkout
  }
  let newest = 0;
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.js')) newest = Math.max(newest, statSync(full).mtimeMs);
    }
  };
  walk(distDir);
  return { head, distBuiltAt: new Date(newest).toISOString() };
}
