/**
 * The retry policy of webhook attempts (docs/decisions.md): when the attempt after a failed one is due,
 * and when an endpoint that keeps failing is disabled. Pure: the caller passes the time, the
 * randomness and the thresholds, so every rule here is tested without a database or a clock.
 */

/** Delay before attempt n + 1 after attempt n failed (docs/decisions.md): 8 attempts in all. */
export const RETRY_DELAYS_MS = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
/** Jitter on every retry delay: +/- this fraction. */
export const RETRY_JITTER = 0.1;
/** A receiver's Retry-After is honoured up to this far ahead. */
export const MAX_RETRY_AFTER_MS = 24 * 3_600_000;
const DAY_MS = 24 * 3_600_000;

/** The delay before the attempt after `attempt`, with jitter; null after the last attempt. */
export function retryDelayMs(attempt: number, random: () => number = Math.random): number | null {
  const base = RETRY_DELAYS_MS[attempt - 1];
  if (base === undefined) return null;
  return Math.round(base * (1 - RETRY_JITTER + 2 * RETRY_JITTER * random()));
}

/**
 * When the attempt after the failed `attempt` is due: the schedule's delay, or the receiver's
 * Retry-After when that asks for longer (never shorter: a busy receiver does not speed retries
 * up), up to MAX_RETRY_AFTER_MS. Null after the last attempt.
 */
export function nextAttemptDueAt(
  now: Date,
  attempt: number,
  retryAfterMs: number | null,
  random: () => number = Math.random,
): Date | null {
  const delay = retryDelayMs(attempt, random);
  if (delay === null) return null;
  const retryAfter = retryAfterMs === null ? 0 : Math.min(retryAfterMs, MAX_RETRY_AFTER_MS);
  return new Date(now.getTime() + Math.max(delay, retryAfter));
}

/** An endpoint's failure streak, including the failure just recorded. */
export interface FailureStreak {
  /** The receiver's status on that failure (null: no answer). */
  statusCode: number | null;
  /** Consecutive failed attempts since the last success. */
  failureCount: number;
  /** When the streak began. */
  firstFailureAt: Date;
}

/** WEBHOOK_DISABLE_AFTER_DAYS and WEBHOOK_DISABLE_AFTER_FAILURES. */
export interface DisableThresholds {
  days: number;
  failures: number;
}

/**
 * Why the endpoint is to be disabled after this failure, in the words its owners are sent; null
 * to keep it. At once on 410 Gone; otherwise only when both thresholds are met, so neither a
 * burst of failures nor a long quiet outage with few events disables it alone.
 */
export function disableReason(streak: FailureStreak, now: Date, thresholds: DisableThresholds): string | null {
  if (streak.statusCode === 410) return 'The receiver answered 410 Gone.';
  const failingFor = now.getTime() - streak.firstFailureAt.getTime();
  if (streak.failureCount >= thresholds.failures && failingFor >= thresholds.days * DAY_MS) {
    return `No successful delivery for ${thresholds.days} days and ${streak.failureCount} failed attempts in a row.`;
  }
  return null;
}
