/** A webhook page's search params: the deliveries' status filter and the page's cursor, kept in the URL. */
import { oneOf, text } from '../../search-params';

// The API's delivery statuses (@svc/schemas DELIVERY_STATUSES), repeated so the shell does not load zod; a test compares them.
export const DELIVERY_STATUSES = ['pending', 'success', 'failed', 'queued', 'skipped'] as const;

export interface DeliveriesSearch {
  status?: (typeof DELIVERY_STATUSES)[number];
  cursor?: string;
}
export const validateDeliveriesSearch = (search: Record<string, unknown>): DeliveriesSearch => ({
  status: oneOf(search.status, DELIVERY_STATUSES),
  cursor: text(search.cursor),
});
