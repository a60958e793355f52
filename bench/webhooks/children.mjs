/**
 * The webhooks benchmark's child processes (the worker, the floor): they listen on no port, and
 * the worker logs nothing at LOG_LEVEL=warn.
 */
import { readFileSync } from 'node:fs';
import { spawnLogged } from '../lib/proc.mjs';
import { REDIS_URL, REPO_ROOT } from '../lib/service.mjs';

/** A child under measurement, in the repository root (lib/proc.mjs). */
export function spawnChild(options) {
  return spawnLogged({ cwd: REPO_ROOT, ...options });
}

/** CPU seconds (user + system) of a live process so far, from /proc/<pid>/stat. */
export function cpuSecondsOf(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export function workerEnv({ db, encryptionKey, dataDir, redisKeyPrefix, pollMs }) {
  return {
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    DATABASE_URL: db.url,
    REDIS_URL,
    APP_ENCRYPTION_KEY: encryptionKey.toString('base64'),
    DATA_DIR: dataDir,
    REDIS_KEY_PREFIX: redisKeyPrefix,
    ...(pollMs === undefined ? {} : { WEBHOOK_POLL_MS: String(pollMs) }),
  };
}
