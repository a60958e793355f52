/** Discount codes: percent or fixed, optionally limited to products, uses, a date and a minimum. */
import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { StoreSchema } from '../stores/stores.entities.js';

export const CouponSchema = defineEntity({
  name: 'Coupon',
  tableName: 'coupon',
  checks: [
    { name: 'coupon_discount_value_check', expression: 'discount_value > 0' },
    { name: 'coupon_max_uses_check', expression: 'max_uses is null or max_uses > 0' },
    { name: 'coupon_percent_check', expression: `discount_type <> 'percent' or discount_value <= 100` },
    // Uses never pass the limit: the claim is one conditional UPDATE, and this says so to the database.
    { name: 'coupon_uses_check', expression: 'max_uses is null or uses <= max_uses' },
  ],
  // One code per store and mode whatever its case.
  indexes: [
    {
      name: 'coupon_store_mode_code_unique',
      expression:
        'create unique index "coupon_store_mode_code_unique" on "coupon" ("store_id", "livemode", lower("code"))',
    },
  ],
  properties: (p) => ({
    id: p.string().primary().length(32),
    store: p.manyToOne(StoreSchema).ref().foreignKeyName('coupon_store_id_fkey').updateRule('no action'),
    /** Test mode (docs/architecture.md, Test mode): false for a test-mode row; every row a mode's objects are made of carries it. */
    livemode: p.boolean().default(true),
    /** As the seller typed it; matched case-insensitively (unique on lower(code) per store). */
    code: p.string().length(64),
    discountType: p.enum(['percent', 'fixed']),
    /** Percent: 1..100. Fixed: minor units of the store currency. */
    discountValue: p.bigint('number'),
    productIds: p.array().default([]),
    maxUses: p.integer().nullable(),
    uses: p.integer().default(0),
    minAmountMinor: p.bigint('number').nullable(),
    expiresAt: p.datetime().nullable(),
    active: p.boolean().default(true),
    /** On a subscription: `once` discounts its first payment, `forever` every payment. */
    duration: p.enum(['once', 'forever']).default('once'),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  }),
});
export type Coupon = InferEntity<typeof CouponSchema>;
