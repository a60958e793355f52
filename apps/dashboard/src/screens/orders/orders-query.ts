/**
 * The Orders list's query, built in one place for the screen and for the route: the route starts
 * it while the app still checks the session (the same /trpc batch) and loads the screen's chunks,
 * and the screen then finds it in the cache under the same key. No zod here: the router's chunk
 * imports this module.
 */
import { keepPreviousData } from '@tanstack/react-query';
import { trpc } from '../../api';
import type { OrdersSearch } from './search';

/** How often the list asks for new orders while it is open. */
const REFRESH_MS = 10_000;
export const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** A `YYYY-MM-DD` of the URL as the instant the seller means: the start (from) or the end (to) of that day, here. */
function dayBound(day: string | undefined, end: boolean): string | undefined {
  if (!day || !DAY.test(day)) return undefined;
  const instant = new Date(`${day}T${end ? '23:59:59.999' : '00:00:00'}`);
  return Number.isNaN(instant.getTime()) ? undefined : instant.toISOString();
}

export function ordersListQuery(storeId: string, search: OrdersSearch) {
  return trpc.orders.dashboardList.queryOptions(
    {
      storeId,
      status: search.status,
      q: search.q,
      from: dayBound(search.from, false),
      to: dayBound(search.to, true),
      cursor: search.cursor,
    },
    { refetchInterval: REFRESH_MS, refetchOnWindowFocus: true, placeholderData: keepPreviousData },
  );
}
