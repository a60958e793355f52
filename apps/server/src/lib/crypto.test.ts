import { describe, expect, it } from 'vitest';
import { hashPassword, randomBase62, randomDigits, safeEqual, verifyPassword } from './crypto.js';

describe('passwords', () => {
  it('verifies the right password only, and never stores it', async () => {
    const hash = await hashPassword('correct horse battery');
    expect(hash).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(hash).not.toContain('correct horse');
    expect(await verifyPassword('correct horse battery', hash)).toBe(true);
    expect(await verifyPassword('correct horse batterx', hash)).toBe(false);
    expect(await verifyPassword('anything', 'not-a-hash')).toBe(false);
  });

  it('salts: the same password hashes differently each time', async () => {
    expect(await hashPassword('same password')).not.toBe(await hashPassword('same password'));
  });
});

describe('random values', () => {
  it('makes base62 strings of the asked length, using the whole alphabet', () => {
    const sample = Array.from({ length: 200 }, () => randomBase62(40));
    for (const value of sample) expect(value).toMatch(/^[0-9A-Za-z]{40}$/);
    expect(new Set(sample.join('')).size).toBe(62);
    expect(new Set(sample).size).toBe(200);
  });

  it('makes digit strings', () => {
    expect(randomDigits(6)).toMatch(/^\d{6}$/);
  });

  it('compares in constant time, unequal lengths included', () => {
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual('abc', 'abd')).toBe(false);
    expect(safeEqual('abc', 'abcd')).toBe(false);
  });
});
