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
  MRR_SCALE,
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
  const boundaries = past.map((month) => utcMonth(month.start, 1).start);
  const buckets = await selectMrrBuckets(ctx.em, { ...filter, boundaries });
  const monthly = past.map((month, index) => {
    const k = index + 1;
    let scaled = 0n;
    for (const bucket of buckets) {
      if (bucket.started < k && (bucket.stopped === null || k <= bucket.stopped)) scaled += bucket.scaled;
    }
    return { month: month.label, mrr: minorToAmount(scaledToMinor(scaled), currency) };
  });
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
