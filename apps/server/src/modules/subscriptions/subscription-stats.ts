/**
 * Recurring figures for the dashboard (docs/decisions.md, "MRR"): Home's MRR, active and churned
 * counts and the 12-month MRR history, and the product page's live subscriptions per plan. Both
 * are aggregates in the database (subscriptions.repo.ts), never a walk over the rows.
 */
import type { TPlanSubscriptionCounts, TSubscriptionStats } from '@svc/schemas';
import { AppError } from '../../lib/errors.js';
import { minorToAmount } from '../../lib/money.js';
import { ProductSchema } from '../catalog/catalog.entities.js';
import type { ServiceContext } from '../request/context.js';
import { StoreSchema } from '../stores/stores.entities.js';
import {
  insertKeptMrrMonths,
  MRR_SCALE,
  selectKeptMrrMonths,
  selectMrrBuckets,
  selectPlanSubscriptionCounts,
  selectSubscriptionFigures,
} from './subscriptions.repo.js';

const DAY_MS = 86_400_000;
/** The churn window, and the months the history shows (the current one last). */
export const CHURN_DAYS = 30;
export const HISTORY_MONTHS = 12;

/** A scaled sum (subscriptions.repo.ts MRR_SCALE) in minor units, rounded half up once. */
function scaledToMinor(scaled: bigint): number {
  return Number((scaled * 2n + MRR_SCALE) / (MRR_SCALE * 2n));
}

/** `YYYY-MM` of the UTC month `months` after (negative: before) the one `at` falls in, and its first instant. */
function utcMonth(at: Date, months: number): { label: string; start: Date } {
  const start = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + months, 1));
  return { label: start.toISOString().slice(0, 7), start };
}

export async function subscriptionStats(ctx: ServiceContext, input: { storeId: string }): Promise<TSubscriptionStats> {
  const store = await ctx.em.findOne(StoreSchema, { id: input.storeId }, { fields: ['currency'] });
  if (!store) throw new AppError('not_found', 'Store not found.');
  const { currency } = store;
  const now = ctx.clock.now();
  const filter = { storeId: input.storeId, livemode: ctx.livemode, currency };
  const figures = await selectSubscriptionFigures(ctx.em, {
    ...filter,
    churnFrom: new Date(now.getTime() - CHURN_DAYS * DAY_MS),
  });
  // The past months' MRR is taken at their ends: the first instants of the 11 months after them.
  const past = Array.from({ length: HISTORY_MONTHS - 1 }, (_, i) => utcMonth(now, i - (HISTORY_MONTHS - 1)));
  const scaledByMonth = await pastMonthsMrr(ctx, filter, past);
  const monthly = past.map((month) => ({
    month: month.label,
    mrr: minorToAmount(scaledToMinor(scaledByMonth.get(month.label)!), currency),
  }));
  const mrr = minorToAmount(scaledToMinor(figures.mrrScaled), currency);
  monthly.push({ month: utcMonth(now, 0).label, mrr });
  return {
    currency,
    mrr,
    activeSubscriptions: figures.active,
    churned30Days: figures.churned,
    monthly,
  };
}

/**
 * The MRR at the ends of `months` (past ones), scaled. A live store's are kept
 * (subscription_mrr_month) once worked out: only the months not kept yet are worked out, from the
 * buckets of the store's subscriptions, and kept. A test store's are worked out every time (a test
 * subscription's clock may run past the wall, so its past can still change).
 */
async function pastMonthsMrr(
  ctx: ServiceContext,
  filter: { storeId: string; livemode: boolean; currency: string },
  months: Array<{ label: string; start: Date }>,
): Promise<Map<string, bigint>> {
  const day = (month: { label: string }) => `${month.label}-01`;
  const kept = filter.livemode
    ? await selectKeptMrrMonths(ctx.em, { ...filter, months: months.map(day) })
    : new Map<string, bigint>();
  const missing = months.filter((month) => !kept.has(day(month)));
  const scaled = new Map(months.filter((month) => kept.has(day(month))).map((m) => [m.label, kept.get(day(m))!]));
  if (missing.length === 0) return scaled;
  const boundaries = missing.map((month) => utcMonth(month.start, 1).start);
  const buckets = await selectMrrBuckets(ctx.em, { ...filter, boundaries });
  const worked = missing.map((month, index) => {
    const k = index + 1;
    let sum = 0n;
    for (const bucket of buckets) {
      if (bucket.started < k && (bucket.stopped === null || k <= bucket.stopped)) sum += bucket.scaled;
    }
    scaled.set(month.label, sum);
    return { month: day(month), scaled: sum };
  });
  if (filter.livemode) await insertKeptMrrMonths(ctx.em, filter.storeId, filter.currency, worked);
  return scaled;
}

/** The product's plans that have live subscriptions, with how many (404 for another store's or mode's product). */
export async function planSubscriptionCounts(
  ctx: ServiceContext,
  input: { storeId: string; productId: string },
): Promise<TPlanSubscriptionCounts> {
  const product = await ctx.em.findOne(
    ProductSchema,
    { id: input.productId, store: input.storeId, livemode: ctx.livemode, deletedAt: null },
    { fields: ['id'] },
  );
  if (!product) throw new AppError('not_found', 'Product not found.');
  return { plans: await selectPlanSubscriptionCounts(ctx.em, product.id, ctx.livemode) };
}
