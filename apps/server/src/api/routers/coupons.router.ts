/**
 * Coupons: the resource for merchants (/merchant/v1, Bearer key with coupon scopes, capped by
 * manageProducts) and the dashboard (session with manageProducts), each operation declared once
 * for both (storeResource); and the buyer's check.
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
import { publicProcedure, router, storeResource } from '../../trpc/procedures.js';
import { testModeAccess } from '../../modules/access/test-mode.js';
import {
  createCoupon,
  deleteCoupon,
  getCoupon,
  listCoupons,
  updateCoupon,
  validateCoupon,
} from '../../modules/coupons/coupons.service.js';

const MERCHANT = '/merchant/v1/stores/{storeId}/coupons';
const tags = ['merchant: coupons'];
const dashboard = { tags: ['dashboard: coupons'] };
const one = `${MERCHANT}/{couponId}` as const;

const read = storeResource({ scope: 'coupon:read', permission: 'manageProducts' });
const write = storeResource({ scope: 'coupon:write', permission: 'manageProducts' });

export const couponsRouter = router({
  create: write
    .meta({
      openapi: { method: 'POST', path: MERCHANT, tags, summary: 'Create a coupon' },
      dashboard,
      successStatus: 201,
      errors: ['conflict'],
    })
    .input(ZCreateCouponInput)
    .output(ZCoupon)
    .mutation(({ ctx, input }) => createCoupon(ctx, input)),
  list: read
    .meta({ openapi: { method: 'GET', path: MERCHANT, tags, summary: "The store's coupons" }, dashboard, errors: [] })
    .input(ZStoreIdInput)
    .output(ZCouponList)
    .query(async ({ ctx, input }) => ({ coupons: await listCoupons(ctx, input) })),
  get: read
    .meta({ openapi: { method: 'GET', path: one, tags, summary: 'One coupon' }, dashboard, errors: ['not_found'] })
    .input(ZCouponIdInput)
    .output(ZCoupon)
    .query(({ ctx, input }) => getCoupon(ctx, input)),
  update: write
    .meta({
      openapi: { method: 'PATCH', path: one, tags, summary: 'Change a coupon' },
      dashboard,
      errors: ['not_found', 'conflict'],
    })
    .input(ZUpdateCouponInput)
    .output(ZCoupon)
    .mutation(({ ctx, input }) => updateCoupon(ctx, input)),
  delete: write
    .meta({
      openapi: { method: 'DELETE', path: one, tags, summary: 'Delete a coupon (orders keep their discount)' },
      dashboard,
      successStatus: 204,
      errors: ['not_found'],
    })
    .input(ZCouponIdInput)
    .output(z.void())
    .mutation(({ ctx, input }) => deleteCoupon(ctx, input)),

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
