import { describe, expect, it } from 'vitest';
import { iso } from './timestamps.js';

describe('iso', () => {
  it('rewrites PostgreSQL UTC text exactly as Date#toISOString would', () => {
    for (const text of [
      '2026-11-21 18:31:45.665+00',
      '2026-11-21 18:31:45+00',
      '2026-11-21 18:31:45.6+00',
      '2026-11-21 18:31:45.123456+00',
      '1999-12-31 23:59:59.999+00:00',
    ]) {
      expect(iso(text)).toBe(new Date(text.replace(' ', 'T').replace(/\+00(:00)?$/, 'Z')).toISOString());
    }
    expect(iso('2026-11-21 18:31:45.123456+00')).toBe('2026-11-21T18:31:45.123Z');
  });

  it('converts other offsets, Dates and ISO strings to UTC', () => {
    expect(iso('2026-11-21 18:31:45.5+05:30')).toBe('2026-11-21T13:01:45.500Z');
    expect(iso('2026-11-21 01:00:00-02')).toBe('2026-11-21T03:00:00.000Z');
    expect(iso(new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6)))).toBe('2026-01-02T03:04:05.006Z');
    expect(iso('2026-01-02T03:04:05.006Z')).toBe('2026-01-02T03:04:05.006Z');
  });
});
