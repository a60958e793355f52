/**
 * Opaque keyset cursors: the position (microsecond timestamp and id of the last row) in
 * base64url, with an HMAC so a tampered or forged cursor is refused instead of read.
 */
import { deriveKey, hmacHex, safeEqual } from './crypto.js';
import { invalidField } from './errors.js';

export interface KeysetPosition {
  /** Microseconds since the epoch, as a decimal string (exact, unlike a float). */
  us: string;
  id: string;
}

const SIGNATURE_LENGTH = 22;

function cursorKey(master: Buffer): Buffer {
  return deriveKey(master, 'cursor');
}

export function encodeCursor(master: Buffer, position: KeysetPosition): string {
  const body = Buffer.from(JSON.stringify([position.us, position.id])).toString('base64url');
  return `${body}.${hmacHex(cursorKey(master), body).slice(0, SIGNATURE_LENGTH)}`;
}

export function decodeCursor(master: Buffer, cursor: string): KeysetPosition {
  const invalid = () => invalidField('cursor', 'Not a cursor this API issued.');
  const [body, signature, extra] = cursor.split('.');
  if (!body || !signature || extra !== undefined) throw invalid();
  if (!safeEqual(signature, hmacHex(cursorKey(master), body).slice(0, SIGNATURE_LENGTH))) throw invalid();
  try {
    const [us, id] = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as unknown[];
    if (typeof us !== 'string' || !/^\d{1,20}$/.test(us) || typeof id !== 'string') throw new Error('shape');
    return { us, id };
  } catch {
    throw invalid();
  }
}

/** `(<time>, <id>) < <the cursor's position>`, exact to the microsecond, with its parameters. */
export function beforePosition(
  position: KeysetPosition,
  timeColumn: string,
  idColumn: string,
): { sql: string; params: string[] } {
  return {
    sql: `(${timeColumn}, ${idColumn}) < (timestamptz 'epoch' + (?::bigint) * interval '1 microsecond', ?)`,
    params: [position.us, position.id],
  };
}

/**
 * A page from `limit + 1` rows read newest first: the page, whether more follow, and the
 * signed cursor to them (from the last row's microsecond timestamp and id).
 */
export function keysetPage<R extends { id: string }>(
  master: Buffer,
  rows: R[],
  limit: number,
  usOf: (row: R) => string | number,
) {
  const hasMore = rows.length > limit;
  const page = hasMore ? rows.slice(0, limit) : rows;
  const last = page[page.length - 1];
  return {
    page,
    hasMore,
    nextCursor: hasMore && last ? encodeCursor(master, { us: String(usOf(last)), id: last.id }) : null,
  };
}
