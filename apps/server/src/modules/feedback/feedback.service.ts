/**
 * Feedback: one rating per completed order, written by the buyer with the order's checkout
 * token, and the store's public list (newest first, keyset-paged, never the buyer).
 */
import { raw } from '@mikro-orm/core';
import type { TCreateFeedbackInput, TFeedback, TFeedbackList, TListFeedbackQuery } from '@svc/schemas';
import { cursorScope, decodeCursor, keysetPage } from '../../lib/cursor.js';
import { AppError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { ServiceContext } from '../request/context.js';
import { findSellingStore } from '../stores/selling-store.js';
import { orderForToken } from '../orders/order-lookup.js';
import { FeedbackSchema } from './feedback.entities.js';
import { selectFeedbackPage, type FeedbackRow } from './feedback.repo.js';
import { iso } from '../../lib/timestamps.js';

export const DEFAULT_FEEDBACK_PAGE = 20;
const ALREADY_RATED = 'This order already has feedback.';

function rowToFeedback(row: FeedbackRow): TFeedback {
  return {
    id: row.id,
    rating: Number(row.rating),
    text: row.text,
    createdAt: iso(row.created_at),
    productName: row.product_name,
  };
}

/** One page, newest first: `(created_at, id) < cursor`, served by the (store, created_at desc, id desc) index. */
export async function listFeedback(ctx: ServiceContext, input: TListFeedbackQuery): Promise<TFeedbackList> {
  const key = ctx.deps.config.encryptionKey;
  const store = await findSellingStore(ctx, input.storeId);
  // Sealed with the store's id, so a cursor pages the store by id or by subdomain alike.
  const scope = cursorScope('feedback', { storeId: store.id, livemode: ctx.livemode });
  const position = input.cursor ? decodeCursor(key, scope, input.cursor) : undefined;
  const limit = input.limit ?? DEFAULT_FEEDBACK_PAGE;
  const rows = await selectFeedbackPage(ctx.em, store.id, ctx.livemode, position, limit + 1);
  const summary = await ctx.em
    .createQueryBuilder(FeedbackSchema, 'f')
    .select([raw('count(*) as count'), raw('avg(f.rating) as average')])
    .where({ store: store.id, order: { livemode: ctx.livemode } })
    .execute<{ count: string; average: string | null }>('get');
  const { page, hasMore, nextCursor } = keysetPage(key, scope, rows, limit, (row) => row.created_us);
  return {
    feedback: page.map(rowToFeedback),
    hasMore,
    nextCursor,
    averageRating: summary?.average == null ? null : Math.round(Number(summary.average) * 100) / 100,
    count: Number(summary?.count ?? 0),
  };
}

/** The buyer rates a completed order once; the unique (order) constraint settles a race. */
export async function createFeedback(ctx: ServiceContext, input: TCreateFeedbackInput): Promise<TFeedback> {
  const order = await orderForToken(ctx, input.orderId, input.token);
  if (order.status !== 'completed') throw new AppError('order_not_paid', 'Feedback opens once the order is completed.');
  if (await ctx.em.count(FeedbackSchema, { order: order.id })) throw new AppError('conflict', ALREADY_RATED);
  const feedback = ctx.em.create(FeedbackSchema, {
    id: newId(),
    store: order.store.id,
    order: order.id,
    rating: input.rating,
    text: input.text,
    createdAt: ctx.clock.now(),
  });
  try {
    await ctx.em.flush();
  } catch (error) {
    if ((error as { name?: unknown } | null)?.name === 'UniqueConstraintViolationException') {
      throw new AppError('conflict', ALREADY_RATED, { cause: error });
    }
    throw error;
  }
  return {
    id: feedback.id,
    rating: feedback.rating,
    text: feedback.text,
    createdAt: feedback.createdAt.toISOString(),
    productName: order.productName,
  };
}
