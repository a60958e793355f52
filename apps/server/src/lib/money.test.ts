import { describe, expect, it } from 'vitest';
import { decimalPlaces } from '@svc/schemas';
import { amountToMinor, formatMoney, minorToAmount } from './money.js';

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

  it('reads an amount exactly as its decimal text: no tolerance lets a finer amount round into a price', () => {
    for (const finer of [0.30000000000000004, 9.999999999999998, 1.005, 0.1 + 0.2, 1e-7, 19.999]) {
      expect(() => amountToMinor(finer, 'USD'), String(finer)).toThrow(RangeError);
    }
    expect(decimalPlaces(0.30000000000000004)).toBe(17);
    expect(decimalPlaces(1e-7)).toBe(7);
    expect(decimalPlaces(1e21)).toBe(0);
    expect(decimalPlaces(Number.POSITIVE_INFINITY)).toBe(Number.POSITIVE_INFINITY);
    expect(amountToMinor(-0, 'USD')).toBe(0);
    // Every amount of two decimals up to 100,000.00 (and the top of the range) is taken, to the cent.
    for (let minor = 0; minor <= 10_000_000; minor += 7) {
      const amount = Number(`${Math.floor(minor / 100)}.${String(minor % 100).padStart(2, '0')}`);
      if (amountToMinor(amount, 'USD') !== minor)
        expect.fail(`${amount} -> ${amountToMinor(amount, 'USD')}, not ${minor}`);
    }
    expect(amountToMinor(999_999.99, 'USD')).toBe(99_999_999);
    expect(amountToMinor(1_000_000, 'USD')).toBe(100_000_000);
  });
});

describe('formatMoney', () => {
  it('writes minor units as a buyer reads them, with the currency’s places', () => {
    expect(formatMoney(1999, 'USD')).toBe('$19.99');
    expect(formatMoney(5, 'USD')).toBe('$0.05');
    expect(formatMoney(0, 'USD')).toBe('$0.00');
    expect(formatMoney(123456789, 'USD')).toBe('$1,234,567.89');
    expect(formatMoney(-450, 'EUR')).toBe('-€4.50');
    expect(formatMoney(500, 'JPY')).toBe('¥500');
    expect(formatMoney(1234, 'KWD')).toBe('KWD\u00a012.34');
  });

  it('is exact where a float would round: the largest safe amount keeps its last cent', () => {
    // As a float, 90071992547409.91 is 90071992547409.906..., which Intl writes as .90.
    expect(formatMoney(Number.MAX_SAFE_INTEGER, 'USD')).toBe('$90,071,992,547,409.91');
  });
});
