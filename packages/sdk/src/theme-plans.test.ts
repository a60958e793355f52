import { describe, expect, it } from 'vitest';
import { planLabel, planPriceText, trialText, yearlySaving } from './theme-plans.js';

const monthly = { id: 'm', interval: 'month', intervalCount: 1, price: 9, trialDays: 7, active: true } as const;
const yearly = { id: 'y', interval: 'year', intervalCount: 1, price: 90, trialDays: 0, active: true } as const;

describe('the theme client’s plan texts', () => {
  it('say a price per period, the yearly saving and the trial, as the hosted storefront does', () => {
    expect(planPriceText(monthly, 'USD')).toBe('$9.00 / month');
    expect(planPriceText({ ...monthly, intervalCount: 3, price: 25 }, 'USD')).toBe('$25.00 every 3 months');
    expect(planPriceText({ ...monthly, price: 900 }, 'JPY')).toBe('¥900 / month');
    expect(planLabel(yearly, [monthly, yearly], 'USD')).toBe('$90.00 / year · save 17 %');
    expect(trialText(monthly)).toBe('7-day free trial');
    expect(trialText(yearly)).toBe('');
  });

  it('compare in minor units: exact percents, rounded half up, none when not positive', () => {
    // 12 x 9.99 = 119.88; 99.90 saves 19.98 = 16.67 %.
    expect(yearlySaving({ ...yearly, price: 99.9 }, [{ ...monthly, price: 9.99 }], 'USD')).toBe(17);
    // 12 x 10 = 120; 119.40 saves 0.5 % (up to 1), 119.50 saves 0.42 % (none).
    expect(yearlySaving({ ...yearly, price: 119.4 }, [{ ...monthly, price: 10 }], 'USD')).toBe(1);
    expect(yearlySaving({ ...yearly, price: 119.5 }, [{ ...monthly, price: 10 }], 'USD')).toBeNull();
    expect(yearlySaving({ ...yearly, price: 108 }, [monthly], 'USD')).toBeNull();
    expect(yearlySaving(yearly, [yearly], 'USD')).toBeNull();
    expect(yearlySaving(monthly, [monthly, yearly], 'USD')).toBeNull();
    expect(planLabel({ ...yearly, price: 120 }, [monthly], 'USD')).toBe('$120.00 / year');
  });
});
