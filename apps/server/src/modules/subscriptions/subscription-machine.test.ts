/**
 * Every row of the subscription's table of moves, on plain state (the service applies the same
 * moves to the locked row; its tests run them against the database).
 */
import { describe, expect, it } from 'vitest';
import { AppError } from '../../lib/errors.js';
import { boundary, monthlyShare, nextBoundary } from './billing-period.js';
import {
  accessEnd,
  move,
  nextDue,
  RETRY_GAPS_DAYS,
  type BillingTerms,
  type SubscriptionState,
} from './subscription-machine.js';

const DAY = 86_400_000;
const t0 = new Date('2026-01-31T10:00:00.000Z');
const at = (days: number, from = t0) => new Date(from.getTime() + days * DAY);

const monthly: BillingTerms = {
  planId: 'plan_monthly',
  cadence: { interval: 'month', intervalCount: 1 },
  unitPriceMinor: 900,
  quantity: 1,
  discountMinor: 0,
};
const yearly: BillingTerms = {
  ...monthly,
  planId: 'plan_yearly',
  cadence: { interval: 'year', intervalCount: 1 },
  unitPriceMinor: 9000,
};

function incomplete(terms = monthly): SubscriptionState {
  return {
    status: 'incomplete',
    terms,
    anchor: t0,
    currentPeriodStart: t0,
    currentPeriodEnd: t0,
    trialEnd: null,
    cancelAtPeriodEnd: false,
    pauseAtPeriodEnd: false,
    canceledAt: null,
    endedAt: null,
    pausedAt: null,
    resumesAt: null,
    pastDueAt: null,
    retries: 0,
    unpaidFrom: null,
    nextRetryAt: null,
    cancellationReason: null,
    creditMinor: 0,
    pendingTerms: null,
    noticeFor: null,
    createdAt: t0,
  };
}

function active(terms = monthly): SubscriptionState {
  return move(incomplete(terms), 'activate', t0).next;
}

function expectRefused(run: () => unknown, code = 'invalid_transition'): void {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).appCode).toBe(code);
    return;
  }
  throw new Error('the move was not refused');
}

describe('billing periods', () => {
  it('are anchored: 31 January renews on the last day of short months and on the 31st again', () => {
    const cadence = { interval: 'month', intervalCount: 1 } as const;
    const ends = [1, 2, 3, 4].map((n) => boundary(t0, cadence, n).toISOString());
    expect(ends).toEqual([
      '2026-02-28T10:00:00.000Z',
      '2026-03-31T10:00:00.000Z',
      '2026-04-30T10:00:00.000Z',
      '2026-05-31T10:00:00.000Z',
    ]);
    // The next boundary after any moment in a period is that period's end.
    expect(nextBoundary(t0, cadence, new Date('2026-03-05T00:00:00Z')).toISOString()).toBe('2026-03-31T10:00:00.000Z');
    expect(nextBoundary(t0, cadence, new Date('2026-03-31T10:00:00Z')).toISOString()).toBe('2026-04-30T10:00:00.000Z');
    // Far out, the estimate still lands on the right boundary.
    expect(nextBoundary(t0, cadence, new Date('2030-12-31T09:59:59Z')).toISOString()).toBe('2030-12-31T10:00:00.000Z');
  });

  it('count days, weeks, quarters and years', () => {
    expect(boundary(t0, { interval: 'day', intervalCount: 10 }, 2)).toEqual(at(20));
    expect(boundary(t0, { interval: 'week', intervalCount: 2 }, 1)).toEqual(at(14));
    expect(boundary(t0, { interval: 'month', intervalCount: 3 }, 1).toISOString()).toBe('2026-04-30T10:00:00.000Z');
    const leap = new Date('2028-02-29T00:00:00Z');
    expect(boundary(leap, { interval: 'year', intervalCount: 1 }, 1).toISOString()).toBe('2029-02-28T00:00:00.000Z');
    expect(boundary(leap, { interval: 'year', intervalCount: 1 }, 4).toISOString()).toBe('2032-02-29T00:00:00.000Z');
  });

  it('give MRR: a yearly plan divided by 12, a weekly one by its share of 30 days', () => {
    expect(monthlyShare(9000, { interval: 'year', intervalCount: 1 })).toBe(750);
    expect(monthlyShare(900, { interval: 'month', intervalCount: 1 })).toBe(900);
    expect(monthlyShare(2700, { interval: 'month', intervalCount: 3 })).toBe(900);
    expect(monthlyShare(700, { interval: 'week', intervalCount: 1 })).toBe(3000);
  });
});

describe('the subscription table of moves', () => {
  it('trial start and end: trialing until trialEnd, then the first charge for the period from trialEnd', () => {
    const started = move(incomplete(), 'start_trial', t0, 7);
    expect(started.events).toEqual(['subscription.created']);
    const s = started.next;
    expect(s.status).toBe('trialing');
    expect(s.trialEnd).toEqual(at(7));
    expect(s.currentPeriodEnd).toEqual(at(7));
    expect(accessEnd(s, 7)).toEqual(at(7));
    // The notice 3 days before, once.
    expect(nextDue(s)).toEqual({ at: at(4), move: 'notice' });
    const noticed = move(s, 'notice', at(4));
    expect(noticed.events).toEqual(['subscription.trial_will_end']);
    expect(noticed.mail).toBe('trial_ending');
    expect(nextDue(noticed.next)).toEqual({ at: at(7), move: 'period_end' });
    const due = move(noticed.next, 'period_end', at(7));
    expect(due.charge).toEqual({
      reason: 'subscription_cycle',
      amountMinor: 900,
      creditUsedMinor: 0,
      periodStart: at(7),
    });
    const paid = move(due.next, 'paid', at(7), due.charge!);
    expect(paid.events).toEqual(['subscription.renewed']);
    expect(paid.next.status).toBe('active');
    expect(paid.next.currentPeriodStart).toEqual(at(7));
    expect(paid.next.currentPeriodEnd.toISOString()).toBe('2026-03-07T10:00:00.000Z');
  });

  it('a trial of 2 days sends no notice (its time was before the trial began)', () => {
    const s = move(incomplete(), 'start_trial', t0, 2).next;
    expect(nextDue(s)).toEqual({ at: at(2), move: 'period_end' });
  });

  it('activate: paid now, a period of the plan from now', () => {
    const r = move(incomplete(), 'activate', t0);
    expect(r.events).toEqual(['subscription.created']);
    expect(r.next.status).toBe('active');
    expect(r.next.currentPeriodEnd.toISOString()).toBe('2026-02-28T10:00:00.000Z');
    expect(nextDue(r.next)?.move).toBe('period_end');
  });

  it('an incomplete one expires after 24 hours', () => {
    const s = incomplete();
    expect(nextDue(s)).toEqual({ at: at(1), move: 'expire' });
    const r = move(s, 'expire', at(1));
    expect(r.next.status).toBe('incomplete_expired');
    expect(nextDue(r.next)).toBeNull();
    expect(accessEnd(r.next, 7)).toBeNull();
  });

  it('renewal paid: the next period starts exactly at the old end, again and again (no drift)', () => {
    let s = active();
    const ends: string[] = [];
    for (let i = 0; i < 12; i += 1) {
      const due = move(s, 'period_end', s.currentPeriodEnd);
      // Paid a little late (the worker's batch): the period is still the anchored one.
      s = move(due.next, 'paid', new Date(s.currentPeriodEnd.getTime() + 90_000), due.charge!).next;
      ends.push(s.currentPeriodEnd.toISOString().slice(0, 10));
    }
    expect(ends).toEqual([
      '2026-03-31',
      '2026-04-30',
      '2026-05-31',
      '2026-06-30',
      '2026-07-31',
      '2026-08-31',
      '2026-09-30',
      '2026-10-31',
      '2026-11-30',
      '2026-12-31',
      '2027-01-31',
      '2027-02-28',
    ]);
  });

  it('renewal failed: past_due with pastDueAt, a mail, access through the grace, first retry a day later', () => {
    const s = active();
    const end = s.currentPeriodEnd;
    const due = move(s, 'period_end', end);
    const failed = move(due.next, 'failed', end, due.charge!);
    expect(failed.events).toEqual(['subscription.past_due']);
    expect(failed.mail).toBe('payment_failed');
    expect(failed.next.status).toBe('past_due');
    expect(failed.next.pastDueAt).toEqual(end);
    expect(accessEnd(failed.next, 7)).toEqual(at(7, end));
    expect(nextDue(failed.next)).toEqual({ at: at(1, end), move: 'retry' });
  });

  it('each dunning retry: 1, 3, 5 and 7 days apart; the last failure ends it (payment_failed)', () => {
    const s = active();
    const end = s.currentPeriodEnd;
    const due = move(s, 'period_end', end);
    let state = move(due.next, 'failed', end, due.charge!).next;
    let when = end;
    const retries: number[] = [];
    for (let i = 0; i < RETRY_GAPS_DAYS.length; i += 1) {
      const next = nextDue(state)!;
      expect(next.move).toBe('retry');
      retries.push(Math.round((next.at.getTime() - when.getTime()) / DAY));
      when = next.at;
      const retry = move(state, 'retry', when);
      expect(retry.charge!.periodStart).toEqual(end);
      const result = move(retry.next, 'failed', when, retry.charge!);
      state = result.next;
      if (i < RETRY_GAPS_DAYS.length - 1) {
        expect(state.status).toBe('past_due');
        expect(result.events).toEqual([]);
      } else {
        expect(result.events).toEqual(['subscription.ended']);
        expect(result.mail).toBe('ended');
      }
    }
    expect(retries).toEqual([1, 3, 5, 7]);
    expect(state.status).toBe('canceled');
    expect(state.cancellationReason).toBe('payment_failed');
    expect(state.endedAt).toEqual(at(16, end));
    expect(nextDue(state)).toBeNull();
    expect(accessEnd(state, 7)).toEqual(at(16, end));
  });

  it('recovery by a retry on day 5: active, and the next period still starts at the old end', () => {
    const s = active();
    const end = s.currentPeriodEnd; // 28 February
    const due = move(s, 'period_end', end);
    let state = move(due.next, 'failed', end, due.charge!).next;
    const firstRetry = move(state, 'retry', at(1, end));
    state = move(firstRetry.next, 'failed', at(1, end), firstRetry.charge!).next;
    const secondRetry = move(state, 'retry', at(4, end));
    const recovered = move(secondRetry.next, 'paid', at(4, end), secondRetry.charge!);
    expect(recovered.events).toEqual(['subscription.renewed']);
    expect(recovered.next.status).toBe('active');
    expect(recovered.next.pastDueAt).toBeNull();
    expect(recovered.next.currentPeriodStart).toEqual(end);
    expect(recovered.next.currentPeriodEnd.toISOString()).toBe('2026-03-31T10:00:00.000Z');
  });

  it('recovery by the buyer paying by the link: the same anchored period', () => {
    const s = active();
    const end = s.currentPeriodEnd;
    const due = move(s, 'period_end', end);
    const pastDue = move(due.next, 'failed', end, due.charge!).next;
    const byBuyer = move(pastDue, 'paid', at(2, end), { ...due.charge!, periodStart: pastDue.unpaidFrom! });
    expect(byBuyer.next.status).toBe('active');
    expect(byBuyer.next.currentPeriodStart).toEqual(end);
  });

  it('cancel at period end: canceled event now, ended at the end without a charge; uncancel undoes it', () => {
    const s = active();
    const canceled = move(s, 'cancel', at(3), true, 'requested_by_customer');
    expect(canceled.events).toEqual(['subscription.canceled']);
    expect(canceled.next.status).toBe('active');
    expect(canceled.next.cancelAtPeriodEnd).toBe(true);
    expect(canceled.next.canceledAt).toEqual(at(3));
    expectRefused(() => move(canceled.next, 'cancel', at(4), true, 'requested_by_customer'));
    const uncanceled = move(canceled.next, 'resume', at(5));
    expect(uncanceled.events).toEqual(['subscription.uncanceled']);
    expect(uncanceled.next.cancelAtPeriodEnd).toBe(false);
    expect(uncanceled.next.canceledAt).toBeNull();
    const ended = move(canceled.next, 'period_end', s.currentPeriodEnd);
    expect(ended.events).toEqual(['subscription.ended']);
    expect(ended.charge).toBeUndefined();
    expect(ended.next.status).toBe('canceled');
    expect(ended.next.endedAt).toEqual(s.currentPeriodEnd);
    expect(ended.next.cancellationReason).toBe('requested_by_customer');
    expect(accessEnd(ended.next, 7)).toEqual(s.currentPeriodEnd);
  });

  it('cancel now: canceled then ended at once; a canceled one cannot be canceled or resumed', () => {
    const r = move(active(), 'cancel', at(3), false, 'requested_by_merchant');
    expect(r.events).toEqual(['subscription.canceled', 'subscription.ended']);
    expect(r.next.status).toBe('canceled');
    expect(r.next.endedAt).toEqual(at(3));
    expectRefused(() => move(r.next, 'cancel', at(4), false, 'requested_by_merchant'));
    expectRefused(() => move(r.next, 'resume', at(4)));
  });

  it('cancel at period end of a past-due one ends it now (no paid period is running)', () => {
    const s = active();
    const due = move(s, 'period_end', s.currentPeriodEnd);
    const pastDue = move(due.next, 'failed', s.currentPeriodEnd, due.charge!).next;
    const r = move(pastDue, 'cancel', at(1, s.currentPeriodEnd), true, 'requested_by_customer');
    expect(r.next.status).toBe('canceled');
    expect(nextDue(r.next)).toBeNull();
  });

  it('resume an active subscription with nothing scheduled: 409 naming its status', () => {
    try {
      move(active(), 'resume', at(1));
      throw new Error('not refused');
    } catch (error) {
      expect((error as AppError).appCode).toBe('invalid_transition');
      expect((error as AppError).message).toContain('active');
    }
  });

  it('pause from the period end, resumesAt resumes it with a charge and a new period from then', () => {
    const s = active();
    const resumesAt = at(60);
    const scheduled = move(s, 'pause', at(2), resumesAt);
    expect(scheduled.events).toEqual(['subscription.updated']);
    expect(scheduled.next.status).toBe('active');
    const paused = move(scheduled.next, 'period_end', s.currentPeriodEnd);
    expect(paused.events).toEqual(['subscription.paused']);
    expect(paused.charge).toBeUndefined();
    expect(paused.next.status).toBe('paused');
    expect(paused.next.pausedAt).toEqual(s.currentPeriodEnd);
    expect(accessEnd(paused.next, 7)).toEqual(s.currentPeriodEnd);
    expect(nextDue(paused.next)).toEqual({ at: resumesAt, move: 'resume' });
    const resuming = move(paused.next, 'resume', resumesAt);
    expect(resuming.charge!.periodStart).toEqual(resumesAt);
    const resumed = move(resuming.next, 'paid', resumesAt, resuming.charge!);
    expect(resumed.events).toEqual(['subscription.resumed']);
    expect(resumed.next.status).toBe('active');
    expect(resumed.next.currentPeriodStart).toEqual(resumesAt);
    expect(resumed.next.currentPeriodEnd).toEqual(boundary(resumesAt, monthly.cadence, 1));
    expect(resumed.next.resumesAt).toBeNull();
  });

  it('a resume that cannot be paid is past due for the new period', () => {
    const s = active();
    const paused = move(move(s, 'pause', at(1), null).next, 'period_end', s.currentPeriodEnd).next;
    expect(nextDue(paused)).toBeNull();
    const resuming = move(paused, 'resume', at(40));
    const failed = move(resuming.next, 'failed', at(40), resuming.charge!);
    expect(failed.events).toEqual(['subscription.resumed', 'subscription.past_due']);
    expect(failed.next.status).toBe('past_due');
    expect(failed.next.unpaidFrom).toEqual(at(40));
    const retry = move(failed.next, 'retry', at(41));
    const paid = move(retry.next, 'paid', at(41), retry.charge!);
    expect(paid.next.currentPeriodStart).toEqual(at(40));
  });

  it('pause refuses a resumesAt inside the period and a subscription set to cancel', () => {
    const s = active();
    expectRefused(() => move(s, 'pause', at(1), at(5)), 'validation_failed');
    const canceling = move(s, 'cancel', at(1), true, 'requested_by_customer').next;
    expectRefused(() => move(canceling, 'pause', at(2), null));
    // Resume before the end undoes a scheduled pause.
    const scheduled = move(s, 'pause', at(1), null).next;
    expect(move(scheduled, 'resume', at(2)).next.pauseAtPeriodEnd).toBe(false);
  });

  it('change without proration waits for the renewal, which charges the new terms', () => {
    const s = active();
    const pending = move(s, 'change', at(10), { ...monthly, quantity: 3 }, false);
    expect(pending.events).toEqual(['subscription.updated']);
    expect(pending.charge).toBeUndefined();
    expect(pending.next.terms.quantity).toBe(1);
    expect(pending.next.pendingTerms?.quantity).toBe(3);
    const due = move(pending.next, 'period_end', s.currentPeriodEnd);
    expect(due.charge!.amountMinor).toBe(2700);
    expect(due.next.pendingTerms).toBeNull();
  });

  it('proration, worked example: monthly $9 to yearly $90 on day 10 of 30 charges $84.00 and starts a year', () => {
    // A 30-day period: 1 to 31 April.
    const start = new Date('2026-04-01T00:00:00.000Z');
    const s: SubscriptionState = {
      ...active(),
      anchor: start,
      currentPeriodStart: start,
      currentPeriodEnd: at(30, start),
    };
    const day10 = at(10, start);
    const r = move(s, 'change', day10, yearly, true);
    // Unused: 20 of 30 days of $9 = $6.00 credit; the yearly plan starts now at $90: 9000 - 600.
    expect(r.charge).toEqual({
      reason: 'subscription_update',
      amountMinor: 8400,
      creditUsedMinor: 0,
      periodStart: day10,
    });
    expect(r.next.terms.planId).toBe('plan_yearly');
    expect(r.next.currentPeriodStart).toEqual(day10);
    expect(r.next.currentPeriodEnd.toISOString()).toBe('2027-04-11T00:00:00.000Z');
    expect(r.next.creditMinor).toBe(0);
  });

  it('proration to the cent: 3 seats down to 1 on day 10 of 30 leaves $12.00 credit, spent by the next renewals', () => {
    const start = new Date('2026-04-01T00:00:00.000Z');
    const threeSeats = { ...monthly, quantity: 3 };
    const s: SubscriptionState = {
      ...active(threeSeats),
      anchor: start,
      currentPeriodStart: start,
      currentPeriodEnd: at(30, start),
    };
    // Credit 2700 x 20/30 = 1800; charge 900 x 20/30 = 600; net credit 1200.
    const r = move(s, 'change', at(10, start), monthly, true);
    expect(r.charge).toBeUndefined();
    expect(r.next.creditMinor).toBe(1200);
    const first = move(r.next, 'period_end', r.next.currentPeriodEnd);
    expect(first.charge).toMatchObject({ amountMinor: 0, creditUsedMinor: 900 });
    const afterFirst = move(first.next, 'paid', r.next.currentPeriodEnd, first.charge!).next;
    expect(afterFirst.creditMinor).toBe(300);
    const second = move(afterFirst, 'period_end', afterFirst.currentPeriodEnd);
    expect(second.charge).toMatchObject({ amountMinor: 600, creditUsedMinor: 300 });
    expect(move(second.next, 'paid', afterFirst.currentPeriodEnd, second.charge!).next.creditMinor).toBe(0);
  });

  it('proration rounds half up to the cent, by the second', () => {
    const start = new Date('2026-04-01T00:00:00.000Z');
    const s: SubscriptionState = {
      ...active({ ...monthly, unitPriceMinor: 1000 }),
      anchor: start,
      currentPeriodStart: start,
      currentPeriodEnd: at(30, start),
    };
    // One third of the period unused: 1000/3 = 333.33 credit, 2000/3 = 666.67 charge.
    const r = move(s, 'change', at(20, start), { ...monthly, unitPriceMinor: 2000 }, true);
    expect(r.charge!.amountMinor).toBe(667 - 333);
  });

  it('change in a trial applies at once without a charge; a past-due one cannot change', () => {
    const trial = move(incomplete(), 'start_trial', t0, 7).next;
    const r = move(trial, 'change', at(1), yearly, true);
    expect(r.charge).toBeUndefined();
    expect(r.next.terms.planId).toBe('plan_yearly');
    const s = active();
    const due = move(s, 'period_end', s.currentPeriodEnd);
    const pastDue = move(due.next, 'failed', s.currentPeriodEnd, due.charge!).next;
    expectRefused(() => move(pastDue, 'change', at(1, s.currentPeriodEnd), yearly, true));
  });

  it('reminders: a yearly plan is reminded 7 days before renewing, once per period; a monthly one never', () => {
    const y = active(yearly);
    const due = nextDue(y)!;
    expect(due.move).toBe('notice');
    expect(due.at).toEqual(new Date(y.currentPeriodEnd.getTime() - 7 * DAY));
    const noticed = move(y, 'notice', due.at);
    expect(noticed.events).toEqual([]);
    expect(noticed.mail).toBe('upcoming_renewal');
    expect(nextDue(noticed.next)!.move).toBe('period_end');
    expect(nextDue(active())!.move).toBe('period_end');
    // Not for a subscription that is set to end.
    const canceling = move(y, 'cancel', at(1), true, 'requested_by_customer').next;
    expect(nextDue(canceling)!.move).toBe('period_end');
  });
});
