/**
 * Pending orders expire: an order not paid within the checkout lifetime becomes `expired` (the
 * lifecycle's `expire`, orders) and the coupon uses those orders held are given back (coupons).
 * A scheduled job of `svc serve` (jobs.ts).
 */
import { releaseCoupons } from '../modules/coupons/coupons.service.js';
import { expireStale } from '../modules/orders/order-lifecycle.js';
import type { ServiceContext } from '../modules/request/context.js';

/**
 * Pending orders past the checkout lifetime become `expired`; their coupon uses are given back.
 * Returns how many expired. Transaction: one (expireStale's), joined when the context holds one.
 */
export async function expirePendingOrders(ctx: ServiceContext): Promise<number> {
  const now = ctx.clock.now();
  const createdBefore = new Date(now.getTime() - ctx.deps.config.checkoutLifetimeMs);
  return expireStale(ctx, { createdBefore, now }, { releaseCoupons });
}
