/** Buyers' ratings of completed orders, shown publicly on the store. */
import { z } from 'zod';
import { ZBuyerToken, ZCount, ZId, ZTimestamp } from './common.js';
import { queryInt } from './query.js';

/** The public view: never who wrote it. */
export const ZFeedback = z.object({
  id: z.string(),
  rating: z.number().int().min(1).max(5),
  text: z.string(),
  createdAt: ZTimestamp,
  /** The order's product name, as sold. */
  productName: z.string(),
});
export type TFeedback = z.infer<typeof ZFeedback>;

/** `GET /api/feedback`: the store by id or subdomain; newest first. */
export const ZListFeedbackQuery = z.strictObject({
  storeId: z.string().min(1).max(63),
  limit: queryInt(z.number().int().min(1).max(100)).optional(),
  cursor: z.string().min(1).max(200).optional(),
});
export type TListFeedbackQuery = z.infer<typeof ZListFeedbackQuery>;

export const ZFeedbackList = z.object({
  feedback: z.array(ZFeedback),
  hasMore: z.boolean(),
  nextCursor: z.string().nullable(),
  /** Over all of the store's feedback (two decimals), null when there is none. */
  averageRating: z.number().nullable(),
  count: ZCount,
});
export type TFeedbackList = z.infer<typeof ZFeedbackList>;

/** `POST /api/feedback/create`: the order opens with its checkout token. */
export const ZCreateFeedbackInput = z.strictObject({
  orderId: ZId,
  token: ZBuyerToken,
  rating: z.number().int().min(1).max(5),
  text: z
    .string()
    .trim()
    .min(1)
    .max(2000)
    .refine(
      // eslint-disable-next-line no-control-regex -- it matches control characters on purpose, to refuse them
      (value) => !/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/.test(value),
      'control characters are not allowed',
    ),
});
export type TCreateFeedbackInput = z.infer<typeof ZCreateFeedbackInput>;
