/** How a subscription's cadence and next charge read, the same on the list and the page. */
import type { RouterOutputs } from '../../api';

type Subscription = RouterOutputs['subscriptions']['get'];
type Cadence = Pick<Subscription, 'interval' | 'intervalCount'>;

const ADVERB: Record<Cadence['interval'], string> = { day: 'Daily', week: 'Weekly', month: 'Monthly', year: 'Yearly' };

/** `Monthly`, `Every 3 months`; short: what an amount is per (`month`, `3 months`). */
export function cadenceLabel(cadence: Cadence, short = false): string {
  const per = cadence.intervalCount === 1 ? cadence.interval : `${cadence.intervalCount} ${cadence.interval}s`;
  if (short) return per;
  return cadence.intervalCount === 1 ? ADVERB[cadence.interval] : `Every ${per}`;
}

/**
 * When the subscription next charges, or why it will not: `Ends on <date>`, `Pauses on <date>`,
 * `Ended <date>`, `Paused`.
 */
export function chargeLine(subscription: Subscription, date: (iso: string | null) => string): string {
  switch (subscription.status) {
    case 'canceled':
      return `Ended ${date(subscription.endedAt)}`;
    case 'incomplete':
    case 'incomplete_expired':
      return 'Not paid yet';
    case 'paused':
      return subscription.resumesAt ? `Paused until ${date(subscription.resumesAt)}` : 'Paused';
    case 'past_due':
      return `Past due since ${date(subscription.pastDueAt)}`;
    default:
      if (subscription.cancelAtPeriodEnd) return `Ends on ${date(subscription.currentPeriodEnd)}`;
      if (subscription.pauseAtPeriodEnd)
        return `Pauses on ${date(subscription.currentPeriodEnd)}${subscription.resumesAt ? ` until ${date(subscription.resumesAt)}` : ''}`;
      return date(subscription.currentPeriodEnd);
  }
}
