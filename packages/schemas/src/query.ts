/**
 * Helpers for query-string inputs. A REST query string carries only strings, so a
 * query parameter that is a number says so here; JSON bodies never coerce.
 */
import { z } from 'zod';

/**
 * A whole number given as a JSON number or as a decimal string ("50"); nothing else. Typed as
 * taking a number: that is what a typed client sends (the string form is the query string's).
 */
export function queryInt(schema: z.ZodNumber = z.number().int()) {
  return z.preprocess<unknown, z.ZodNumber, number>(
    (value) => (typeof value === 'string' && /^-?\d{1,15}$/.test(value) ? Number(value) : value),
    schema,
  );
}
