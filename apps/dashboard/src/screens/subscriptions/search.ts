/** The Subscriptions list's search params: its filters and the page's cursor, kept in the URL. */
import { oneOf, text } from '../../search-params';

// The API's statuses (@svc/schemas SUBSCRIPTION_STATUSES), repeated here so the shell does not load zod; a test compares them.
export const SUBSCRIPTION_STATUSES = [
  'incomplete',
  'incomplete_expired',
  'trialing',
  'active',
  'past_due',
  'paused',
  'canceled',
] as const;
export type SubscriptionStatusFilter = (typeof SUBSCRIPTION_STATUSES)[number];

export interface SubscriptionsSearch {
  status?: SubscriptionStatusFilter;
  productId?: string;
  email?: string;
  cursor?: string;
}
export const validateSubscriptionsSearch = (search: Record<string, unknown>): SubscriptionsSearch => ({
  status: oneOf(search.status, SUBSCRIPTION_STATUSES),
  productId: text(search.productId, 32),
  email: text(search.email, 320),
  cursor: text(search.cursor),
});
