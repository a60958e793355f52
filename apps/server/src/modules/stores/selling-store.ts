/**
 * The store a buyer's call names, when it may sell: it exists and is not banned. Read by every
 * buyer path (catalog, cart, coupons, blacklist, tracking, feedback, placing an order).
 */
import type { TTaxSettings } from '@svc/schemas';
import { AppError } from '../../lib/errors.js';
import type { ServiceContext } from '../request/context.js';
import { StoreSchema, type Store } from './stores.entities.js';
import { selectStoreRef } from './stores.repo.js';
import { taxSettingsFrom } from '../tax/tax.js';

/** A store that may sell: exists and is not banned, by id or subdomain (`shopId`), or by subdomain only. */
export async function findSellingStore(
  ctx: ServiceContext,
  ref: string,
  by: 'id-or-subdomain' | 'subdomain' = 'id-or-subdomain',
): Promise<Store> {
  const subdomain = ref.toLowerCase();
  const store = await ctx.em.findOne(
    StoreSchema,
    by === 'subdomain' ? { subdomain } : { $or: [{ id: ref }, { subdomain }] },
  );
  if (!store) throw new AppError('not_found', 'Store not found.');
  if (store.banned) throw new AppError('store_banned', 'This store is not available.');
  return store;
}

/** What the cart and order creation need of the store. */
export interface SellingStoreRef {
  id: string;
  currency: string;
  /** Its tax settings (off when never set). */
  tax: TTaxSettings;
}

/**
 * findSellingStore for the hot buyer paths (cart, order creation): the same rules (by id or
 * subdomain, an id match first; 404 unknown, 403 banned) in one raw statement, without
 * hydrating the entity.
 */
export async function findSellingStoreRef(ctx: ServiceContext, ref: string): Promise<SellingStoreRef> {
  const store = await selectStoreRef(ctx.em, ref);
  if (!store) throw new AppError('not_found', 'Store not found.');
  if (store.banned) throw new AppError('store_banned', 'This store is not available.');
  return { id: store.id, currency: store.currency, tax: taxSettingsFrom(store.tax) };
}
