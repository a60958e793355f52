/** The Tax report's search params: the period as two UTC days (`to` included), kept in the URL. */

export interface TaxSearch {
  from?: string;
  to?: string;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** A `YYYY-MM-DD` that is a real day, or nothing. */
function day(value: unknown): string | undefined {
  if (typeof value !== 'string' || !DAY.test(value)) return undefined;
  const parsed = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().startsWith(value) ? value : undefined;
}

export const validateTaxSearch = (search: Record<string, unknown>): TaxSearch => ({
  from: day(search.from),
  to: day(search.to),
});
