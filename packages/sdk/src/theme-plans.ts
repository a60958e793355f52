/**
 * How a recurring product's plans read to a buyer, for a theme to show them as the hosted
 * storefront does: `$9.00 / month`, `$90.00 / year · save 17 %` (a yearly plan against twelve
 * payments of the monthly one, a whole percent, only when positive), `7-day free trial`. Amounts
 * are compared in the currency's minor units, so the saving is exact.
 */
import type { ProcedureOutput as Out } from './transport.js';

/** A recurring product's plan as the store offers it (active ones only): `[]` on a one-time product. */
export type StorefrontPlan = Out<'catalog.products'>['products'][number]['plans'][number];

type Terms = Pick<StorefrontPlan, 'interval' | 'intervalCount' | 'price'>;

const formats = new Map<string, Intl.NumberFormat>();
function currencyFormat(currency: string): Intl.NumberFormat {
  let format = formats.get(currency);
  if (!format) {
    format = new Intl.NumberFormat('en', { style: 'currency', currency });
    formats.set(currency, format);
  }
  return format;
}

/** An amount as a buyer reads it: `$9.00`, `¥900`. */
export function formatPrice(amount: number, currency: string): string {
  try {
    return currencyFormat(currency).format(amount);
  } catch {
    return `${amount} ${currency}`;
  }
}

/** The decimal places of a currency's amounts: 2 for USD, 0 for JPY. */
function placesOf(currency: string): number {
  try {
    return currencyFormat(currency).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    // An unknown code: two places, as most currencies have.
    return 2;
  }
}

/** An amount in the currency's minor units (9.99 USD is 999, 900 JPY is 900). */
export function minor(amount: number, currency: string): number {
  return Math.round(amount * 10 ** placesOf(currency));
}

/** Minor units as the amount the API writes (999 USD cents is 9.99). */
export function fromMinor(units: number, currency: string): number {
  return units / 10 ** placesOf(currency);
}

/** `month`, `3 months`: what "per" is followed by. */
const periodWords = (plan: Pick<Terms, 'interval' | 'intervalCount'>): string =>
  plan.intervalCount === 1 ? plan.interval : `${plan.intervalCount} ${plan.interval}s`;

/** A plan's price and period: `$9.00 / month`, `$25.00 every 3 months`. */
export function planPriceText(plan: Terms, currency: string): string {
  const amount = formatPrice(plan.price, currency);
  return plan.intervalCount === 1 ? `${amount} / ${plan.interval}` : `${amount} every ${periodWords(plan)}`;
}

/**
 * The whole percent a yearly plan saves against twelve payments of the monthly plan among
 * `plans`, rounded half up; null for any other plan, without a monthly plan, or when it saves nothing.
 */
export function yearlySaving(plan: Terms, plans: readonly Terms[], currency: string): number | null {
  if (plan.interval !== 'year' || plan.intervalCount !== 1) return null;
  const monthly = plans.find((other) => other.interval === 'month' && other.intervalCount === 1);
  if (!monthly) return null;
  const twelve = 12 * minor(monthly.price, currency);
  const yearly = minor(plan.price, currency);
  if (twelve <= 0 || yearly >= twelve) return null;
  const percent = Math.floor(((twelve - yearly) * 200 + twelve) / (2 * twelve));
  return percent > 0 ? percent : null;
}

/** A plan as a choice is labelled: `$90.00 / year · save 17 %`. */
export function planLabel(plan: Terms, plans: readonly Terms[], currency: string): string {
  const saving = yearlySaving(plan, plans, currency);
  return `${planPriceText(plan, currency)}${saving === null ? '' : ` · save ${saving} %`}`;
}

/** A plan's trial, `7-day free trial`, or '' without one. */
export const trialText = (plan: Pick<StorefrontPlan, 'trialDays'>): string =>
  plan.trialDays > 0 ? `${plan.trialDays}-day free trial` : '';
