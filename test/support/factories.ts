/** Test data with unique values, so no test needs another's rows or a truncation. */
import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../../apps/server/src/lib/ids.js';
import { StoreSchema, type Store } from '../../apps/server/src/modules/stores/stores.entities.js';

export function uniqueSubdomain(prefix = 'shop'): string {
  return `${prefix}-${randomBytes(5).toString('hex')}`;
}

export async function createStore(
  em: EntityManager,
  overrides: Partial<Pick<Store, 'name' | 'subdomain' | 'currency' | 'banned'>> = {},
): Promise<Store> {
  const now = new Date();
  const store = em.create(StoreSchema, {
    id: newId(),
    name: overrides.name ?? 'Test Store',
    subdomain: overrides.subdomain ?? uniqueSubdomain(),
    currency: overrides.currency ?? 'USD',
    banned: overrides.banned ?? false,
    allowedOrigins: [],
    settings: {},
    createdAt: now,
    updatedAt: now,
  });
  await em.persist(store).flush();
  return store;
}
