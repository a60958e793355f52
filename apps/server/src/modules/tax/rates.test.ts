/** The rates' data read as the sales-tax package gives it: dated changes, e-books, countries it does not know. */
import { describe, expect, it } from 'vitest';
import { digitalGoodsRate, EU_COUNTRIES, knownTaxCountry } from './rates.js';
import { lineTax, shareDiscount } from './tax.js';

describe('digital goods rates', () => {
  it("follows a country's changes by day: Finland's 24 % became 25.5 % on 1 September 2024", () => {
    expect(digitalGoodsRate('FI', 'standard', new Date('2024-08-31T23:59:59Z'))).toBe(240_000);
    expect(digitalGoodsRate('FI', 'standard', new Date('2024-09-01T00:00:00Z'))).toBe(255_000);
    expect(digitalGoodsRate('EE', 'standard', new Date('2025-06-30T12:00:00Z'))).toBe(220_000);
    expect(digitalGoodsRate('EE', 'standard', new Date('2025-07-01T00:00:00Z'))).toBe(240_000);
  });

  it('gives an e-book the reduced rate only where the country has one', () => {
    const at = new Date('2026-06-01T00:00:00Z');
    expect(digitalGoodsRate('DE', 'ebook', at)).toBe(70_000);
    expect(digitalGoodsRate('FR', 'ebook', at)).toBe(55_000);
    expect(digitalGoodsRate('DK', 'ebook', at)).toBe(digitalGoodsRate('DK', 'standard', at));
  });

  it('knows the EU and says nothing of a country the data lacks', () => {
    expect(EU_COUNTRIES.has('GR')).toBe(true);
    expect(EU_COUNTRIES.has('GB')).toBe(false);
    expect(EU_COUNTRIES.size).toBe(27);
    expect(knownTaxCountry('AQ')).toBe(false);
    expect(digitalGoodsRate('AQ', 'standard', new Date())).toBeUndefined();
    expect(digitalGoodsRate('US', 'standard', new Date())).toBe(0);
  });
});

describe('rounding', () => {
  it('rounds each line half away from zero, exactly, also past 2^53 in the intermediate product', () => {
    expect(lineTax(50, 190_000, 'exclusive')).toEqual({ netMinor: 50, taxMinor: 10 }); // 9.5 -> 10
    expect(lineTax(250, 190_000, 'inclusive')).toEqual({ netMinor: 210, taxMinor: 40 }); // 210.08
    expect(lineTax(9_007_199_254_740, 190_000, 'exclusive').taxMinor).toBe(1_711_367_858_401);
  });

  it('shares a discount by amount among the discounted lines only, the remainder to the largest parts', () => {
    const line = (amountMinor: number, discounted = true) => ({
      amountMinor,
      category: 'standard' as const,
      discounted,
    });
    expect(shareDiscount([line(999), line(777), line(198)], 197)).toEqual([100, 77, 20]);
    expect(shareDiscount([line(500, false), line(500)], 100)).toEqual([0, 100]);
    expect(shareDiscount([line(1), line(1), line(1)], 2)).toEqual([1, 1, 0]);
    expect(shareDiscount([line(10)], 0)).toEqual([0]);
  });
});
