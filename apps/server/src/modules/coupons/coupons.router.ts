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
import { storeProcedure } from '../../trpc/guards.js';
import { publicProcedure, router } from '../../trpc/procedures.js';
import { createCoupon, deleteCoupon, getCoupon, listCoupons, updateCoupon, validateCoupon } from './coupons.service.js';

const dashboard = ['dashboard: coupons'];
const base = '/dashboard/stores/{storeId}/coupons';

export const couponsRouter = router({
  create: storeProcedure('manageProducts')
    .meta({ openapi: { method: 'POST', path: base, tags: dashboard, summary: 'Create a coupon', protect: false, errorResponses: [400, 401, 403, 409, 500] }, auth: 'session', successStatus: 201 })
    .input(ZCreateCouponInput)
    .output(ZCoupon)
    .mutation(({ ctx, input }) => createCoupon(ctx, input)),

  list: storeProcedure('manageProducts')
    .meta({ openapi: { method: 'GET', path: base, tags: dashboard, summary: "The store's coupons", protect: false }, auth: 'session' })
    .input(ZStoreIdInput)
    .output(ZCouponList)
    .query(async ({ ctx, input }) => ({ coupons: await listCoupons(ctx, input) })),

  get: storeProcedure('manageProducts')
    .meta({ openapi: { method: 'GET', path: `${base}/{couponId}`, tags: dashboard, summary: 'One coupon', protect: false }, auth: 'session' })
    .input(ZCouponIdInput)
    .output(ZCoupon)
    .query(({ ctx, input }) => getCoupon(ctx, input)),

  update: storeProcedure('manageProducts')
    .meta({ openapi: { method: 'PATCH', path: `${base}/{couponId}`, tags: dashboard, summary: 'Change a coupon', protect: false, errorResponses: [400, 401, 403, 404, 409, 500] }, auth: 'session' })
    .input(ZUpdateCouponInput)
    .output(ZCoupon)
    .mutation(({ ctx, input }) => updateCoupon(ctx, input)),

  delete: storeProcedure('manageProducts')
    .meta({ openapi: { method: 'DELETE', path: `${base}/{couponId}`, tags: dashboard, summary: 'Delete a coupon (orders keep their discount)', protect: false }, auth: 'session', successStatus: 204 })
    .input(ZCouponIdInput)
    .output(z.void())
    .mutation(({ ctx, input }) => deleteCoupon(ctx, input)),

  validate: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/coupons/validate', tags: ['buyer'], summary: 'Whether a code works in a store, and its discount on a cart', protect: false, errorResponses: [400, 403, 404, 500] },
      rateLimit: { name: 'coupons.validate', max: 20, windowMs: 60_000 },
    })
    .input(ZValidateCouponInput)
    .output(ZCouponValidation)
    .mutation(({ ctx, input }) => validateCoupon(ctx, input)),
});
