/**
 * Billing periods (docs/decisions.md, Subscriptions: anchored periods). A subscription's periods are
 * counted from one anchor (its first paid period's start: the checkout, the trial's end, or a
 * resume), never from the last renewal: the n-th boundary is anchor + n x (interval x count), and a
 * month that has no such day takes its last day (31 Jan, 28 Feb, 31 Mar, 30 Apr, ...), as Stripe's
 * billing cycle anchor does. So a renewal paid late (a dunning retry on day 5) starts its period at
 * the old period's end, and the days drift neither way.
 */
import type { TSubscriptionInterval } from '@svc/schemas';

export interface Cadence {
  interval: TSubscriptionInterval;
  intervalCount: number;
}

const DAY_MS = 86_400_000;

/** The `n`-th boundary after `anchor` (n = 0 is the anchor itself). */
export function boundary(anchor: Date, cadence: Cadence, n: number): Date {
  const { interval, intervalCount } = cadence;
  if (interval === 'day') return new Date(anchor.getTime() + n * intervalCount * DAY_MS);
  if (interval === 'week') return new Date(anchor.getTime() + n * intervalCount * 7 * DAY_MS);
  const months = n * intervalCount * (interval === 'year' ? 12 : 1);
  const year = anchor.getUTCFullYear();
  const month = anchor.getUTCMonth() + months;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  const day = Math.min(anchor.getUTCDate(), lastDay);
  return new Date(
    Date.UTC(
      year,
      month,
      day,
      anchor.getUTCHours(),
      anchor.getUTCMinutes(),
      anchor.getUTCSeconds(),
      anchor.getUTCMilliseconds(),
    ),
  );
}

/** The first boundary of the anchor's series strictly after `after`. */
export function nextBoundary(anchor: Date, cadence: Cadence, after: Date): Date {
  if (after < anchor) return anchor;
  // An estimate from the average length, then a step either way: at most a few iterations.
  const approxMs =
    cadence.interval === 'day'
      ? DAY_MS
      : cadence.interval === 'week'
        ? 7 * DAY_MS
        : (cadence.interval === 'month' ? 30.436875 : 365.2425) * DAY_MS;
  let n = Math.max(0, Math.floor((after.getTime() - anchor.getTime()) / (approxMs * cadence.intervalCount)) - 1);
  while (boundary(anchor, cadence, n) > after && n > 0) n -= 1;
  while (boundary(anchor, cadence, n) <= after) n += 1;
  return boundary(anchor, cadence, n);
}

/** A cadence's length in months (day and week plans: 0), for "a plan of 6 months or more". */
export function cadenceMonths(cadence: Cadence): number {
  if (cadence.interval === 'year') return 12 * cadence.intervalCount;
  if (cadence.interval === 'month') return cadence.intervalCount;
  return 0;
}

/** Monthly value of an amount billed every `cadence` (MRR): a yearly plan divided by 12. */
export function monthlyShare(amountMinor: number, cadence: Cadence): number {
  const days =
    cadence.interval === 'day' ? cadence.intervalCount : cadence.interval === 'week' ? 7 * cadence.intervalCount : 0;
  if (days > 0) return Math.round((amountMinor * 30) / days);
  return Math.round(amountMinor / cadenceMonths(cadence));
}
