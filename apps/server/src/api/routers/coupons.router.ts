/**
 * Coupons: the resource for merchants (/merchant/v1, Bearer key with coupon scopes, capped by
 * manageProducts) and the dashboard (session with manageProducts), built once; and the buyer's check.
 */
import {
  ZCoupon,
  ZCouponIdInput,
  ZCouponList,
  ZCouponValidation,
  ZCreateCouponInput,
  ZStoreIdInput,
  ZUpdateCouponInput,
  ZValidateCouponInput,
} from '@svc/schemas';
import { z } from 'zod';
import {
  merchantProcedure,
  publicProcedure,
  router,
  storeProcedure,
  type ResourceSurface,
} from '../../trpc/procedures.js';
import { testModeAccess } from '../../modules/access/test-mode.js';
import {
  createCoupon,
  deleteCoupon,
  getCoupon,
  listCoupons,
  updateCoupon,
  validateCoupon,
} from '../../modules/coupons/coupons.service.js';

/** The coupon resource, built once for merchants (/merchant/v1, coupon scopes) and the dashboard. */
function couponRoutes({ read, write, base, tags }: ResourceSurface) {
  const one = `${base}/{couponId}` as const;
  return {
    create: write
      .meta({
        openapi: { method: 'POST', path: base, tags, summary: 'Create a coupon' },
        successStatus: 201,
        errors: ['conflict'],
      })
      .input(ZCreateCouponInput)
      .output(ZCoupon)
      .mutation(({ ctx, input }) => createCoupon(ctx, input)),
    list: read
      .meta({ openapi: { method: 'GET', path: base, tags, summary: "The store's coupons" }, errors: [] })
      .input(ZStoreIdInput)
      .output(ZCouponList)
      .query(async ({ ctx, input }) => ({ coupons: await listCoupons(ctx, input) })),
    get: read
      .meta({ openapi: { method: 'GET', path: one, tags, summary: 'One coupon' }, errors: ['not_found'] })
      .input(ZCouponIdInput)
      .output(ZCoupon)
      .query(({ ctx, input }) => getCoupon(ctx, input)),
    update: write
      .meta({
        openapi: { method: 'PATCH', path: one, tags, summary: 'Change a coupon' },
        errors: ['not_found', 'conflict'],
      })
      .input(ZUpdateCouponInput)
      .output(ZCoupon)
      .mutation(({ ctx, input }) => updateCoupon(ctx, input)),
    delete: write
      .meta({
        openapi: { method: 'DELETE', path: one, tags, summary: 'Delete a coupon (orders keep their discount)' },
        successStatus: 204,
        errors: ['not_found'],
      })
      .input(ZCouponIdInput)
      .output(z.void())
      .mutation(({ ctx, input }) => deleteCoupon(ctx, input)),
  };
}

const merchant = couponRoutes({
  read: merchantProcedure('coupon:read'),
  write: merchantProcedure('coupon:write'),
  base: '/merchant/v1/stores/{storeId}/coupons',
  tags: ['merchant: coupons'],
});
const products = storeProcedure('manageProducts');
const dashboard = couponRoutes({
  read: products,
  write: products,
  base: '/dashboard/stores/{storeId}/coupons',
  tags: ['dashboard: coupons'],
});

export const couponsRouter = router({
  ...merchant,
  dashboardCreate: dashboard.create,
  dashboardList: dashboard.list,
  dashboardGet: dashboard.get,
  dashboardUpdate: dashboard.update,
  dashboardDelete: dashboard.delete,

  validate: publicProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/coupons/validate',
        tags: ['buyer'],
        summary: 'Whether a code works in a store, and its discount on a cart',
      },
      rateLimit: { name: 'coupons.validate', max: 20, windowMs: 60_000 },
      // unauthorized: a credential (test key, preview token) that does not open the store's test mode.
      errors: ['not_found', 'store_banned', 'unauthorized'],
    })
    .input(ZValidateCouponInput)
    .output(ZCouponValidation)
    .mutation(({ ctx, input }) => validateCoupon(ctx, input, testModeAccess(ctx))),
});
