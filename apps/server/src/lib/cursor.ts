/**
 * Opaque keyset cursors: the position (microsecond timestamp and id of the last row) in
 * base64url, with an HMAC over the position and the cursor's scope, so a tampered or forged
 * cursor, or one issued for another list, store, parent or filter, is refused instead of read.
 */
import { deriveKey, hmacHex, safeEqual } from './crypto.js';
import { invalidField } from './errors.js';

export interface KeysetPosition {
  /** Microseconds since the epoch, as a decimal string (exact, unlike a float). */
  us: string;
  id: string;
}

/** The lists that hand out cursors. */
export type CursorList =
  | 'orders'
  | 'customer.orders'
  | 'customers'
  | 'events'
  | 'feedback'
  | 'licenses'
  | 'products'
  | 'license-keys'
  | 'dashboard.license-keys'
  | 'tickets'
  | 'webhook.deliveries'
  | 'subscriptions'
  | 'customer.subscriptions';

/** What a cursor pages, canonical: built by `cursorScope` only, so both ends spell it the same way. */
export type CursorScope = string & { readonly cursorScope: unique symbol };

/** A value that shaped a page; absent (undefined, null, '') is no filter. A Date is its instant. */
type Bound = string | number | boolean | Date | null | undefined;

/**
 * The scope a list's cursors are sealed with: its name and every value that shaped its pages (the
 * store, a parent such as the webhook or product, the filters). Never written into the cursor: the
 * MAC covers it, so a cursor does not grow with the filter and shows nothing of it.
 */
export function cursorScope(list: CursorList, bound: Record<string, Bound>): CursorScope {
  const parts: string[] = [list];
  for (const name of Object.keys(bound).sort()) {
    const value = bound[name];
    if (value === undefined || value === null || value === '') continue;
    parts.push(name, value instanceof Date ? String(value.getTime()) : String(value));
  }
  return JSON.stringify(parts) as CursorScope;
}

const SIGNATURE_LENGTH = 22;

function cursorKey(master: Buffer): Buffer {
  return deriveKey(master, 'cursor');
}

/** The body is base64url (no newline), so body and scope part unambiguously. */
function signature(master: Buffer, scope: CursorScope, body: string): string {
  return hmacHex(cursorKey(master), `${body}\n${scope}`).slice(0, SIGNATURE_LENGTH);
}

export function encodeCursor(master: Buffer, scope: CursorScope, position: KeysetPosition): string {
  const body = Buffer.from(JSON.stringify([position.us, position.id])).toString('base64url');
  return `${body}.${signature(master, scope, body)}`;
}

/** The position a cursor of this scope holds; any other cursor is 400 `validation_failed` on `cursor`. */
export function decodeCursor(master: Buffer, scope: CursorScope, cursor: string): KeysetPosition {
  const invalid = () => invalidField('cursor', 'Not a cursor this API issued.');
  const [body, mac, extra] = cursor.split('.');
  if (!body || !mac || extra !== undefined) throw invalid();
  if (!safeEqual(mac, signature(master, scope, body))) throw invalid();
  try {
    const [us, id] = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as unknown[];
    if (typeof us !== 'string' || !/^\d{1,20}$/.test(us) || typeof id !== 'string') throw new Error('shape');
    return { us, id };
  } catch {
    throw invalid();
  }
}

/**
 * A page from `limit + 1` rows read in the list's order: the page, whether more follow, and the
 * cursor to them (from the last row's microsecond timestamp and id), sealed with the list's scope.
 */
export function keysetPage<R extends { id: string }>(
  master: Buffer,
  scope: CursorScope,
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
    nextCursor: hasMore && last ? encodeCursor(master, scope, { us: String(usOf(last)), id: last.id }) : null,
  };
}
