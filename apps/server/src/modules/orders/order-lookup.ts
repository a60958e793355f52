/**
 * Finding one order: by the checkout token (or a renewal's pay link) that opens it, by the store
 * and the mode of the context, or locked for the caller's transaction (every change of an order
 * takes the lock first).
 */
import { safeEqual, sha256Hex } from '../../lib/crypto.js';
import { AppError } from '../../lib/errors.js';
import type { Config } from '../../config.js';
import type { ServiceContext } from '../request/context.js';
import { lockOnce } from '../request/transaction.js';
import { OrderSchema, type Order } from './orders.entities.js';
import { opensRenewalPayLink } from './renewal-pay-link.js';
import { selectOrderForUpdate } from './orders.repo.js';

/** `ORD-<n>`: an order's public number (order-views.ts publicOrderNumber). */
export const ORDER_NUMBER = /^ORD-(\d{1,18})$/;

/**
 * Whether `token` opens the order's checkout: its checkout token (stored as a hash) or, for a
 * renewal order, its pay link's token (renewal-pay-link.ts). Constant time.
 */
export function opensCheckout(config: Config, order: Order, token: string): boolean {
  return (
    (!!order.checkoutTokenHash && safeEqual(order.checkoutTokenHash, sha256Hex(token))) ||
    opensRenewalPayLink(config, order, token)
  );
}

/** The order a checkout token opens, or 404 (unknown order) / 403 (wrong token). */
export async function orderForToken(ctx: ServiceContext, orderId: string, token: string): Promise<Order> {
  const order = await ctx.em.findOne(OrderSchema, { id: orderId });
  if (!order) throw new AppError('not_found', 'Order not found.');
  if (!opensCheckout(ctx.deps.config, order, token)) {
    throw new AppError('store_forbidden', 'This link does not open this order.');
  }
  return order;
}

/**
 * The order with its row locked for the caller's transaction (every transition takes it first);
 * locked once per transaction (transaction.ts lockOnce).
 */
export async function lockOrder(ctx: ServiceContext, orderId: string): Promise<Order> {
  const order = await lockOnce(ctx, `order:${orderId}`, () => selectOrderForUpdate(ctx.em, orderId));
  if (!order) throw new AppError('not_found', 'Order not found.');
  return order;
}

/**
 * An order of the store, in the context's mode, by cuid or `ORD-<n>`; 404 when it belongs to any
 * other store or mode.
 */
export async function findStoreOrder(ctx: ServiceContext, input: { storeId: string; orderId: string }): Promise<Order> {
  const { storeId, orderId: ref } = input;
  const livemode = ctx.livemode;
  const number = ORDER_NUMBER.exec(ref)?.[1];
  const order = await ctx.em.findOne(
    OrderSchema,
    number ? { number: Number(number), store: storeId, livemode } : { id: ref, store: storeId, livemode },
  );
  if (!order) throw new AppError('not_found', 'Order not found.');
  return order;
}
