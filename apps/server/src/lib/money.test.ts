import { describe, expect, it } from 'vitest';
import { amountToMinor, minorToAmount } from './money.js';

describe('money', () => {
  it('turns minor units into amounts with the currency exponent', () => {
    expect(minorToAmount(1999, 'USD')).toBe(19.99);
    expect(minorToAmount(10, 'EUR')).toBe(0.1);
    expect(minorToAmount(500, 'JPY')).toBe(500);
  });

  it('turns amounts into minor units without float drift, refusing finer amounts', () => {
    expect(amountToMinor(19.99, 'USD')).toBe(1999);
    expect(amountToMinor(0.07, 'USD')).toBe(7);
    expect(() => amountToMinor(1.001, 'USD')).toThrow(RangeError);
    expect(() => amountToMinor(1.5, 'JPY')).toThrow(RangeError);
  });
});
