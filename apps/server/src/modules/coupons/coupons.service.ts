/** Coupon rules: whether a code applies to a cart, and the discount it gives. */
import type { EntityManager } from '@mikro-orm/postgresql';
import type {
  TCoupon,
  TCouponValidation,
  TCreateCouponInput,
  TUpdateCouponInput,
  TValidateCouponInput,
} from '@svc/schemas';
import { AppError, invalidField } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { inputAmountToMinor, minorToAmount } from '../../lib/money.js';
import type { ServiceContext } from '../request/context.js';
import { ProductSchema } from '../catalog/catalog.entities.js';
import { findSellingStore } from '../stores/selling-store.js';
import { NO_TEST_MODE, type TestModeAccess } from '../access/test-mode.js';
import { normaliseCart } from '../catalog/cart.js';
import { StoreSchema, type Store } from '../stores/stores.entities.js';
import { CouponSchema, type Coupon } from './coupons.entities.js';
import { decrementUses, incrementUses } from './coupons.repo.js';

export interface PricedLine {
  productId: string;
  quantity: number;
  unitPriceMinor: number;
}

export type CouponRefusal = 'unknown' | 'inactive' | 'expired' | 'used_up' | 'minimum_not_met' | 'no_eligible_products';

export interface CouponOutcome {
  coupon: Coupon;
  discountMinor: number;
}

const REFUSAL_TEXT: Record<CouponRefusal, string> = {
  unknown: 'This coupon does not exist.',
  inactive: 'This coupon does not exist.',
  expired: 'This coupon has expired.',
  used_up: 'This coupon has been used up.',
  minimum_not_met: 'The cart is below the minimum for this coupon.',
  no_eligible_products: 'This coupon does not apply to anything in the cart.',
};

export function findCoupon(
  ctx: Pick<ServiceContext, 'em'>,
  storeId: string,
  livemode: boolean,
  code: string,
): Promise<Coupon | null> {
  return ctx.em.findOne(CouponSchema, {
    store: storeId,
    livemode,
    code: { $ilike: code.replace(/[\\%_]/g, (c) => `\\${c}`) },
  });
}

/** The discount a coupon gives a cart, or why it does not apply. Never more than the eligible amount. */
export function evaluateCoupon(
  coupon: Coupon | null,
  lines: PricedLine[],
  now: Date,
): CouponOutcome | { refusal: CouponRefusal } {
  if (!coupon) return { refusal: 'unknown' };
  if (!coupon.active) return { refusal: 'inactive' };
  if (coupon.expiresAt && coupon.expiresAt.getTime() <= now.getTime()) return { refusal: 'expired' };
  if (coupon.maxUses !== null && coupon.maxUses !== undefined && coupon.uses >= coupon.maxUses)
    return { refusal: 'used_up' };
  const subtotal = lines.reduce((sum, line) => sum + line.unitPriceMinor * line.quantity, 0);
  if (coupon.minAmountMinor != null && subtotal < coupon.minAmountMinor) return { refusal: 'minimum_not_met' };
  const eligible =
    coupon.productIds.length === 0 ? lines : lines.filter((line) => coupon.productIds.includes(line.productId));
  const eligibleMinor = eligible.reduce((sum, line) => sum + line.unitPriceMinor * line.quantity, 0);
  if (eligible.length === 0) return { refusal: 'no_eligible_products' };
  const discountMinor =
    coupon.discountType === 'percent'
      ? Math.floor((eligibleMinor * coupon.discountValue) / 100)
      : Math.min(coupon.discountValue, eligibleMinor);
  return { coupon, discountMinor };
}

/** For checkout: the discount, or 400 coupon_invalid saying why. */
export async function requireCoupon(
  ctx: ServiceContext,
  store: Pick<Store, 'id'>,
  livemode: boolean,
  code: string,
  lines: PricedLine[],
  now: Date,
): Promise<CouponOutcome> {
  const outcome = evaluateCoupon(await findCoupon(ctx, store.id, livemode, code), lines, now);
  if ('refusal' in outcome) throw new AppError('coupon_invalid', REFUSAL_TEXT[outcome.refusal]);
  return outcome;
}

/** Counts one use inside the order's transaction; fails when a racing order took the last one. */
export async function claimCouponUse(ctx: ServiceContext, couponId: string): Promise<void> {
  if (!(await incrementUses(ctx.em, couponId))) throw new AppError('coupon_invalid', REFUSAL_TEXT.used_up);
}

/** Gives back uses of orders that will never be paid (cancelled, expired): coupon id -> count. */
export async function releaseCoupons(ctx: ServiceContext, uses: Map<string, number>): Promise<void> {
  for (const [couponId, count] of uses) await decrementUses(ctx.em, couponId, count);
}

export function couponRefusalText(refusal: CouponRefusal): string {
  return REFUSAL_TEXT[refusal];
}

// ---------------------------------------------------------------------------------------------
// The seller's coupon management and the buyer's public check.

/** MikroORM's error for a unique index the write broke (by name, as lib/errors.ts does). */
function isUniqueViolation(error: unknown): boolean {
  return (error as { name?: unknown } | null)?.name === 'UniqueConstraintViolationException';
}

const CODE_TAKEN = 'A coupon with this code already exists in the store.';

export function toCouponView(coupon: Coupon, currency: string): TCoupon {
  return {
    id: coupon.id,
    storeId: coupon.store.id,
    livemode: coupon.livemode,
    code: coupon.code,
    discountType: coupon.discountType,
    discountValue:
      coupon.discountType === 'percent' ? coupon.discountValue : minorToAmount(coupon.discountValue, currency),
    productIds: coupon.productIds,
    maxUses: coupon.maxUses ?? null,
    uses: coupon.uses,
    minAmount: coupon.minAmountMinor == null ? null : minorToAmount(coupon.minAmountMinor, currency),
    expiresAt: coupon.expiresAt?.toISOString() ?? null,
    active: coupon.active,
    duration: coupon.duration,
    createdAt: coupon.createdAt.toISOString(),
    updatedAt: coupon.updatedAt.toISOString(),
  };
}

/** The discount value as stored: percent as given, fixed amounts in minor units. */
function storedDiscountValue(type: 'percent' | 'fixed', value: number, currency: string): number {
  if (type === 'percent') {
    if (!Number.isInteger(value) || value < 1 || value > 100)
      throw invalidField('discountValue', 'A percent discount is a whole number from 1 to 100.');
    return value;
  }
  const minor = inputAmountToMinor(value, currency, 'discountValue');
  if (minor <= 0) throw invalidField('discountValue', 'A fixed discount is above zero.');
  return minor;
}

/** The ids, deduplicated, after checking each names a (not deleted) product of the store. */
async function storeProductIds(
  em: EntityManager,
  storeId: string,
  livemode: boolean,
  ids: string[],
): Promise<string[]> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return [];
  const found = await em.find(
    ProductSchema,
    { id: { $in: unique }, store: storeId, livemode, deletedAt: null },
    { fields: ['id'] },
  );
  const known = new Set(found.map((product) => product.id));
  const index = ids.findIndex((id) => !known.has(id));
  if (index >= 0) throw invalidField(`productIds.${index}`, 'Not a product of this store.');
  return unique;
}

async function assertCodeFree(
  em: EntityManager,
  storeId: string,
  livemode: boolean,
  code: string,
  exceptId?: string,
): Promise<void> {
  const existing = await findCoupon({ em }, storeId, livemode, code);
  if (existing && existing.id !== exceptId) throw new AppError('conflict', CODE_TAKEN);
}

/**
 * Flushes; a racing create or rename of the same code loses at the unique index, and a
 * limit lowered below uses an order took meanwhile at the uses check (both 409).
 */
async function flushCoupon(em: EntityManager): Promise<void> {
  try {
    await em.flush();
  } catch (error) {
    const name = (error as { name?: unknown } | null)?.name;
    if (isUniqueViolation(error)) throw new AppError('conflict', CODE_TAKEN, { cause: error });
    if (name === 'CheckConstraintViolationException')
      throw new AppError('conflict', 'The coupon was used meanwhile; retry.', { cause: error });
    throw error;
  }
}

async function storeOf(em: EntityManager, storeId: string): Promise<Store> {
  return em.findOneOrFail(StoreSchema, { id: storeId });
}

async function findStoreCoupon(
  em: EntityManager,
  storeId: string,
  livemode: boolean,
  couponId: string,
): Promise<Coupon> {
  const coupon = await em.findOne(CouponSchema, { id: couponId, store: storeId, livemode });
  if (!coupon) throw new AppError('not_found', 'Coupon not found.');
  return coupon;
}

export async function createCoupon(ctx: ServiceContext, input: TCreateCouponInput): Promise<TCoupon> {
  const store = await storeOf(ctx.em, input.storeId);
  const discountValue = storedDiscountValue(input.discountType, input.discountValue, store.currency);
  const minAmountMinor =
    input.minAmount === undefined ? null : inputAmountToMinor(input.minAmount, store.currency, 'minAmount');
  const productIds = await storeProductIds(ctx.em, store.id, ctx.livemode, input.productIds ?? []);
  await assertCodeFree(ctx.em, store.id, ctx.livemode, input.code);
  const now = ctx.clock.now();
  const coupon = ctx.em.create(CouponSchema, {
    id: newId(),
    store: store.id,
    livemode: ctx.livemode,
    code: input.code,
    discountType: input.discountType,
    discountValue,
    productIds,
    maxUses: input.maxUses ?? null,
    uses: 0,
    minAmountMinor,
    expiresAt: input.expiresAt === undefined ? null : new Date(input.expiresAt),
    active: input.active ?? true,
    duration: input.duration ?? 'once',
    createdAt: now,
    updatedAt: now,
  });
  await flushCoupon(ctx.em);
  return toCouponView(coupon, store.currency);
}

export async function listCoupons(ctx: ServiceContext, input: { storeId: string }): Promise<TCoupon[]> {
  const store = await storeOf(ctx.em, input.storeId);
  const coupons = await ctx.em.find(
    CouponSchema,
    { store: store.id, livemode: ctx.livemode },
    { orderBy: { createdAt: 'asc', id: 'asc' } },
  );
  return coupons.map((coupon) => toCouponView(coupon, store.currency));
}

export async function getCoupon(ctx: ServiceContext, input: { storeId: string; couponId: string }): Promise<TCoupon> {
  const store = await storeOf(ctx.em, input.storeId);
  return toCouponView(await findStoreCoupon(ctx.em, store.id, ctx.livemode, input.couponId), store.currency);
}

export async function updateCoupon(ctx: ServiceContext, input: TUpdateCouponInput): Promise<TCoupon> {
  const store = await storeOf(ctx.em, input.storeId);
  const coupon = await findStoreCoupon(ctx.em, store.id, ctx.livemode, input.couponId);
  if (
    input.discountType !== undefined &&
    input.discountType !== coupon.discountType &&
    input.discountValue === undefined
  ) {
    // A stored value means something else under the other type (percent vs minor units).
    throw invalidField('discountValue', 'Required when discountType changes.');
  }
  if (input.discountValue !== undefined) {
    const type = input.discountType ?? coupon.discountType;
    coupon.discountValue = storedDiscountValue(type, input.discountValue, store.currency);
    coupon.discountType = type;
  }
  if (input.minAmount !== undefined)
    coupon.minAmountMinor =
      input.minAmount === null ? null : inputAmountToMinor(input.minAmount, store.currency, 'minAmount');
  if (input.productIds !== undefined)
    coupon.productIds = await storeProductIds(ctx.em, store.id, ctx.livemode, input.productIds);
  if (input.code !== undefined && input.code !== coupon.code) {
    await assertCodeFree(ctx.em, store.id, ctx.livemode, input.code, coupon.id);
    coupon.code = input.code;
  }
  if (input.maxUses !== undefined) {
    if (input.maxUses !== null && input.maxUses < coupon.uses)
      throw invalidField('maxUses', `Below the ${coupon.uses} uses so far.`);
    coupon.maxUses = input.maxUses;
  }
  if (input.expiresAt !== undefined) coupon.expiresAt = input.expiresAt === null ? null : new Date(input.expiresAt);
  if (input.active !== undefined) coupon.active = input.active;
  if (input.duration !== undefined) coupon.duration = input.duration;
  coupon.updatedAt = ctx.clock.now();
  await flushCoupon(ctx.em);
  return toCouponView(coupon, store.currency);
}

export async function deleteCoupon(ctx: ServiceContext, input: { storeId: string; couponId: string }): Promise<void> {
  // Orders that used it keep their discount (order.coupon_id is not a foreign key).
  const deleted = await ctx.em.nativeDelete(CouponSchema, {
    id: input.couponId,
    store: input.storeId,
    livemode: ctx.livemode,
  });
  if (deleted === 0) throw new AppError('not_found', 'Coupon not found.');
}

/** Refusals that only say something about the cart: without a cart they do not make a code invalid. */
const CART_REFUSALS: ReadonlySet<CouponRefusal> = new Set(['minimum_not_met', 'no_eligible_products']);

/**
 * The buyer's check of a code, always 200. A code the store does not have, and one the
 * seller switched off, answer alike (nothing about which codes exist beyond valid or not),
 * and uses and limits are never shown. The code is looked up in the cart's mode, as checkout
 * does: a cart of test products (for a caller `testMode` lets see them) meets the test coupons.
 */
export async function validateCoupon(
  ctx: ServiceContext,
  input: TValidateCouponInput,
  testMode: TestModeAccess = NO_TEST_MODE,
): Promise<TCouponValidation> {
  const store = await findSellingStore(ctx, input.storeId);
  const cart = input.cart ? await normaliseCart(ctx, store, input.cart, testMode) : undefined;
  const coupon = await findCoupon(ctx, store.id, cart?.livemode ?? true, input.code);
  const now = ctx.clock.now();
  const lines: PricedLine[] = (cart?.lines ?? []).map((line) => ({
    productId: line.product.id,
    quantity: line.quantity,
    unitPriceMinor: line.unitPriceMinor,
  }));
  const outcome = evaluateCoupon(coupon, lines, now);
  if (!coupon || ('refusal' in outcome && (outcome.refusal === 'unknown' || outcome.refusal === 'inactive'))) {
    return {
      valid: false,
      code: input.code,
      discountType: null,
      discountValue: null,
      reason: couponRefusalText('unknown'),
    };
  }
  const base = {
    code: coupon.code,
    discountType: coupon.discountType,
    discountValue: toCouponView(coupon, store.currency).discountValue,
  };
  if ('refusal' in outcome) {
    if (!input.cart && CART_REFUSALS.has(outcome.refusal)) return { valid: true, ...base };
    return { valid: false, ...base, reason: couponRefusalText(outcome.refusal) };
  }
  return input.cart
    ? { valid: true, ...base, discount: minorToAmount(outcome.discountMinor, store.currency) }
    : { valid: true, ...base };
}
