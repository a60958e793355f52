/**
 * Helpers for query-string inputs. A REST query string carries only strings, so a
 * query parameter that is a number says so here; JSON bodies never coerce.
 */
import { z } from 'zod';

/** A whole number given as a JSON number or as a decimal string ("50"); nothing else. */
export function queryInt(schema: z.ZodNumber = z.number().int()) {
  return z.preprocess((value) => (typeof value === 'string' && /^-?\d{1,15}$/.test(value) ? Number(value) : value), schema);
}
