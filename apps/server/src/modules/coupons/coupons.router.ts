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
import { publicProcedure, router, storeProcedure } from '../../trpc/procedures.js';
import { createCoupon, deleteCoupon, getCoupon, listCoupons, updateCoupon, validateCoupon } from './coupons.service.js';

const dashboard = ['dashboard: coupons'];
const base = '/dashboard/stores/{storeId}/coupons';

export const couponsRouter = router({
  create: storeProcedure('manageProducts')
    .meta({ openapi: { method: 'POST', path: base, tags: dashboard, summary: 'Create a coupon' }, successStatus: 201, errors: ['conflict'] })
    .input(ZCreateCouponInput)
    .output(ZCoupon)
    .mutation(({ ctx, input }) => createCoupon(ctx, input)),

  list: storeProcedure('manageProducts')
    .meta({ openapi: { method: 'GET', path: base, tags: dashboard, summary: "The store's coupons" }, errors: [] })
    .input(ZStoreIdInput)
    .output(ZCouponList)
    .query(async ({ ctx, input }) => ({ coupons: await listCoupons(ctx, input) })),

  get: storeProcedure('manageProducts')
    .meta({ openapi: { method: 'GET', path: `${base}/{couponId}`, tags: dashboard, summary: 'One coupon' }, errors: ['not_found'] })
    .input(ZCouponIdInput)
    .output(ZCoupon)
    .query(({ ctx, input }) => getCoupon(ctx, input)),

  update: storeProcedure('manageProducts')
    .meta({ openapi: { method: 'PATCH', path: `${base}/{couponId}`, tags: dashboard, summary: 'Change a coupon' }, errors: ['not_found', 'conflict'] })
    .input(ZUpdateCouponInput)
    .output(ZCoupon)
    .mutation(({ ctx, input }) => updateCoupon(ctx, input)),

  delete: storeProcedure('manageProducts')
    .meta({ openapi: { method: 'DELETE', path: `${base}/{couponId}`, tags: dashboard, summary: 'Delete a coupon (orders keep their discount)' }, successStatus: 204, errors: ['not_found'] })
    .input(ZCouponIdInput)
    .output(z.void())
    .mutation(({ ctx, input }) => deleteCoupon(ctx, input)),

  validate: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/coupons/validate', tags: ['buyer'], summary: 'Whether a code works in a store, and its discount on a cart' },
      rateLimit: { name: 'coupons.validate', max: 20, windowMs: 60_000 },
      errors: ['not_found', 'store_banned'],
    })
    .input(ZValidateCouponInput)
    .output(ZCouponValidation)
    .mutation(({ ctx, input }) => validateCoupon(ctx, input)),
});
