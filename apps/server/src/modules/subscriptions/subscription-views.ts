/**
 * How a subscription reads and what its moves see: the row as the machine's plain state (and
 * back), and the view every audience shares (merchant API, dashboard, events, the buyer).
 */
import type { TSubscription } from '@svc/schemas';
import { minorToAmount } from '../../lib/money.js';
import { iso } from '../../lib/timestamps.js';
import { publicOrderNumber } from '../orders/order-views.js';
import { amountOf, nextDue, type BillingTerms, type SubscriptionState } from './subscription-machine.js';
import type { StoredTerms, Subscription } from './subscriptions.entities.js';

function termsOf(stored: StoredTerms): BillingTerms {
  return {
    planId: stored.planId,
    cadence: { interval: stored.interval, intervalCount: stored.intervalCount },
    unitPriceMinor: stored.unitPriceMinor,
    quantity: stored.quantity,
    discountMinor: stored.discountMinor,
  };
}

function storedOf(terms: BillingTerms): StoredTerms {
  return {
    planId: terms.planId,
    interval: terms.cadence.interval,
    intervalCount: terms.cadence.intervalCount,
    unitPriceMinor: terms.unitPriceMinor,
    quantity: terms.quantity,
    discountMinor: terms.discountMinor,
  };
}

/** The row as the table of moves reads it. */
export function stateOf(row: Subscription): SubscriptionState {
  return {
    status: row.status,
    terms: termsOf(row),
    anchor: row.anchor,
    currentPeriodStart: row.currentPeriodStart,
    currentPeriodEnd: row.currentPeriodEnd,
    trialEnd: row.trialEnd ?? null,
    cancelAtPeriodEnd: row.cancelAtPeriodEnd,
    pauseAtPeriodEnd: row.pauseAtPeriodEnd,
    canceledAt: row.canceledAt ?? null,
    endedAt: row.endedAt ?? null,
    pausedAt: row.pausedAt ?? null,
    resumesAt: row.resumesAt ?? null,
    pastDueAt: row.pastDueAt ?? null,
    retries: row.retries,
    unpaidFrom: row.unpaidFrom ?? null,
    nextRetryAt: row.nextRetryAt ?? null,
    cancellationReason: row.cancellationReason ?? null,
    creditMinor: row.creditMinor,
    pendingTerms: row.pendingTerms ? termsOf(row.pendingTerms) : null,
    noticeFor: row.noticeFor ?? null,
    createdAt: row.createdAt,
  };
}

/** Writes a move's next state onto the row, with the time its next move falls due. */
export function writeState(row: Subscription, state: SubscriptionState, now: Date): void {
  Object.assign(row, {
    status: state.status,
    ...storedOf(state.terms),
    anchor: state.anchor,
    currentPeriodStart: state.currentPeriodStart,
    currentPeriodEnd: state.currentPeriodEnd,
    trialEnd: state.trialEnd,
    cancelAtPeriodEnd: state.cancelAtPeriodEnd,
    pauseAtPeriodEnd: state.pauseAtPeriodEnd,
    canceledAt: state.canceledAt,
    endedAt: state.endedAt,
    pausedAt: state.pausedAt,
    resumesAt: state.resumesAt,
    pastDueAt: state.pastDueAt,
    retries: state.retries,
    unpaidFrom: state.unpaidFrom,
    nextRetryAt: state.nextRetryAt,
    cancellationReason: state.cancellationReason,
    creditMinor: state.creditMinor,
    pendingTerms: state.pendingTerms ? storedOf(state.pendingTerms) : null,
    noticeFor: state.noticeFor,
    dueAt: nextDue(state)?.at ?? null,
    updatedAt: now,
  });
}

/** The subscription as the API answers it. */
export function toSubscriptionView(row: Subscription): TSubscription {
  const money = (minor: number) => minorToAmount(minor, row.currency);
  const state = stateOf(row);
  const when = (value: Date | null | undefined) => (value ? iso(value) : null);
  return {
    id: row.id,
    storeId: row.store.id,
    livemode: row.livemode,
    productId: row.productId ?? null,
    productName: row.productName,
    planId: row.planId,
    interval: row.interval,
    intervalCount: row.intervalCount,
    quantity: row.quantity,
    unitPrice: money(row.unitPriceMinor),
    amount: money(amountOf(state.terms)),
    creditBalance: money(row.creditMinor),
    currency: row.currency,
    status: row.status,
    customerEmail: row.customerEmail,
    paymentMethod: row.paymentMethod,
    currentPeriodStart: iso(row.currentPeriodStart),
    currentPeriodEnd: iso(row.currentPeriodEnd),
    trialEnd: when(row.trialEnd),
    cancelAtPeriodEnd: row.cancelAtPeriodEnd,
    canceledAt: when(row.canceledAt),
    endedAt: when(row.endedAt),
    pauseAtPeriodEnd: row.pauseAtPeriodEnd,
    pausedAt: when(row.pausedAt),
    resumesAt: when(row.resumesAt),
    pastDueAt: when(row.pastDueAt),
    cancellationReason: row.cancellationReason ?? null,
    cancellationComment: row.cancellationComment ?? null,
    pendingUpdate: state.pendingTerms
      ? {
          planId: state.pendingTerms.planId,
          quantity: state.pendingTerms.quantity,
          amount: money(amountOf(state.pendingTerms)),
        }
      : null,
    latestOrderId: row.latestOrderNumber == null ? null : publicOrderNumber(row.latestOrderNumber),
    clockTime: when(row.clockTime),
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}
