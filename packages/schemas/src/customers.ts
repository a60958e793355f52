/** Buyers signing in to see their orders in one store. */
import { z } from 'zod';
import { ZCount, ZEmail, ZId, ZTimestamp, ZLivemode } from './common.js';
import { ZBuyerOrder, ZOrderRef } from './orders.js';
import { queryInt } from './query.js';

/**
 * The customer area of one mode: `live` (default) for the store's buyers; `test` for the seller's
 * test orders and subscriptions (their codes stay in the development mailbox, as all test mail).
 */
export const ZCustomerMode = z.enum(['live', 'test']).meta({
  description: "`live` (default), or `test`: the buyer's test orders and subscriptions; its code is never sent",
});
export const ZCustomerAuthStart = z.strictObject({ storeId: ZId, email: ZEmail, mode: ZCustomerMode.optional() });
export const ZCustomerAuthVerify = z.strictObject({
  storeId: ZId,
  email: ZEmail,
  mode: ZCustomerMode.optional(),
  code: z.string().regex(/^\d{6}$/, 'Enter the 6-digit code from the e-mail.'),
});

export const ZCustomer = z.object({
  id: z.string(),
  storeId: z.string(),
  livemode: ZLivemode,
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

/**
 * The seller's list of the store's customers (every address that bought, and every buyer who
 * signed in to its customer area), by address. The cursor holds an address, so it runs longer.
 */
export const ZListCustomersQuery = z.strictObject({
  storeId: ZId,
  limit: queryInt(z.number().int().min(1).max(100)).optional(),
  cursor: z.string().min(1).max(600).optional(),
  search: z
    .string()
    .trim()
    .min(1)
    .max(320)
    .optional()
    .meta({ description: 'Customers whose e-mail address starts with this (case-insensitive)' }),
});
export type TListCustomersQuery = z.infer<typeof ZListCustomersQuery>;

export const ZSellerCustomer = z.object({
  id: z.string().nullable().meta({
    description: "The buyer's customer-area account; null for a buyer who never signed in to it",
  }),
  livemode: ZLivemode,
  email: z.string(),
  createdAt: ZTimestamp.meta({ description: 'When the store first saw the buyer: their first order or their sign-in' }),
  orders: ZCount.meta({
    description: 'Orders of this e-mail address in the store that count as revenue (paid, not refunded)',
  }),
  spent: z
    .number()
    .meta({ description: 'Their prices in the store currency (orders in another currency are left out)' }),
  lastOrderAt: ZTimestamp.nullable().meta({
    description: "The buyer's last order in the store (refunded ones too); null for a buyer who only signed in",
  }),
});
export type TSellerCustomer = z.infer<typeof ZSellerCustomer>;

export const ZCustomerList = z.object({
  customers: z.array(ZSellerCustomer),
  limit: ZCount,
  hasMore: z.boolean(),
  nextCursor: z.string().nullable(),
});
export type TCustomerList = z.infer<typeof ZCustomerList>;
