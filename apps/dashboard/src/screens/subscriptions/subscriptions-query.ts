/**
 * The Subscriptions list's query, built in one place for the screen and for the route (as the
 * Orders list's, orders-query.ts): the route starts it while the app checks the session and loads
 * the screen's chunks, and the screen finds it in the cache under the same key. No zod here: the
 * router's chunk imports this module.
 */
import { keepPreviousData } from '@tanstack/react-query';
import { trpc } from '../../api';
import type { SubscriptionsSearch } from './search';

export function subscriptionsListQuery(storeId: string, search: SubscriptionsSearch) {
  return trpc.subscriptions.list.queryOptions(
    {
      storeId,
      ...(search.status ? { status: search.status } : {}),
      ...(search.productId ? { productId: search.productId } : {}),
      ...(search.email ? { customerEmail: search.email } : {}),
      ...(search.cursor ? { cursor: search.cursor } : {}),
    },
    { placeholderData: keepPreviousData },
  );
}
