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

/**
 * A query parameter that carries JSON (the theme cart: `?cart=[{"productId":...}]`): a string
 * here, which the document marks as JSON (`contentMediaType`) with the shape of what it decodes to
 * (`contentSchema`). The server decodes it with `readJsonField` (lib/input-limits.ts), which holds
 * what it decodes to to the same rules as a JSON body (storable text, finite numbers, nesting and
 * array limits), so the sweep finds every such parameter in the document and sends it bad JSON.
 */
export function jsonQuery(content: z.ZodType, maxLength: number, description: string) {
  const contentSchema: Record<string, unknown> = z.toJSONSchema(content, { target: 'draft-2020-12', io: 'input' });
  delete contentSchema.$schema;
  return z.string().max(maxLength).meta({ description, contentMediaType: 'application/json', contentSchema });
}
