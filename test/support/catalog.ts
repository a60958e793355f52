/** Products and stock through the dashboard API, as a seller makes them. */
import { expect } from 'vitest';
import { dashboardInMode, type Seller } from './seller.js';

export interface ProductSeed {
  name?: string;
  price?: number;
  description?: string;
  status?: 'active' | 'draft' | 'archived';
  deliveryMethods?: string[];
  deliveryInstructions?: string;
  customFields?: Array<{ name: string; type?: string; required?: boolean }>;
  minQuantity?: number;
  maxQuantity?: number | null;
  /** Days a sold license key stays valid (a one-time license's `expiresAt`). */
  licenseValidityDays?: number | null;
  /** A recurring product's plans (its price must then be the first active plan's). */
  plans?: Array<{ interval: string; intervalCount?: number; price: number; trialDays?: number; active?: boolean }>;
}

/** A product of the seller's store; `mode: 'test'` makes a test-mode product (docs/architecture.md, Test mode). */
export async function createProduct(
  seller: Seller,
  storeId: string,
  seed: ProductSeed = {},
  mode: 'live' | 'test' = 'live',
): Promise<{ id: string; slug: string; [key: string]: unknown }> {
  const response = await dashboardInMode(seller, mode, 'POST', `/api/dashboard/stores/${storeId}/products`, {
    name: seed.name ?? 'Product',
    price: seed.price ?? 9.99,
    deliveryMethods: seed.deliveryMethods ?? ['manualDelivery'],
    ...seed,
  });
  expect(response.status, await response.clone().text()).toBe(201);
  return response.json();
}

export async function importKeys(
  seller: Seller,
  storeId: string,
  productId: string,
  keys: string[],
  mode: 'live' | 'test' = 'live',
): Promise<{ added: number; duplicates: number }> {
  const response = await dashboardInMode(
    seller,
    mode,
    'POST',
    `/api/dashboard/stores/${storeId}/products/${productId}/license-keys`,
    { keys },
  );
  expect(response.status, await response.clone().text()).toBe(200);
  return response.json();
}
