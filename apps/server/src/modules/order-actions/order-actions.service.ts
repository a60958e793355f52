/**
 * What sellers do to an order, shared by the merchant API and the dashboard: the note,
 * mark delivered, settle a manual payment, refund, cancel. Each returns the order as sellers
 * read it (seller-order.ts: the detail with its lines and the buyer's link).
 * (Above fulfilment, payments and coupons, which these actions combine.)
 */
import type { TSellerOrderDetail } from '@svc/schemas';
import { AppError, invalidField } from '../../lib/errors.js';
import type { ServiceContext } from '../request/context.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { releaseCoupons } from '../coupons/coupons.service.js';
import { markDelivered } from '../fulfilment/fulfilment.service.js';
import { transition } from '../orders/order-lifecycle.js';
import type { Order } from '../orders/orders.entities.js';
import { findStoreOrder, lockOrder } from '../orders/orders.service.js';
import { refundAtGateways } from '../payments/gateways.js';
import { refundOrder, settleOrder } from '../payments/settlement.js';
import { sellerOrderDetail } from './seller-order.js';

/**
 * PATCH an order: `note` sets the seller note; `markDelivered: true` marks it delivered
 * (400 on a pending order or one with nothing to deliver); `markDelivered: false` is a
 * no-op the API refuses with 400; a body with neither is 400.
 */
export async function updateOrder(
  ctx: ServiceContext,
  input: { storeId: string; orderId: string; note?: string | undefined; markDelivered?: boolean | undefined },
): Promise<TSellerOrderDetail> {
  if (input.markDelivered === false)
    throw invalidField('markDelivered', 'Only true is meaningful; false changes nothing.');
  if (input.note === undefined && input.markDelivered === undefined)
    throw invalidField('', 'Send note or markDelivered.');
  const { id } = await findStoreOrder(ctx.em, input.storeId, ctx.livemode, input.orderId);
  return ctx.em.transactional(async (em) => {
    const order = await lockOrder(em, id);
    const now = ctx.clock.now();
    if (input.markDelivered) await markDelivered(em, order, now);
    if (input.note !== undefined && input.note !== order.note) {
      order.note = input.note;
      order.updatedAt = now;
    }
    await em.flush();
    return sellerOrderDetail(ctx, order, em);
  });
}

export async function markOrderDelivered(
  ctx: ServiceContext,
  input: { storeId: string; orderId: string; content?: string | undefined },
): Promise<TSellerOrderDetail> {
  const { id } = await findStoreOrder(ctx.em, input.storeId, ctx.livemode, input.orderId);
  return ctx.em.transactional(async (em) => {
    const order = await lockOrder(em, id);
    await markDelivered(em, order, ctx.clock.now(), input.content);
    await em.flush();
    return sellerOrderDetail(ctx, order, em);
  });
}

/** The seller confirms a manual payment: the order settles for its full price. */
export async function markOrderPaid(
  ctx: ServiceContext,
  input: { storeId: string; orderId: string },
): Promise<TSellerOrderDetail> {
  const order = await findStoreOrder(ctx.em, input.storeId, ctx.livemode, input.orderId);
  if (order.status !== 'pending')
    throw new AppError('order_not_pending', `This order is ${order.status}, not awaiting payment.`);
  const outcome = await settleOrder(
    ctx.em.fork(),
    ctx.deps,
    order.id,
    { gateway: 'manual', providerRef: null, amountMinor: order.priceMinor, currency: order.currency },
    ctx.clock.now(),
  );
  if (outcome !== 'settled') throw new AppError('order_not_pending', 'This order is no longer awaiting payment.');
  const em = ctx.em.fork();
  return sellerOrderDetail(ctx, await findStoreOrder(em, input.storeId, ctx.livemode, order.id), em);
}

/**
 * The seller refunds: the money goes back at the gateway first (Stripe; 502 `gateway_error` with
 * nothing changed when it refuses), then the order is refunded with the gateway's refund id. A
 * refunded order answers as it is, with no second gateway call.
 */
export async function refundStoreOrder(
  ctx: ServiceContext,
  input: { storeId: string; orderId: string },
): Promise<TSellerOrderDetail> {
  const order = await findStoreOrder(ctx.em, input.storeId, ctx.livemode, input.orderId);
  const now = ctx.clock.now();
  const refunds = await refundAtGateways(ctx.em, order, { config: ctx.deps.config, log: ctx.deps.log, now });
  const em = ctx.em.fork();
  return sellerOrderDetail(ctx, await refundOrder(em, order.id, now, refunds), em);
}

export async function cancelStoreOrder(
  ctx: ServiceContext,
  input: { storeId: string; orderId: string },
): Promise<TSellerOrderDetail> {
  const { id } = await findStoreOrder(ctx.em, input.storeId, ctx.livemode, input.orderId);
  const em = ctx.em.fork();
  return sellerOrderDetail(ctx, await cancelOrder(em, id, ctx.clock.now()), em);
}

/** The seller cancels an order that was never paid; its coupon use is given back. */
export async function cancelOrder(em: EntityManager, orderId: string, now: Date): Promise<Order> {
  return em.transactional(async (tx) => {
    const order = await lockOrder(tx, orderId);
    await transition(tx, order, 'cancel', now, { releaseCoupons });
    return order;
  });
}
