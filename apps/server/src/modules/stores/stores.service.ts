/** Store rules: lookup for the public, and (with the identity issue) management for sellers. */
import type { TStoreLookupInput, TStorePublic } from '@svc/schemas';
import { AppError } from '../../lib/errors.js';
import type { ServiceContext } from '../../trpc/service-context.js';
import { StoreSchema, type Store } from './stores.entities.js';

export function toPublicStore(store: Store): TStorePublic {
  return {
    id: store.id,
    name: store.name,
    subdomain: store.subdomain,
    currency: store.currency,
    createdAt: store.createdAt.toISOString(),
  };
}

export async function lookupStoreBySubdomain(ctx: ServiceContext, input: TStoreLookupInput): Promise<TStorePublic> {
  const store = await ctx.em.findOne(StoreSchema, { subdomain: input.subdomain.toLowerCase() });
  if (!store) throw new AppError('not_found', 'Store not found.');
  if (store.banned) throw new AppError('store_banned', 'This store is not available.');
  return toPublicStore(store);
}
