import { describe, expect, it } from 'vitest';
import {
  cadenceWords,
  chargesText,
  planLabel,
  planPriceText,
  trialText,
  yearlySaving,
  type PlanTerms,
} from './plan-text.js';

const monthly: PlanTerms = { interval: 'month', intervalCount: 1, priceMinor: 900, trialDays: 7 };
const yearly: PlanTerms = { interval: 'year', intervalCount: 1, priceMinor: 9000, trialDays: 0 };

describe('plan texts', () => {
  it('says a price per period, and every n periods', () => {
    expect(planPriceText(monthly, 'USD')).toBe('$9.00 / month');
    expect(planPriceText(yearly, 'USD')).toBe('$90.00 / year');
    expect(planPriceText({ ...monthly, intervalCount: 3, priceMinor: 2500 }, 'USD')).toBe('$25.00 every 3 months');
    expect(planPriceText({ ...monthly, priceMinor: 900 }, 'JPY')).toBe('¥900 / month');
    expect(planPriceText({ ...monthly, priceMinor: 999 }, 'EUR')).toBe('€9.99 / month');
  });

  it('says a trial only when there is one', () => {
    expect(trialText(monthly)).toBe('7-day free trial');
    expect(trialText(yearly)).toBe('');
  });

  it('computes a yearly saving against 12 monthly payments, rounded to a whole percent', () => {
    // 12 x 9.00 = 108.00; 90.00 saves 18.00 = 16.67 %.
    expect(yearlySaving(yearly, [monthly, yearly])).toBe(17);
    expect(planLabel(yearly, [monthly, yearly], 'USD')).toBe('$90.00 / year · save 17 %');
    // 12 x 10.00 = 120.00; 100.00 saves 16.666… %; 114.00 saves exactly 5 %; 119.40 saves 0.5 % (rounds up to 1).
    const ten = { ...monthly, priceMinor: 1000 };
    expect(yearlySaving({ ...yearly, priceMinor: 10_000 }, [ten])).toBe(17);
    expect(yearlySaving({ ...yearly, priceMinor: 11_400 }, [ten])).toBe(5);
    expect(yearlySaving({ ...yearly, priceMinor: 11_940 }, [ten])).toBe(1);
    // Less than half a percent rounds to nothing: no saving shown.
    expect(yearlySaving({ ...yearly, priceMinor: 11_950 }, [ten])).toBeNull();
  });

  it('shows no saving when it is not one', () => {
    expect(yearlySaving({ ...yearly, priceMinor: 10_800 }, [monthly])).toBeNull();
    expect(yearlySaving({ ...yearly, priceMinor: 12_000 }, [monthly])).toBeNull();
    expect(planLabel({ ...yearly, priceMinor: 12_000 }, [monthly], 'USD')).toBe('$120.00 / year');
    // No monthly plan to compare with; a monthly plan itself; a 3-month plan is no monthly one.
    expect(yearlySaving(yearly, [yearly])).toBeNull();
    expect(yearlySaving(monthly, [monthly, yearly])).toBeNull();
    expect(yearlySaving(yearly, [{ ...monthly, intervalCount: 3 }])).toBeNull();
    expect(yearlySaving(yearly, [{ ...monthly, priceMinor: 0 }])).toBeNull();
  });

  it('says the cadence and what a checkout charges today and next', () => {
    expect(cadenceWords(monthly)).toBe('monthly');
    expect(cadenceWords(yearly)).toBe('yearly');
    expect(cadenceWords({ interval: 'week', intervalCount: 2 })).toBe('every 2 weeks');
    expect(
      chargesText(
        {
          todayMinor: 0,
          nextMinor: 900,
          nextAt: new Date('2026-12-05T10:00:00Z'),
          interval: 'month',
          intervalCount: 1,
        },
        'USD',
      ),
    ).toBe('Today: $0.00 · then $9.00 on 5 Dec 2026, monthly');
  });
});
