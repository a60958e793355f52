/** The store being run, and what the signed-in member may do in it. */
import { useQuery } from '@tanstack/react-query';
import { useParams } from '@tanstack/react-router';
import { trpc } from './api';

export type Permission = 'viewOrders' | 'editOrders' | 'manageProducts' | 'manageSettings';

export const storesQuery = trpc.stores.list.queryOptions(undefined, { staleTime: 60_000 });

export function useStoreId(): string {
  return useParams({ strict: false }).storeId ?? '';
}

/** The current store (from the cached list) and `can(permission)`: owners may do everything. */
export function useStore() {
  const storeId = useStoreId();
  const stores = useQuery(storesQuery);
  const store = stores.data?.stores.find((s) => s.id === storeId);
  return {
    store,
    stores,
    can: (permission: Permission) => !!store && (store.role === 'owner' || store.permissions.includes(permission)),
    isOwner: store?.role === 'owner',
  };
}
