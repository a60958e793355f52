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
});
