import { describe, expect, it } from 'vitest';
import { chargesText } from '../catalog/plan-text.js';
import { chargesAheadOf } from './charges-ahead.js';
import type { Subscription } from './subscriptions.entities.js';

/** The terms a checkout's subscription row holds (the rest of the row plays no part here). */
const row = (terms: Partial<Subscription> = {}): Subscription =>
  ({
    planId: 'plan1',
    interval: 'month',
    intervalCount: 1,
    unitPriceMinor: 900,
    quantity: 1,
    discountMinor: 0,
    ...terms,
  }) as Subscription;

describe('the charges ahead of a subscription checkout', () => {
  it('in a trial: nothing today, the period’s amount at the trial’s end', () => {
    const now = new Date('2026-11-28T10:00:00Z');
    const ahead = chargesAheadOf(row(), 7, 0, now);
    expect(ahead).toEqual({
      todayMinor: 0,
      nextMinor: 900,
      nextAt: new Date('2026-12-05T10:00:00Z'),
      interval: 'month',
      intervalCount: 1,
    });
    expect(chargesText(ahead, 'USD')).toBe('Today: $0.00 · then $9.00 on 5 Dec 2026, monthly');
  });

  it('without one: today’s price, then the seats’ amount less a forever coupon at the first period’s end', () => {
    // 31 January: the next month has no 31st, so its last day (as the billing engine counts).
    const now = new Date('2027-01-31T08:00:00Z');
    const ahead = chargesAheadOf(row({ quantity: 3, discountMinor: 300 }), 0, 2400, now);
    expect(ahead.nextAt).toEqual(new Date('2027-02-28T08:00:00Z'));
    expect(chargesText(ahead, 'USD')).toBe('Today: $24.00 · then $24.00 on 28 Feb 2027, monthly');
    const yearly = chargesAheadOf(row({ interval: 'year', unitPriceMinor: 9000 }), 0, 9000, now);
    expect(chargesText(yearly, 'USD')).toBe('Today: $90.00 · then $90.00 on 31 Jan 2028, yearly');
  });

  it('with tax: the next charge adds the tax of prices without it, and is the price when it is included', () => {
    const now = new Date('2026-11-28T10:00:00Z');
    // 9.99 a month at 20 % (a French buyer): 9.99 + 2.00 (1.998 rounded), as the renewal charges it.
    const exclusive = chargesAheadOf(row({ unitPriceMinor: 999 }), 0, 1199, now, {
      behavior: 'exclusive',
      ratePpm: 200_000,
    });
    expect(exclusive.nextMinor).toBe(1199);
    expect(chargesText(exclusive, 'EUR')).toBe('Today: €11.99 · then €11.99 on 28 Dec 2026, monthly');
    // In a trial nothing is due today, and the period's amount comes with its tax at the trial's end.
    expect(chargesAheadOf(row(), 7, 0, now, { behavior: 'exclusive', ratePpm: 190_000 }).nextMinor).toBe(1071);
    // Inclusive: the tax is inside the price; reverse charge or a country without tax: rate 0.
    expect(chargesAheadOf(row(), 0, 900, now, { behavior: 'inclusive', ratePpm: 200_000 }).nextMinor).toBe(900);
    expect(chargesAheadOf(row(), 0, 900, now, { behavior: 'exclusive', ratePpm: 0 }).nextMinor).toBe(900);
  });
});
