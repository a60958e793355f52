/** The Orders list's search params: its filters and the page's cursor, kept in the URL. */
import { oneOf, text } from '../../search-params';

// The API's statuses (@svc/schemas ORDER_STATUSES), repeated here so the shell does not load zod; a test compares them.
export const ORDER_STATUSES = [
  'pending',
  'paid',
  'processing',
  'completed',
  'refunded',
  'cancelled',
  'expired',
] as const;
export type OrderStatusFilter = (typeof ORDER_STATUSES)[number];

export interface OrdersSearch {
  status?: OrderStatusFilter;
  q?: string;
  from?: string;
  to?: string;
  cursor?: string;
}
export const validateOrdersSearch = (search: Record<string, unknown>): OrdersSearch => ({
  status: oneOf(search.status, ORDER_STATUSES),
  q: text(search.q),
  from: text(search.from, 40),
  to: text(search.to, 40),
  cursor: text(search.cursor),
});
