/**
 * Timestamps from raw SQL: MikroORM sets the pg driver to hand `timestamptz` over as text
 * (`2026-11-21 18:31:45.665+00`), so rows read with `em.execute` carry strings, not Dates.
 */
export function iso(value: Date | string): string {
  return (value instanceof Date ? value : new Date(value)).toISOString();
}
