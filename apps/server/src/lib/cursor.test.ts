import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from './cursor.js';

const key = randomBytes(32);

describe('keyset cursors', () => {
  it('round-trips a position', () => {
    const position = { us: '1795285912473123', id: 'ck9x8y7z6w5v4u3t2s1r0q' };
    expect(decodeCursor(key, encodeCursor(key, position))).toEqual(position);
  });

  it('refuses a cursor signed with another key, edited, or not a cursor', () => {
    const cursor = encodeCursor(key, { us: '1', id: 'a' });
    expect(() => decodeCursor(randomBytes(32), cursor)).toThrow();
    expect(() => decodeCursor(key, `x${cursor}`)).toThrow();
    expect(() => decodeCursor(key, 'garbage')).toThrow();
    expect(() => decodeCursor(key, `${cursor}.extra`)).toThrow();
  });
});
