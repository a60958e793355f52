/**
 * How a recurring product's plans read to a buyer (docs/architecture.md, Products and plans): the
 * price per period (`$9.00 / month`, `$25.00 every 3 months`), the saving of a yearly plan against
 * twelve months of the monthly one (`save 17 %`), the trial (`7-day free trial`), and what a
 * checkout charges today and next (`Today: $0.00 · then $9.00 on 5 Dec 2026, monthly`). Amounts in
 * minor units, formatted by lib/money.ts, so every text is exact. Pure: the storefront's pages, the
 * test pay page and their tests share it.
 */
import type { TPlanInterval } from '@svc/schemas';
import { formatMoney } from '../../lib/money.js';

/** What the texts read of a plan: its period and its price in minor units. */
export interface PlanTerms {
  interval: TPlanInterval;
  intervalCount: number;
  priceMinor: number;
  trialDays: number;
}

/** `month`, `3 months`: what "per" is followed by. */
export const periodWords = (plan: Pick<PlanTerms, 'interval' | 'intervalCount'>): string =>
  plan.intervalCount === 1 ? plan.interval : `${plan.intervalCount} ${plan.interval}s`;

const ADVERBS: Record<TPlanInterval, string> = { day: 'daily', week: 'weekly', month: 'monthly', year: 'yearly' };

/** `monthly`, `yearly`, `every 3 months`: how often the charge comes back. */
export const cadenceWords = (plan: Pick<PlanTerms, 'interval' | 'intervalCount'>): string =>
  plan.intervalCount === 1 ? ADVERBS[plan.interval] : `every ${periodWords(plan)}`;

/** A plan's price and period: `$9.00 / month`, `$25.00 every 3 months`. */
export function planPriceText(plan: PlanTerms, currency: string): string {
  const amount = formatMoney(plan.priceMinor, currency);
  return plan.intervalCount === 1 ? `${amount} / ${plan.interval}` : `${amount} every ${periodWords(plan)}`;
}

/**
 * The whole percent a yearly plan saves against twelve payments of the monthly plan among `plans`
 * (`(12 x monthly - yearly) / (12 x monthly)`, rounded half up); null for any other plan, without a
 * monthly plan, or when the yearly one saves nothing.
 */
export function yearlySaving(plan: PlanTerms, plans: readonly PlanTerms[]): number | null {
  if (plan.interval !== 'year' || plan.intervalCount !== 1) return null;
  const monthly = plans.find((other) => other.interval === 'month' && other.intervalCount === 1);
  if (!monthly || monthly.priceMinor <= 0) return null;
  const twelve = 12 * monthly.priceMinor;
  // Integers throughout: the percent's rounding is the only one.
  const percent = Math.floor(((twelve - plan.priceMinor) * 200 + twelve) / (2 * twelve));
  return plan.priceMinor < twelve && percent > 0 ? percent : null;
}

/** A plan as its choice is labelled: `$90.00 / year · save 17 %`. */
export function planLabel(plan: PlanTerms, plans: readonly PlanTerms[], currency: string): string {
  const saving = yearlySaving(plan, plans);
  return `${planPriceText(plan, currency)}${saving === null ? '' : ` · save ${saving} %`}`;
}

/** A plan's trial, `7-day free trial`, or '' without one. */
export const trialText = (plan: Pick<PlanTerms, 'trialDays'>): string =>
  plan.trialDays > 0 ? `${plan.trialDays}-day free trial` : '';

const DAY = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' });

/** `5 Dec 2026`, in UTC. */
export const shortDate = (date: Date): string => DAY.format(date);

/** What a recurring order charges when paid now, and what comes next. */
export interface ChargesAhead {
  todayMinor: number;
  nextMinor: number;
  nextAt: Date;
  interval: TPlanInterval;
  intervalCount: number;
}

/** `Today: $0.00 · then $9.00 on 5 Dec 2026, monthly`. */
export function chargesText(charges: ChargesAhead, currency: string): string {
  return `Today: ${formatMoney(charges.todayMinor, currency)} · then ${formatMoney(charges.nextMinor, currency)} on ${shortDate(charges.nextAt)}, ${cadenceWords(charges)}`;
}
