import { describe, expect, it } from 'vitest';
import { periodProblem, periodQuery, quarterOf } from './period';
import { validateTaxSearch } from './search';

describe('the Tax screen period', () => {
  it('defaults to the quarter of the day, in UTC days, its last day included', () => {
    expect(quarterOf(new Date('2026-11-29T06:00:00Z'))).toEqual({ from: '2026-10-01', to: '2026-12-31' });
    expect(quarterOf(new Date('2026-01-01T00:00:00Z'))).toEqual({ from: '2026-01-01', to: '2026-03-31' });
    expect(quarterOf(new Date('2024-05-31T23:59:59Z'))).toEqual({ from: '2024-04-01', to: '2024-06-30' });
  });

  it('asks the API for midnight of the first day to midnight after the last (to exclusive)', () => {
    expect(periodQuery('2026-10-01', '2026-12-31')).toEqual({
      from: '2026-10-01T00:00:00Z',
      to: '2027-01-01T00:00:00.000Z',
    });
    expect(periodQuery('2024-02-29', '2024-02-29').to).toBe('2024-03-01T00:00:00.000Z');
  });

  it('keeps from the URL only real days', () => {
    expect(validateTaxSearch({ from: '2026-04-01', to: '2026-06-30' })).toEqual({
      from: '2026-04-01',
      to: '2026-06-30',
    });
    expect(validateTaxSearch({ from: '2026-02-30', to: 'June', extra: 1 })).toEqual({ from: undefined, to: undefined });
  });

  it('says what the API would refuse: a period that starts after it ends, or one over 400 days', () => {
    expect(periodProblem('2026-04-02', '2026-04-01')).toBe('The period starts after it ends.');
    // 2025-01-01 to 2026-02-04 included is 400 days; a day more is too long.
    expect(periodProblem('2025-01-01', '2026-02-04')).toBeUndefined();
    expect(periodProblem('2025-01-01', '2026-02-05')).toBe('The period is longer than 400 days.');
    expect(periodProblem('2026-04-01', '2026-04-01')).toBeUndefined();
  });
});
