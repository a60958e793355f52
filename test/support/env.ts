/** Where the test run finds PostgreSQL and Redis; CI's .ci/run makes sure both answer here. */
export const TEST_PG_BASE = process.env.TEST_PG_URL ?? 'postgresql://postgres@127.0.0.1:5432';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const MAX_WORKERS = 2;

export function databaseUrl(name: string): string {
  return `${TEST_PG_BASE}/${name}`;
}

/** The database of worker `n` (1-based) in this test run (see global-setup.ts). */
export function workerDatabaseName(n: number): string {
  return `svc_test_${process.env.SVC_TEST_RUN ?? 'local'}_w${n}`;
}

/** This vitest worker's own database, created and migrated by the global setup. */
export function workerDatabaseUrl(): string {
  const id = Number(process.env.VITEST_POOL_ID ?? '1');
  return databaseUrl(workerDatabaseName(((id - 1) % MAX_WORKERS) + 1));
}
