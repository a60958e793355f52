/** Discount codes: percent or fixed, optionally limited to products, uses, a date and a minimum. */
import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { StoreSchema } from '../stores/stores.entities.js';

export const CouponSchema = defineEntity({
  name: 'Coupon',
  tableName: 'coupon',
  properties: (p) => ({
    id: p.string().primary().length(32),
    store: p.manyToOne(StoreSchema).ref(),
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
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  }),
});
export type Coupon = InferEntity<typeof CouponSchema>;
