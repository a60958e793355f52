/** Discount codes: the seller's CRUD and the buyer's "does this code work on my cart?". */
import { z } from 'zod';
import { ZAmount } from './catalog.js';
import { ZCart } from './checkout.js';
import { ZId, ZTimestamp, ZCount, ZLivemode } from './common.js';

export const DISCOUNT_TYPES = ['percent', 'fixed'] as const;
export const ZDiscountType = z.enum(DISCOUNT_TYPES);
export type TDiscountType = z.infer<typeof ZDiscountType>;

/** A code as the seller types it; buyers may enter it in any case. */
export const ZCouponCode = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_-]+$/, 'Use letters, digits, - and _ only.');

/** Percent: a whole number 1..100. Fixed: an amount in the store currency (above zero). */
export const ZDiscountValue = z.number().positive().max(1_000_000);

const ZExpiresAt = z.iso.datetime({ offset: true });

/** On a subscription: `once` takes the discount off its first payment only, `forever` off every payment. */
export const COUPON_DURATIONS = ['once', 'forever'] as const;
export const ZCouponDuration = z.enum(COUPON_DURATIONS).meta({
  description:
    'On a subscription: `once` discounts its first payment only (the default), `forever` every payment; a one-time purchase has one payment either way',
});

/** Percent discounts are whole numbers 1..100; fixed ones amounts with at most two decimals. */
function discountIssue(type: TDiscountType, value: number): string | undefined {
  if (type === 'percent')
    return Number.isInteger(value) && value >= 1 && value <= 100
      ? undefined
      : 'A percent discount is a whole number from 1 to 100.';
  return ZAmount.safeParse(value).success ? undefined : 'The discount can have at most two decimals.';
}

export const ZCreateCouponInput = z
  .strictObject({
    storeId: ZId,
    code: ZCouponCode,
    discountType: ZDiscountType,
    discountValue: ZDiscountValue,
    productIds: z.array(ZId).max(100).optional(),
    maxUses: z.number().int().min(1).max(1_000_000_000).optional(),
    minAmount: ZAmount.optional(),
    expiresAt: ZExpiresAt.optional(),
    active: z.boolean().optional(),
    duration: ZCouponDuration.optional(),
  })
  .superRefine((input, issue) => {
    const message = discountIssue(input.discountType, input.discountValue);
    if (message) issue.addIssue({ code: 'custom', message, path: ['discountValue'] });
  });
export type TCreateCouponInput = z.infer<typeof ZCreateCouponInput>;

/** Any subset; `null` clears maxUses, minAmount and expiresAt. */
export const ZUpdateCouponInput = z
  .strictObject({
    storeId: ZId,
    couponId: ZId,
    code: ZCouponCode.optional(),
    discountType: ZDiscountType.optional(),
    discountValue: ZDiscountValue.optional(),
    productIds: z.array(ZId).max(100).optional(),
    maxUses: z.number().int().min(1).max(1_000_000_000).nullable().optional(),
    minAmount: ZAmount.nullable().optional(),
    expiresAt: ZExpiresAt.nullable().optional(),
    active: z.boolean().optional(),
    duration: ZCouponDuration.optional(),
  })
  .superRefine((input, issue) => {
    if (input.discountType === undefined || input.discountValue === undefined) return;
    const message = discountIssue(input.discountType, input.discountValue);
    if (message) issue.addIssue({ code: 'custom', message, path: ['discountValue'] });
  });
export type TUpdateCouponInput = z.infer<typeof ZUpdateCouponInput>;

export const ZCouponIdInput = z.strictObject({ storeId: ZId, couponId: ZId });

/** The seller's view. */
export const ZCoupon = z.object({
  id: z.string(),
  storeId: z.string(),
  livemode: ZLivemode,
  code: z.string(),
  discountType: ZDiscountType,
  /** Percent: 1..100. Fixed: an amount in the store currency. */
  discountValue: z.number(),
  productIds: z.array(z.string()),
  maxUses: ZCount.nullable(),
  uses: ZCount,
  minAmount: z.number().nullable(),
  expiresAt: ZTimestamp.nullable(),
  active: z.boolean(),
  duration: ZCouponDuration,
  createdAt: ZTimestamp,
  updatedAt: ZTimestamp,
});
export type TCoupon = z.infer<typeof ZCoupon>;
export const ZCouponList = z.object({ coupons: z.array(ZCoupon) });

/** `POST /api/coupons/validate`: the store by id or subdomain; the cart to price the discount on. */
export const ZValidateCouponInput = z.strictObject({
  storeId: z.string().min(1).max(63),
  code: z.string().trim().min(1).max(64),
  cart: ZCart.optional(),
});
export type TValidateCouponInput = z.infer<typeof ZValidateCouponInput>;

/** Never the coupon's uses or limit. Type and value are null when the code does not work here at all. */
export const ZCouponValidation = z.object({
  valid: z.boolean(),
  code: z.string(),
  discountType: ZDiscountType.nullable(),
  discountValue: z.number().nullable(),
  /** The discount this cart gets (when a cart was sent and the coupon applies). */
  discount: z.number().optional(),
  /** Why the coupon does not apply. */
  reason: z.string().optional(),
});
export type TCouponValidation = z.infer<typeof ZCouponValidation>;
