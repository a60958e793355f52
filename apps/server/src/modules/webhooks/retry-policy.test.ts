/**
 * The retry policy alone, without a database or a clock: the schedule and its jitter (from an
 * injected random), Retry-After and its cap, and the two ways an endpoint gets disabled.
 */
import { describe, expect, it } from 'vitest';
import {
  MAX_ATTEMPTS,
  MAX_RETRY_AFTER_MS,
  RETRY_DELAYS_MS,
  RETRY_JITTER,
  disableReason,
  nextAttemptDueAt,
  retryDelayMs,
  type DisableThresholds,
} from './retry-policy.js';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const NOW = new Date(Date.UTC(2026, 0, 1));
/** The lowest and (just below) the highest value of Math.random's range. */
const LOWEST = () => 0;
const HIGHEST = () => 0.999_999_999;
const MIDDLE = () => 0.5;

describe('the retry schedule', () => {
  it('is 8 attempts: at once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h', () => {
    expect(RETRY_DELAYS_MS).toEqual([5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR]);
    expect(MAX_ATTEMPTS).toBe(8);
    expect(RETRY_JITTER).toBe(0.1);
  });

  it('puts each delay within +/-10% of the schedule, from the random given', () => {
    RETRY_DELAYS_MS.forEach((base, index) => {
      const attempt = index + 1;
      expect(retryDelayMs(attempt, MIDDLE), `after attempt ${attempt}`).toBe(base);
      expect(retryDelayMs(attempt, LOWEST), `after attempt ${attempt}`).toBe(Math.round(base * 0.9));
      const highest = retryDelayMs(attempt, HIGHEST)!;
      expect(highest, `after attempt ${attempt}`).toBeLessThanOrEqual(Math.round(base * 1.1));
      expect(highest, `after attempt ${attempt}`).toBeGreaterThan(Math.round(base * 1.1) - 2);
    });
    for (let draw = 0; draw < 1; draw += 0.01) {
      const delay = retryDelayMs(3, () => draw)!;
      expect(delay).toBeGreaterThanOrEqual(27 * MINUTE);
      expect(delay).toBeLessThanOrEqual(33 * MINUTE);
    }
  });

  it('gives no retry after the last attempt, nor for an attempt number outside the schedule', () => {
    expect(retryDelayMs(MAX_ATTEMPTS - 1, MIDDLE)).toBe(10 * HOUR);
    expect(retryDelayMs(MAX_ATTEMPTS, MIDDLE)).toBeNull();
    expect(retryDelayMs(MAX_ATTEMPTS + 1, MIDDLE)).toBeNull();
    expect(retryDelayMs(0, MIDDLE)).toBeNull();
    expect(nextAttemptDueAt(NOW, MAX_ATTEMPTS, null, MIDDLE)).toBeNull();
    expect(nextAttemptDueAt(NOW, MAX_ATTEMPTS, HOUR, MIDDLE)).toBeNull();
  });
});

describe('the next attempt after a failure', () => {
  const at = (ms: number) => new Date(NOW.getTime() + ms);

  it('is due after the jittered delay when the receiver sent no Retry-After', () => {
    expect(nextAttemptDueAt(NOW, 1, null, MIDDLE)).toEqual(at(5 * SECOND));
    expect(nextAttemptDueAt(NOW, 1, null, LOWEST)).toEqual(at(4.5 * SECOND));
    expect(nextAttemptDueAt(NOW, 4, null, MIDDLE)).toEqual(at(2 * HOUR));
  });

  it('waits as long as Retry-After asks when that is longer than the schedule', () => {
    expect(nextAttemptDueAt(NOW, 1, HOUR, MIDDLE)).toEqual(at(HOUR));
    expect(nextAttemptDueAt(NOW, 4, 3 * HOUR, LOWEST)).toEqual(at(3 * HOUR));
  });

  it('is never earlier than the schedule, whatever Retry-After says', () => {
    expect(nextAttemptDueAt(NOW, 2, 0, MIDDLE)).toEqual(at(5 * MINUTE));
    expect(nextAttemptDueAt(NOW, 2, MINUTE, MIDDLE)).toEqual(at(5 * MINUTE));
    // A Retry-After inside the jitter's range: the jittered delay when it is the later one.
    expect(nextAttemptDueAt(NOW, 2, 5 * MINUTE, HIGHEST)!.getTime()).toBeGreaterThan(at(5 * MINUTE).getTime());
    expect(nextAttemptDueAt(NOW, 2, 5 * MINUTE, LOWEST)).toEqual(at(5 * MINUTE));
  });

  it('honours Retry-After up to 24 hours ahead, and no further', () => {
    expect(MAX_RETRY_AFTER_MS).toBe(24 * HOUR);
    expect(nextAttemptDueAt(NOW, 1, 24 * HOUR, MIDDLE)).toEqual(at(24 * HOUR));
    expect(nextAttemptDueAt(NOW, 1, 24 * HOUR + 1, MIDDLE)).toEqual(at(24 * HOUR));
    expect(nextAttemptDueAt(NOW, 1, 30 * DAY, MIDDLE)).toEqual(at(24 * HOUR));
  });
});

describe('disabling a failing endpoint', () => {
  const thresholds: DisableThresholds = { days: 5, failures: 20 };
  const streak = (failureCount: number, failingForMs: number, statusCode: number | null = 500) => ({
    statusCode,
    failureCount,
    firstFailureAt: new Date(NOW.getTime() - failingForMs),
  });

  it('disables at once on 410 Gone, on the first failure', () => {
    expect(disableReason(streak(1, 0, 410), NOW, thresholds)).toBe('The receiver answered 410 Gone.');
  });

  it('disables only with both: 5 days without success and 20 failures in a row', () => {
    expect(disableReason(streak(20, 5 * DAY), NOW, thresholds)).toBe(
      'No successful delivery for 5 days and 20 failed attempts in a row.',
    );
    expect(disableReason(streak(57, 9 * DAY, null), NOW, thresholds)).toBe(
      'No successful delivery for 5 days and 57 failed attempts in a row.',
    );
  });

  it('keeps the endpoint one failure or one millisecond short of either threshold', () => {
    expect(disableReason(streak(19, 5 * DAY), NOW, thresholds)).toBeNull();
    expect(disableReason(streak(20, 5 * DAY - 1), NOW, thresholds)).toBeNull();
    // Either threshold far exceeded does not make up for the other.
    expect(disableReason(streak(1_000, 5 * DAY - 1), NOW, thresholds)).toBeNull();
    expect(disableReason(streak(19, 365 * DAY), NOW, thresholds)).toBeNull();
  });

  it('does not treat other answers like 410', () => {
    for (const statusCode of [400, 404, 429, 500, 503, null])
      expect(disableReason(streak(1, 0, statusCode), NOW, thresholds)).toBeNull();
  });

  it('follows the configured thresholds', () => {
    const strict = { days: 2, failures: 3 };
    expect(disableReason(streak(3, 2 * DAY), NOW, strict)).toBe(
      'No successful delivery for 2 days and 3 failed attempts in a row.',
    );
    expect(disableReason(streak(2, 2 * DAY), NOW, strict)).toBeNull();
    expect(disableReason(streak(3, 2 * DAY - 1), NOW, strict)).toBeNull();
  });
});
