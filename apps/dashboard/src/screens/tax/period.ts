/**
 * The report's period as the seller picks it (two UTC days, both included) and as the API takes it
 * (instants, `from` inclusive and `to` exclusive: the day after the last one). Pure, so tested alone.
 */

import { TAX_REPORT_MAX_DAYS } from '@svc/schemas';

const DAY_MS = 86_400_000;

/** `YYYY-MM-DD` of a UTC instant. */
const dayOf = (at: Date) => at.toISOString().slice(0, 10);

/** The calendar quarter `now` falls in, as its first and last UTC days. */
export function quarterOf(now: Date): { from: string; to: string } {
  const year = now.getUTCFullYear();
  const first = Math.floor(now.getUTCMonth() / 3) * 3;
  const start = new Date(Date.UTC(year, first, 1));
  const end = new Date(Date.UTC(year, first + 3, 1) - DAY_MS);
  return { from: dayOf(start), to: dayOf(end) };
}

/** The API's query for days `from` to `to`, both included: midnight UTC of `from`, and of the day after `to`. */
export function periodQuery(from: string, to: string): { from: string; to: string } {
  const end = new Date(Date.parse(`${to}T00:00:00Z`) + DAY_MS);
  return { from: `${from}T00:00:00Z`, to: end.toISOString() };
}

/** What is wrong with days `from` to `to` (both included) as the API would say it, or nothing. */
export function periodProblem(from: string, to: string): string | undefined {
  if (!from || !to) return undefined;
  if (from > to) return 'The period starts after it ends.';
  const { from: start, to: end } = periodQuery(from, to);
  if (Date.parse(end) - Date.parse(start) > TAX_REPORT_MAX_DAYS * DAY_MS)
    return `The period is longer than ${TAX_REPORT_MAX_DAYS} days.`;
  return undefined;
}
