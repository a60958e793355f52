/** Products, their license-key stock and their downloadable files. */
import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { DELIVERY_METHODS, PRODUCT_STATUSES, type TCustomField } from '@svc/schemas';
import { OrderSchema } from '../orders/orders.entities.js';
import { StoreSchema } from '../stores/stores.entities.js';

export const ProductSchema = defineEntity({
  name: 'Product',
  tableName: 'product',
  properties: (p) => ({
    id: p.string().primary().length(32),
    store: p.manyToOne(StoreSchema).ref(),
    name: p.string().length(200),
    description: p.text().default(''),
    priceMinor: p.bigint('number'),
    status: p.enum([...PRODUCT_STATUSES]),
    deliveryMethods: p.array<(typeof DELIVERY_METHODS)[number]>(),
    deliveryInstructions: p.text().default(''),
    customFields: p.json<TCustomField[]>().default('[]'),
    minQuantity: p.integer().default(1),
    maxQuantity: p.integer().nullable(),
    /** Deleted products stay for the orders that name them, hidden everywhere else. */
    deletedAt: p.datetime().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    version: p.integer().version().default(1),
  }),
});
export type Product = InferEntity<typeof ProductSchema>;

export const LICENSE_KEY_STATUSES = ['available', 'assigned', 'revoked'] as const;

/**
 * One license key. The value is encrypted (AES-256-GCM); `valueHash` is an HMAC of the
 * trimmed value under a derived key, for de-duplication without decrypting.
 */
export const LicenseKeySchema = defineEntity({
  name: 'LicenseKey',
  tableName: 'license_key',
  properties: (p) => ({
    id: p.string().primary().length(32),
    product: p.manyToOne(ProductSchema).ref(),
    valueEnc: p.text(),
    valueHash: p.string().length(64),
    status: p.enum([...LICENSE_KEY_STATUSES]),
    order: p.manyToOne(OrderSchema).ref().nullable(),
    orderLineId: p.string().length(32).nullable(),
    assignedAt: p.datetime().nullable(),
    createdAt: p.datetime(),
  }),
});
export type LicenseKey = InferEntity<typeof LicenseKeySchema>;

export const StoredFileSchema = defineEntity({
  name: 'StoredFile',
  tableName: 'file',
  properties: (p) => ({
    id: p.string().primary().length(32),
    store: p.manyToOne(StoreSchema).ref(),
    product: p.manyToOne(ProductSchema).ref().nullable(),
    name: p.string().length(255),
    contentType: p.string().length(100),
    size: p.bigint('number'),
    sha256: p.string().length(64),
    storageKey: p.string().length(200),
    createdAt: p.datetime(),
  }),
});
export type StoredFile = InferEntity<typeof StoredFileSchema>;
