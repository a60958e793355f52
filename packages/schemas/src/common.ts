/** Building blocks shared by many schemas. */
import { z } from 'zod';

/** An e-mail address, trimmed and lower-cased: one spelling per mailbox. */
export const ZEmail = z
  .string()
  .trim()
  .max(320)
  .pipe(z.email())
  .transform((value) => value.toLowerCase());

export const ZTimestamp = z.iso.datetime();

/** A database id (cuid2). */
export const ZId = z
  .string()
  .min(1)
  .max(32)
  .regex(/^[a-z0-9]+$/, 'not an id');

/** Plain text: no control characters other than newline and tab. */
export const ZPlainText = (max: number) =>
  z
    .string()
    .max(max)
    .refine(
      // eslint-disable-next-line no-control-regex -- it matches control characters on purpose, to refuse them
      (value) => !/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/.test(value),
      'control characters are not allowed',
    );

/**
 * A name shown on one line (a store's, a product's, a webhook's): trimmed, not blank, and no
 * control character at all, line breaks and tabs included, nor a Unicode line or paragraph
 * separator. Names go into e-mail subjects, page titles, CSV cells and log lines, where a line
 * break starts something else.
 */
export const ZSingleLine = (max: number) =>
  z
    .string()
    .trim()
    .min(1)
    .max(max)
    .refine(
      // eslint-disable-next-line no-control-regex -- it matches control characters on purpose, to refuse them
      (value) => !/[\u0000-\u001F\u007F-\u009F\u2028\u2029]/.test(value),
      'one line, without control characters',
    );

/**
 * The decimal places of a number as its shortest decimal text reads (`0.3` -> 1, `1.005` -> 3,
 * `0.30000000000000004` -> 17, `1e-7` -> 7, `100` -> 0). A JSON number is exactly the double its
 * text parses to, and the shortest text of that double is what any decimal reading of it gives,
 * so an amount is "at most two decimals" exactly when this is 2 or less: no tolerance, no rounding.
 */
export function decimalPlaces(value: number): number {
  const match = /^-?\d+(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(value));
  if (!match) return Number.POSITIVE_INFINITY; // NaN, Infinity
  return Math.max(0, (match[1]?.length ?? 0) - Number(match[2] ?? 0));
}

/**
 * A buyer's checkout token as a client presents it: any string (bounded), so that one that does
 * not open the order is 403 whatever its shape, as a wrong one of the right length is (docs/decisions.md:
 * given but not matching: 403; none given: 401).
 */
export const ZBuyerToken = z
  .string()
  .max(4096)
  .meta({ description: 'The checkout token from orders/create (`checkoutToken`)' });

/** A count, size or quantity in a response: a non-negative PostgreSQL integer (never JavaScript's unsafe range). */
export const ZCount = z.number().int().min(0).max(2_147_483_647);

/**
 * Test mode (docs/architecture.md, Test mode): true for a live object, false for a test one. Every object of a mode
 * (products, orders, licenses, events, webhooks ...) carries it.
 */
export const ZLivemode = z.boolean().meta({ description: 'true for a live object, false for a test-mode one' });
