/** Buyers signing in to see their orders in one store. */
import { z } from 'zod';
import { ZEmail, ZId, ZTimestamp } from './common.js';
import { ZBuyerOrder, ZOrderRef } from './orders.js';
import { queryInt } from './query.js';

export const ZCustomerAuthStart = z.strictObject({ storeId: ZId, email: ZEmail });
export const ZCustomerAuthVerify = z.strictObject({
  storeId: ZId,
  email: ZEmail,
  code: z.string().regex(/^\d{6}$/, 'the 6-digit code from the e-mail'),
});

export const ZCustomer = z.object({
  id: z.string(),
  storeId: z.string(),
  email: z.string(),
  createdAt: ZTimestamp,
});
export type TCustomer = z.infer<typeof ZCustomer>;

export const ZCustomerSession = z.object({ customer: ZCustomer });

export const ZCustomerOrdersQuery = z.strictObject({
  limit: queryInt(z.number().int().min(1).max(100)).optional(),
  cursor: z.string().min(1).max(200).optional(),
});
export const ZCustomerOrderList = z.object({
  orders: z.array(ZBuyerOrder),
  hasMore: z.boolean(),
  nextCursor: z.string().nullable(),
});
export const ZCustomerOrderInput = z.strictObject({ orderId: ZOrderRef });
