/** The rate-limiter benchmark's knobs (environment) and constants, read once; see ../rate-limiter.mjs. */

export const MICRO_S = Number(process.env.BENCH_LIMITER_MICRO_S ?? 3);
export const MICRO_WARMUP_S = 0.5;
export const PAIRED_ROUNDS = Number(process.env.BENCH_LIMITER_PAIRED_ROUNDS ?? 5);
export const ROUNDS = Number(process.env.BENCH_LIMITER_ROUNDS ?? 2);
/** A third service C, identical to A (Redis limiter), paired with A as a null control: how far two identical processes differ. */
export const CONTROL = process.env.BENCH_LIMITER_CONTROL !== '0';
export const CONNECTION_COUNTS = (process.env.BENCH_LIMITER_CONNECTIONS ?? '16')
  .split(',')
  .map(Number)
  .filter((n) => n > 0);
export const MICRO_CONCURRENCY = [1, 16];
/** As runtime.ts: REDIS_COMMAND_TIMEOUT_MS. */
export const REDIS_COMMAND_TIMEOUT_MS = 250;
export const MINUTE = 60_000;
export const ONE_KEY_MANY = 1_000;

export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
