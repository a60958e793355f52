/** The Events list's search params: its filters and the page's cursor, kept in the URL. */
import { text } from '../../search-params';

export interface EventsSearch {
  type?: string;
  from?: string;
  to?: string;
  cursor?: string;
}
export const validateEventsSearch = (search: Record<string, unknown>): EventsSearch => ({
  type: text(search.type, 50),
  from: text(search.from, 40),
  to: text(search.to, 40),
  cursor: text(search.cursor),
});
