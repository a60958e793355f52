/**
 * The subscription's one table of moves (docs/decisions.md, Subscriptions): every change of a
 * subscription's status, period, schedule or price is one row here, as the order lifecycle is for
 * orders. The table is pure: a move takes the subscription's state and the time and answers the
 * next state, the events it emits (in order) and what must happen outside (a charge, a mail); the
 * service applies it to the locked row, in the transaction that records the events, and the
 * billing engine runs the moves that fall due.
 *
 *   incomplete ──start_trial──> trialing ──period_end──> (charge) ──paid──> active
 *   incomplete ──activate─────> active   ──period_end──> (charge) ──paid──> active (next period, anchored)
 *   incomplete ──expire───────> incomplete_expired                ──failed─> past_due
 *   past_due ──retry paid / buyer pays──> active    past_due ──retry failed (4th)──> canceled
 *   trialing | active ──cancel(atPeriodEnd)──> (cancelAtPeriodEnd) ──period_end──> canceled
 *   any live ──cancel(now)──> canceled            (cancelAtPeriodEnd) ──resume──> uncanceled
 *   trialing | active ──pause──> (pauseAtPeriodEnd) ──period_end──> paused ──resume / resumesAt──> (charge)
 *   trialing | active ──change(prorate)──> (charge the difference, credit the rest)
 */
import type { TCancellationReason, TSubscriptionStatus } from '@svc/schemas';
import { AppError, invalidField } from '../../lib/errors.js';
import { shareOf } from '../../lib/money.js';
import { boundary, cadenceMonths, nextBoundary, type Cadence } from './billing-period.js';

const DAY_MS = 86_400_000;
/** Dunning: the gaps between a failed renewal and each retry (1, 3, 5 and 7 days: 16 in all). */
export const RETRY_GAPS_DAYS = [1, 3, 5, 7] as const;
/** How long a checkout's subscription waits for its first payment. */
export const INCOMPLETE_LIFETIME_MS = DAY_MS;
/** The trial-ending notice goes this long before `trialEnd`. */
export const TRIAL_NOTICE_MS = 3 * DAY_MS;
/** The upcoming-renewal mail for a plan of 6 months or more goes this long before the renewal. */
export const RENEWAL_NOTICE_MS = 7 * DAY_MS;

export type SubscriptionEventType =
  | 'subscription.created'
  | 'subscription.updated'
  | 'subscription.renewed'
  | 'subscription.past_due'
  | 'subscription.canceled'
  | 'subscription.uncanceled'
  | 'subscription.paused'
  | 'subscription.resumed'
  | 'subscription.ended'
  | 'subscription.trial_will_end';

export type SubscriptionMail = 'trial_ending' | 'upcoming_renewal' | 'payment_failed' | 'ended';

/** A price the subscription bills at: the plan, its cadence, the unit price and the seats. */
export interface BillingTerms {
  planId: string;
  cadence: Cadence;
  unitPriceMinor: number;
  quantity: number;
  /** What a `forever` coupon takes off each payment, in minor units (0 without one). */
  discountMinor: number;
}

/** The part of a subscription the moves read and write (the entity's columns, as plain data). */
export interface SubscriptionState {
  status: TSubscriptionStatus;
  terms: BillingTerms;
  /** Where the periods are counted from (billing-period.ts). */
  anchor: Date;
  currentPeriodStart: Date;
  currentPeriodEnd: Date;
  trialEnd: Date | null;
  cancelAtPeriodEnd: boolean;
  pauseAtPeriodEnd: boolean;
  canceledAt: Date | null;
  endedAt: Date | null;
  pausedAt: Date | null;
  resumesAt: Date | null;
  pastDueAt: Date | null;
  /** Failed retries since the renewal failed (0 right after the failure). */
  retries: number;
  /** While past due: the start of the period the outstanding charge pays for. */
  unpaidFrom: Date | null;
  nextRetryAt: Date | null;
  cancellationReason: TCancellationReason | null;
  creditMinor: number;
  /** A change made with `prorate: false`, applied at the next period end. */
  pendingTerms: BillingTerms | null;
  /** The period end (or trial end) the last notice was sent for: each notice goes once. */
  noticeFor: Date | null;
  createdAt: Date;
}

/** A charge the caller makes (the gateway's saved method, or none when the amount is 0). */
export interface ChargeEffect {
  reason: 'subscription_cycle' | 'subscription_update';
  amountMinor: number;
  /** Credit the charge spends (taken from the balance once it is paid). */
  creditUsedMinor: number;
  /** The start of the period the charge pays for: the idempotency key's period. */
  periodStart: Date;
}

export interface MoveResult {
  next: SubscriptionState;
  events: SubscriptionEventType[];
  charge?: ChargeEffect;
  mail?: SubscriptionMail;
}

/** What every move refuses with: 409 `invalid_transition`, naming the current status. */
function refuse(state: SubscriptionState, what: string): AppError {
  return new AppError('invalid_transition', `Cannot ${what} a subscription that is ${state.status.replace('_', ' ')}.`);
}

export function amountOf(terms: BillingTerms): number {
  return Math.max(0, terms.unitPriceMinor * terms.quantity - terms.discountMinor);
}

function periodAfter(anchor: Date, cadence: Cadence, start: Date): Date {
  return nextBoundary(anchor, cadence, start);
}

/** The moves, each with the statuses it leaves from. */
const MOVES = {
  /** Checkout with a trial: the payment method is saved, the first charge falls at `trialEnd`. */
  start_trial: {
    from: ['incomplete'],
    run(s: SubscriptionState, now: Date, trialDays: number): MoveResult {
      const trialEnd = new Date(now.getTime() + trialDays * DAY_MS);
      return {
        next: {
          ...s,
          status: 'trialing',
          anchor: trialEnd,
          currentPeriodStart: now,
          currentPeriodEnd: trialEnd,
          trialEnd,
        },
        events: ['subscription.created'],
      };
    },
  },
  /** Checkout without a trial: the first payment is made, the first period starts now. */
  activate: {
    from: ['incomplete'],
    run(s: SubscriptionState, now: Date): MoveResult {
      return {
        next: {
          ...s,
          status: 'active',
          anchor: now,
          currentPeriodStart: now,
          currentPeriodEnd: boundary(now, s.terms.cadence, 1),
        },
        events: ['subscription.created'],
      };
    },
  },
  /** The first payment never came. */
  expire: {
    from: ['incomplete'],
    run(s: SubscriptionState, now: Date): MoveResult {
      return { next: { ...s, status: 'incomplete_expired', endedAt: now }, events: [] };
    },
  },
  /**
   * The period (or the trial) ran out: a scheduled cancel ends it, a scheduled pause pauses it,
   * otherwise the next period is charged (a pending change applies first, and the credit balance
   * pays what it can).
   */
  period_end: {
    from: ['trialing', 'active'],
    run(s: SubscriptionState): MoveResult {
      const end = s.currentPeriodEnd;
      if (s.cancelAtPeriodEnd)
        return { next: { ...s, status: 'canceled', endedAt: end }, events: ['subscription.ended'], mail: 'ended' };
      if (s.pauseAtPeriodEnd)
        return {
          next: { ...s, status: 'paused', pausedAt: end, pauseAtPeriodEnd: false },
          events: ['subscription.paused'],
        };
      let next = s;
      if (s.pendingTerms) {
        const cadenceChanged =
          s.pendingTerms.cadence.interval !== s.terms.cadence.interval ||
          s.pendingTerms.cadence.intervalCount !== s.terms.cadence.intervalCount;
        next = { ...s, terms: s.pendingTerms, pendingTerms: null, anchor: cadenceChanged ? end : s.anchor };
      }
      const amount = amountOf(next.terms);
      const creditUsed = Math.min(next.creditMinor, amount);
      return {
        next,
        events: [],
        charge: {
          reason: 'subscription_cycle',
          amountMinor: amount - creditUsed,
          creditUsedMinor: creditUsed,
          periodStart: end,
        },
      };
    },
  },
  /**
   * A charge for the period from `periodStart` was paid (the renewal, a dunning retry, the buyer
   * by the e-mailed link, or a resume): the next period starts at `periodStart`, never at the
   * time of payment.
   */
  paid: {
    from: ['trialing', 'active', 'past_due', 'paused'],
    run(s: SubscriptionState, _now: Date, charge: ChargeEffect): MoveResult {
      const resumed = s.status === 'paused';
      const anchor = resumed ? charge.periodStart : s.anchor;
      return {
        next: {
          ...s,
          status: 'active',
          anchor,
          currentPeriodStart: charge.periodStart,
          currentPeriodEnd: periodAfter(anchor, s.terms.cadence, charge.periodStart),
          pastDueAt: null,
          unpaidFrom: null,
          retries: 0,
          nextRetryAt: null,
          pausedAt: null,
          resumesAt: null,
          creditMinor: s.creditMinor - charge.creditUsedMinor,
        },
        events: [resumed ? 'subscription.resumed' : 'subscription.renewed'],
      };
    },
  },
  /**
   * A charge failed (or needs the buyer to confirm it). The first failure makes it past due and
   * starts dunning; each failed retry schedules the next; the last one ends it.
   */
  failed: {
    from: ['trialing', 'active', 'past_due', 'paused'],
    run(s: SubscriptionState, now: Date, charge: ChargeEffect): MoveResult {
      if (s.status !== 'past_due') {
        // A resume that could not be paid leaves the new period unpaid, as a failed renewal does.
        const resumed = s.status === 'paused';
        return {
          next: {
            ...s,
            status: 'past_due',
            anchor: resumed ? charge.periodStart : s.anchor,
            pausedAt: null,
            resumesAt: null,
            pastDueAt: now,
            unpaidFrom: charge.periodStart,
            retries: 0,
            nextRetryAt: new Date(now.getTime() + RETRY_GAPS_DAYS[0] * DAY_MS),
          },
          events: resumed ? ['subscription.resumed', 'subscription.past_due'] : ['subscription.past_due'],
          mail: 'payment_failed',
        };
      }
      const retries = s.retries + 1;
      if (retries >= RETRY_GAPS_DAYS.length)
        return {
          next: {
            ...s,
            status: 'canceled',
            retries,
            nextRetryAt: null,
            endedAt: now,
            canceledAt: s.canceledAt ?? now,
            cancellationReason: 'payment_failed',
          },
          events: ['subscription.ended'],
          mail: 'ended',
        };
      return {
        next: { ...s, retries, nextRetryAt: new Date(now.getTime() + RETRY_GAPS_DAYS[retries]! * DAY_MS) },
        events: [],
      };
    },
  },
  /** A dunning retry fell due: charge the unpaid period again (same period start, next attempt). */
  retry: {
    from: ['past_due'],
    run(s: SubscriptionState): MoveResult {
      const amount = amountOf(s.terms);
      const creditUsed = Math.min(s.creditMinor, amount);
      return {
        next: s,
        events: [],
        charge: {
          reason: 'subscription_cycle',
          amountMinor: amount - creditUsed,
          creditUsedMinor: creditUsed,
          periodStart: s.unpaidFrom ?? s.currentPeriodEnd,
        },
      };
    },
  },
  /** Cancel at the period's end (a scheduled cancel) or now. */
  cancel: {
    from: ['trialing', 'active', 'past_due', 'paused'],
    run(s: SubscriptionState, now: Date, atPeriodEnd: boolean, reason: TCancellationReason): MoveResult {
      // Past due or paused, no paid period is running: "at period end" is now.
      if (atPeriodEnd && (s.status === 'trialing' || s.status === 'active')) {
        if (s.cancelAtPeriodEnd)
          throw new AppError(
            'invalid_transition',
            `This subscription is ${s.status} and already set to cancel at the period end.`,
          );
        return {
          next: { ...s, cancelAtPeriodEnd: true, pauseAtPeriodEnd: false, canceledAt: now, cancellationReason: reason },
          events: ['subscription.canceled'],
        };
      }
      return {
        next: {
          ...s,
          status: 'canceled',
          canceledAt: now,
          endedAt: now,
          cancellationReason: reason,
          cancelAtPeriodEnd: false,
          pauseAtPeriodEnd: false,
          nextRetryAt: null,
        },
        events: ['subscription.canceled', 'subscription.ended'],
        mail: 'ended',
      };
    },
  },
  /** Resume: undoes a scheduled cancel or pause; from paused, charges a new period starting now. */
  resume: {
    from: ['trialing', 'active', 'paused'],
    run(s: SubscriptionState, now: Date): MoveResult {
      if (s.status === 'paused') {
        const amount = amountOf(s.terms);
        const creditUsed = Math.min(s.creditMinor, amount);
        return {
          next: s,
          events: [],
          charge: {
            reason: 'subscription_cycle',
            amountMinor: amount - creditUsed,
            creditUsedMinor: creditUsed,
            // The time it was due to resume (`resumesAt`, set to the moment of a resume by hand):
            // the same period start however often the step is rerun, so one order and one charge.
            periodStart: s.resumesAt && s.resumesAt <= now ? s.resumesAt : now,
          },
        };
      }
      if (s.cancelAtPeriodEnd)
        return {
          next: { ...s, cancelAtPeriodEnd: false, canceledAt: null, cancellationReason: null },
          events: ['subscription.uncanceled'],
        };
      if (s.pauseAtPeriodEnd)
        return { next: { ...s, pauseAtPeriodEnd: false, resumesAt: null }, events: ['subscription.updated'] };
      throw refuse(s, 'resume');
    },
  },
  /** Pause from the current period's end; `resumesAt` resumes it by itself. */
  pause: {
    from: ['trialing', 'active'],
    run(s: SubscriptionState, _now: Date, resumesAt: Date | null): MoveResult {
      if (s.cancelAtPeriodEnd)
        throw new AppError('invalid_transition', 'This subscription is set to cancel; resume it before pausing.');
      if (resumesAt && resumesAt <= s.currentPeriodEnd)
        throw invalidField('resumesAt', 'Choose a resume date after the current period ends.');
      return { next: { ...s, pauseAtPeriodEnd: true, resumesAt }, events: ['subscription.updated'] };
    },
  },
  /**
   * Change plan or seats. Without proration it waits for the next period end. With proration it
   * applies now: the unused part of the period (by the second) is credited; the new terms are
   * charged for the rest of the period, or for a whole new period from now when the cadence
   * changes; a net credit goes to the balance. In a trial nothing was paid: it applies at once.
   */
  change: {
    from: ['trialing', 'active'],
    run(s: SubscriptionState, now: Date, terms: BillingTerms, prorate: boolean): MoveResult {
      if (s.status === 'trialing')
        return { next: { ...s, terms, pendingTerms: null }, events: ['subscription.updated'] };
      if (!prorate) return { next: { ...s, pendingTerms: terms }, events: ['subscription.updated'] };
      const second = 1000;
      const whole = Math.round((s.currentPeriodEnd.getTime() - s.currentPeriodStart.getTime()) / second);
      const unused = Math.max(0, Math.min(whole, Math.round((s.currentPeriodEnd.getTime() - now.getTime()) / second)));
      const credit = shareOf(amountOf(s.terms), unused, whole);
      const cadenceChanged =
        terms.cadence.interval !== s.terms.cadence.interval ||
        terms.cadence.intervalCount !== s.terms.cadence.intervalCount;
      const charge = cadenceChanged ? amountOf(terms) : shareOf(amountOf(terms), unused, whole);
      const net = charge - credit;
      const next: SubscriptionState = {
        ...s,
        terms,
        pendingTerms: null,
        creditMinor: s.creditMinor + Math.max(0, -net),
        ...(cadenceChanged
          ? { anchor: now, currentPeriodStart: now, currentPeriodEnd: boundary(now, terms.cadence, 1) }
          : {}),
      };
      return {
        next,
        events: ['subscription.updated'],
        ...(net > 0
          ? {
              charge: {
                reason: 'subscription_update' as const,
                amountMinor: net,
                creditUsedMinor: 0,
                periodStart: now,
              },
            }
          : {}),
      };
    },
  },
  /** The notices: the trial ends in 3 days; a plan of 6 months or more renews in 7. */
  notice: {
    from: ['trialing', 'active'],
    run(s: SubscriptionState): MoveResult {
      const next = { ...s, noticeFor: s.currentPeriodEnd };
      if (s.status === 'trialing') return { next, events: ['subscription.trial_will_end'], mail: 'trial_ending' };
      return { next, events: [], mail: 'upcoming_renewal' };
    },
  },
} as const;

export type MoveName = keyof typeof MOVES;
export type MoveArgs<M extends MoveName> = (typeof MOVES)[M]['run'] extends (
  s: SubscriptionState,
  now: Date,
  ...rest: infer R
) => MoveResult
  ? R
  : never;

/** Whether a subscription in `status` may take `move`. */
export function can(status: TSubscriptionStatus, move: MoveName): boolean {
  return (MOVES[move].from as readonly TSubscriptionStatus[]).includes(status);
}

/** Applies one move to a subscription's state; 409 `invalid_transition` when it does not apply. */
export function move<M extends MoveName>(s: SubscriptionState, name: M, now: Date, ...args: MoveArgs<M>): MoveResult {
  if (!can(s.status, name)) throw refuse(s, name.replace('_', ' '));
  const rule = MOVES[name] as { run(this: void, s: SubscriptionState, now: Date, ...rest: unknown[]): MoveResult };
  return rule.run(s, now, ...args);
}

/** What falls due next and when: the billing engine's schedule (null: nothing, ever). */
export function nextDue(
  s: SubscriptionState,
): { at: Date; move: 'expire' | 'notice' | 'period_end' | 'retry' | 'resume' } | null {
  switch (s.status) {
    case 'incomplete':
      return { at: new Date(s.createdAt.getTime() + INCOMPLETE_LIFETIME_MS), move: 'expire' };
    case 'trialing':
    case 'active': {
      const end = s.currentPeriodEnd;
      const wantsNotice =
        s.noticeFor?.getTime() !== end.getTime() &&
        !s.cancelAtPeriodEnd &&
        !s.pauseAtPeriodEnd &&
        (s.status === 'trialing' || cadenceMonths((s.pendingTerms ?? s.terms).cadence) >= 6);
      if (wantsNotice) {
        const noticeAt = new Date(end.getTime() - (s.status === 'trialing' ? TRIAL_NOTICE_MS : RENEWAL_NOTICE_MS));
        // A notice whose time has passed before the period began (a 2-day trial) is not sent.
        if (noticeAt > s.currentPeriodStart) return { at: noticeAt, move: 'notice' };
      }
      return { at: end, move: 'period_end' };
    }
    case 'past_due':
      return s.nextRetryAt ? { at: s.nextRetryAt, move: 'retry' } : null;
    case 'paused':
      return s.resumesAt ? { at: s.resumesAt, move: 'resume' } : null;
    default:
      return null;
  }
}

/**
 * When the subscription's licenses stop being valid (the license's `expiresAt`): the period's end,
 * the grace after a failed renewal, or the end; null while no access was ever given.
 */
export function accessEnd(s: SubscriptionState, graceDays: number): Date | null {
  switch (s.status) {
    case 'trialing':
    case 'active':
      return s.currentPeriodEnd;
    case 'past_due':
      return new Date(s.pastDueAt!.getTime() + graceDays * DAY_MS);
    case 'paused':
      return s.pausedAt;
    case 'canceled':
      return s.endedAt;
    default:
      return null;
  }
}
