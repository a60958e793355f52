import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { AppError } from './errors.js';
import { cursorScope, decodeCursor, encodeCursor, keysetPage } from './cursor.js';

const key = randomBytes(32);
const scope = cursorScope('orders', { storeId: 'store-a', status: 'paid' });

/** The error a refused cursor throws: 400 validation_failed on `cursor`. */
function refusal(run: () => unknown) {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('the cursor was accepted');
}

describe('keyset cursors', () => {
  it('round-trips a position within its scope', () => {
    const position = { us: '1795285912473123', id: 'ck9x8y7z6w5v4u3t2s1r0q' };
    expect(decodeCursor(key, scope, encodeCursor(key, scope, position))).toEqual(position);
  });

  it('refuses a cursor signed with another key, edited, or not a cursor', () => {
    const cursor = encodeCursor(key, scope, { us: '1', id: 'a' });
    expect(() => decodeCursor(randomBytes(32), scope, cursor)).toThrow();
    expect(() => decodeCursor(key, scope, `x${cursor}`)).toThrow();
    expect(() => decodeCursor(key, scope, 'garbage')).toThrow();
    expect(() => decodeCursor(key, scope, `${cursor}.extra`)).toThrow();
  });

  it('refuses a cursor of another list, store, parent or filter, as it refuses a forged one', () => {
    const cursor = encodeCursor(key, scope, { us: '1', id: 'a' });
    const forged = refusal(() => decodeCursor(key, scope, 'garbage'));
    expect(forged).toMatchObject({
      appCode: 'validation_failed',
      issues: [{ path: 'cursor', message: 'Not a cursor this API issued.' }],
    });
    for (const other of [
      cursorScope('events', { storeId: 'store-a', status: 'paid' }),
      cursorScope('orders', { storeId: 'store-b', status: 'paid' }),
      cursorScope('orders', { storeId: 'store-a', status: 'pending' }),
      cursorScope('orders', { storeId: 'store-a' }),
      cursorScope('orders', { storeId: 'store-a', status: 'paid', from: new Date(0) }),
      cursorScope('webhook.deliveries', { storeId: 'store-a', webhookId: 'w2' }),
    ]) {
      const refused = refusal(() => decodeCursor(key, other, cursor));
      expect(refused, other).toMatchObject({ appCode: 'validation_failed', issues: (forged as AppError).issues });
    }
  });

  it('accepts the same scope however it is spelled: key order, absent filters, the same instant', () => {
    const at = '2026-01-01T01:00:00+01:00';
    const cursor = encodeCursor(key, cursorScope('events', { storeId: 's', type: undefined, from: new Date(at) }), {
      us: '5',
      id: 'b',
    });
    const same = cursorScope('events', { from: new Date('2026-01-01T00:00:00.000Z'), storeId: 's', type: '' });
    expect(decodeCursor(key, same, cursor)).toEqual({ us: '5', id: 'b' });
  });

  it('keeps the filter out of the cursor: its length does not grow with it', () => {
    const position = { us: '1795285912473123', id: 'ck9x8y7z6w5v4u3t2s1r0q' };
    const bare = encodeCursor(key, cursorScope('orders', { storeId: 's' }), position);
    const filtered = encodeCursor(
      key,
      cursorScope('orders', { storeId: 's', status: 'paid', customerEmail: 'someone@example.com' }),
      position,
    );
    expect(filtered.length).toBe(bare.length);
    expect(Buffer.from(filtered.split('.')[0]!, 'base64url').toString()).not.toContain('paid');
  });

  it('hands out a cursor of its scope with each full page', () => {
    const rows = [{ id: 'c' }, { id: 'b' }, { id: 'a' }];
    const { page, hasMore, nextCursor } = keysetPage(key, scope, rows, 2, () => 7);
    expect(page).toEqual(rows.slice(0, 2));
    expect(hasMore).toBe(true);
    expect(decodeCursor(key, scope, nextCursor!)).toEqual({ us: '7', id: 'b' });
    expect(keysetPage(key, scope, rows, 3, () => 7)).toMatchObject({ hasMore: false, nextCursor: null });
  });
});
