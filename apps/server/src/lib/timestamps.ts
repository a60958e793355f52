/**
 * Timestamps from raw SQL: MikroORM sets the pg driver to hand `timestamptz` over as text
 * (`2026-11-21 18:31:45.665+00`), so rows read with `em.execute` carry strings, not Dates.
 */

/** PostgreSQL's text form of a timestamptz: date, time, optional fraction, offset. */
const PG_TIMESTAMP = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?([+-]\d{2})(?::?(\d{2}))?$/;

/**
 * ISO 8601 in UTC with milliseconds, as `Date#toISOString` writes it. The UTC text PostgreSQL
 * sends is rewritten without building a Date (the Date parser's fallback for that form cost
 * ~8 % of the CPU of an orders page); other offsets are parsed as ISO.
 */
export function iso(value: Date | string): string {
  if (value instanceof Date) return value.toISOString();
  const match = PG_TIMESTAMP.exec(value);
  if (!match) return new Date(value).toISOString();
  const [, date, time, fraction = '', hours, minutes = '00'] = match;
  if (hours === '+00' && minutes === '00') return `${date}T${time}.${fraction.padEnd(3, '0').slice(0, 3)}Z`;
  return new Date(`${date}T${time}${fraction ? `.${fraction}` : ''}${hours}:${minutes}`).toISOString();
}
