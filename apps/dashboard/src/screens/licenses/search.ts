/** The Licenses list's search params: its filters and the page's cursor, kept in the URL. */
import { oneOf, text } from '../../search-params';

// The API's license statuses (@svc/schemas LICENSE_STATUSES), repeated so the shell does not load zod; a test compares them.
export const LICENSE_STATUSES = ['active', 'inactive', 'expired', 'disabled'] as const;

export interface LicensesSearch {
  productId?: string;
  status?: (typeof LICENSE_STATUSES)[number];
  cursor?: string;
}
export const validateLicensesSearch = (search: Record<string, unknown>): LicensesSearch => ({
  productId: text(search.productId, 32),
  status: oneOf(search.status, LICENSE_STATUSES),
  cursor: text(search.cursor),
});
