/** Products, their license-key stock and their downloadable files. */
import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { DELIVERY_METHODS, PLAN_INTERVALS, PRODUCT_STATUSES, type TCustomField } from '@svc/schemas';
import { OrderSchema } from '../orders/orders.entities.js';
import { StoreSchema } from '../stores/stores.entities.js';

/**
 * One of a product's images (at most 5, in the order shown): the original as uploaded and its WebP
 * renditions, in the files' storage under `<storeId>/<id>` and `<storeId>/<id>-w<width>`
 * (images.service.ts, the one writer).
 */
export interface ProductImageRecord {
  id: string;
  contentType: 'image/png' | 'image/jpeg' | 'image/webp';
  size: number;
  sha256: string;
  /** The WebP renditions, narrowest first: 480 and 960 px wide, never wider than the original. */
  variants: { width: number; height: number }[];
}

export const ProductSchema = defineEntity({
  name: 'Product',
  tableName: 'product',
  checks: [
    { name: 'product_price_minor_check', expression: 'price_minor >= 0' },
    { name: 'product_min_quantity_check', expression: 'min_quantity >= 1' },
    { name: 'product_check', expression: 'max_quantity is null or max_quantity >= min_quantity' },
    {
      name: 'product_license_activation_limit_check',
      expression:
        'license_activation_limit is null or license_activation_limit >= 1 and license_activation_limit <= 10000',
    },
    {
      name: 'product_license_validity_days_check',
      expression: 'license_validity_days is null or license_validity_days >= 1 and license_validity_days <= 36500',
    },
  ],
  // The storefront finds a product by its slug within the store and mode.
  uniques: [{ name: 'product_store_slug_unique', properties: ['store', 'livemode', 'slug'] }],
  indexes: [
    {
      name: 'product_store_mode_status_index',
      expression:
        'create index "product_store_mode_status_index" on "product" ("store_id", "livemode", "status", "created_at") where "deleted_at" is null',
    },
  ],
  properties: (p) => ({
    id: p.string().primary().length(32),
    store: p.manyToOne(StoreSchema).ref().foreignKeyName('product_store_id_fkey').updateRule('no action'),
    /** Test mode (docs/architecture.md, Test mode): false for a test-mode row; every row a mode's objects are made of carries it. */
    livemode: p.boolean().default(true),
    name: p.string().length(200),
    slug: p.string().length(100),
    description: p.text().default(''),
    priceMinor: p.bigint('number'),
    status: p.enum([...PRODUCT_STATUSES]),
    deliveryMethods: p.array<(typeof DELIVERY_METHODS)[number]>(),
    deliveryInstructions: p.text().default(''),
    customFields: p.json<TCustomField[]>().default('[]'),
    /** Its images, in the order the storefront shows them (images.service.ts). */
    images: p.json<ProductImageRecord[]>().default('[]'),
    minQuantity: p.integer().default(1),
    maxQuantity: p.integer().nullable(),
    /** License API: instances one license may have at once; null: unlimited. */
    licenseActivationLimit: p.integer().nullable(),
    /** License API: days a license is valid from its assignment; null: never expires. */
    licenseValidityDays: p.integer().nullable(),
    /**
     * Billed by plans (product_plan) rather than once: then `priceMinor` is its first active plan's
     * price, and reads that meet only one-time products never touch the plan table.
     */
    recurring: p.boolean().default(false),
    /** How it is taxed where the store charges tax: `ebook` takes a country's reduced e-book rate (tax/rates.ts). */
    taxCategory: p.enum(['standard', 'ebook'] as const).default('standard'),
    /** Deleted products stay for the orders that name them, hidden everywhere else. */
    deletedAt: p.datetime().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    version: p.integer().version().default(1),
  }),
});
export type Product = InferEntity<typeof ProductSchema>;

/**
 * A recurring product's plan (docs/decisions.md, "Plans"): how often it bills, at what price, with
 * what trial. Never deleted: a plan left out of an update is archived (`active` false), as orders
 * and subscriptions may name it.
 */
export const ProductPlanSchema = defineEntity({
  name: 'ProductPlan',
  tableName: 'product_plan',
  checks: [
    { name: 'product_plan_price_minor_check', expression: 'price_minor >= 0' },
    { name: 'product_plan_interval_count_check', expression: 'interval_count >= 1 and interval_count <= 12' },
    { name: 'product_plan_year_check', expression: `interval <> 'year' or interval_count = 1` },
    { name: 'product_plan_trial_days_check', expression: 'trial_days >= 0 and trial_days <= 365' },
  ],
  // A product's plans are read by the product, in order (positions are rewritten by each update, so not unique).
  indexes: [{ name: 'product_plan_product_position_index', properties: ['product', 'position'] }],
  properties: (p) => ({
    id: p.string().primary().length(32),
    product: p.manyToOne(ProductSchema).ref().foreignKeyName('product_plan_product_id_fkey').updateRule('no action'),
    /** Its product's mode. */
    livemode: p.boolean().default(true),
    /** Its place among the product's plans, from 0: the first active one prices the product. */
    position: p.integer(),
    interval: p.enum([...PLAN_INTERVALS]),
    intervalCount: p.integer().default(1),
    priceMinor: p.bigint('number'),
    trialDays: p.integer().default(0),
    active: p.boolean().default(true),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  }),
});
export type ProductPlan = InferEntity<typeof ProductPlanSchema>;

export const LICENSE_KEY_STATUSES = ['available', 'assigned', 'revoked'] as const;

/**
 * One license key. The value is encrypted (AES-256-GCM); `valueHash` is an HMAC of the
 * trimmed value under a derived key, for de-duplication without decrypting.
 */
export const LicenseKeySchema = defineEntity({
  name: 'LicenseKey',
  tableName: 'license_key',
  // A key's value once per product: the same key is never stocked (and so never sold) twice.
  uniques: [{ name: 'license_key_product_value_unique', properties: ['product', 'valueHash'] }],
  // A key is available exactly when it holds no order, or revoked.
  checks: [
    {
      name: 'license_key_assignment_check',
      expression: `(status = 'available') = (order_id is null) or status = 'revoked'`,
    },
  ],
  indexes: [
    // Claims take the oldest available keys of a product: a small partial index.
    {
      name: 'license_key_available_index',
      expression: `create index "license_key_available_index" on "license_key" ("product_id", "id") where "status" = 'available'`,
    },
    {
      name: 'license_key_order_index',
      expression: 'create index "license_key_order_index" on "license_key" ("order_id") where "order_id" is not null',
    },
    {
      name: 'license_key_order_line_index',
      expression:
        'create index "license_key_order_line_index" on "license_key" ("order_line_id") where "order_line_id" is not null',
    },
    // A subscription's licenses (the renewal engine and the wipe of test data find them by it).
    {
      name: 'license_key_subscription_index',
      expression:
        'create index "license_key_subscription_index" on "license_key" ("subscription_id") where "subscription_id" is not null',
    },
  ],
  properties: (p) => ({
    id: p.string().primary().length(32),
    product: p.manyToOne(ProductSchema).ref().foreignKeyName('license_key_product_id_fkey').updateRule('no action'),
    /** Its product's mode. */
    livemode: p.boolean().default(true),
    valueEnc: p.text(),
    valueHash: p.string().length(64),
    status: p.enum([...LICENSE_KEY_STATUSES]).default('available'),
    order: p
      .manyToOne(OrderSchema)
      .ref()
      .nullable()
      .foreignKeyName('license_key_order_id_fkey')
      .updateRule('no action')
      .deleteRule('no action'),
    orderLineId: p.string().length(32).nullable(),
    assignedAt: p.datetime().nullable(),
    /**
     * The subscription whose order the key was assigned to (the order's own subscription_id, set by
     * the claim); null for a one-time sale. Its license is valid as long as that subscription gives
     * access. No foreign key, as the order's column has none: the catalog cannot name the
     * subscriptions module's entity.
     */
    subscriptionId: p.string().length(32).nullable(),
    /** License API: set while the seller has disabled this sold key's license. */
    disabledAt: p.datetime().nullable(),
    createdAt: p.datetime(),
  }),
});
export type LicenseKey = InferEntity<typeof LicenseKeySchema>;

export const StoredFileSchema = defineEntity({
  name: 'StoredFile',
  tableName: 'file',
  indexes: [
    { name: 'file_product_index', properties: ['product'] },
    // The wipe of test data takes a store's test files in batches (test-data.repo.ts).
    { name: 'file_store_mode_index', properties: ['store', 'livemode'] },
  ],
  // A payment proof's order and number go together; the newest proofs of an order are read by them.
  uniques: [{ name: 'file_order_proof_unique', properties: ['order', 'proofNumber'] }],
  checks: [{ name: 'file_proof_check', expression: '(order_id is null) = (proof_number is null)' }],
  properties: (p) => ({
    id: p.string().primary().length(32),
    store: p.manyToOne(StoreSchema).ref().foreignKeyName('file_store_id_fkey').updateRule('no action'),
    /** Its product's or order's mode (a logo, shared by both modes, is live). */
    livemode: p.boolean().default(true),
    product: p
      .manyToOne(ProductSchema)
      .ref()
      .nullable()
      .foreignKeyName('file_product_id_fkey')
      .updateRule('no action')
      .deleteRule('no action'),
    name: p.string().length(255),
    contentType: p.string().length(100),
    size: p.bigint('number'),
    sha256: p.string().length(64),
    storageKey: p.string().length(200),
    /** The order a payment proof was sent for; null for a product's file. */
    order: p
      .manyToOne(OrderSchema)
      .ref()
      .nullable()
      .foreignKeyName('file_order_id_fkey')
      .updateRule('no action')
      .deleteRule('no action'),
    /**
     * A payment proof's number within its order, from 1: the newest is the highest (ids are not
     * monotonic and the clock may stand still). Null for a product's file.
     */
    proofNumber: p.integer().nullable(),
    createdAt: p.datetime(),
  }),
});
export type StoredFile = InferEntity<typeof StoredFileSchema>;
