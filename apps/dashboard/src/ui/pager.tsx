/**
 * Keyset paging under a table, the one pager of every keyset-paged screen: `Next page` links to
 * the same screen with the API's nextCursor in the URL's `cursor`, `First page` links to it without
 * one; every other search parameter (the screen's filters) is kept. Links typed from the registered
 * router: `from` is the full path of one of the screens whose URL carries `cursor` (`Link` refuses a
 * path the router does not have). Keyset cursors only go forward, so there is no numbered page and
 * no `Previous page`; the browser's Back button returns to the page before.
 */
import { Link } from '@tanstack/react-router';
import { buttonClass } from './button';

/** The screens paged by a keyset cursor kept in their URL. */
type PagedPath =
  | '/stores/$storeId/orders'
  | '/stores/$storeId/subscriptions'
  | '/stores/$storeId/customers'
  | '/stores/$storeId/tickets'
  | '/stores/$storeId/events'
  | '/stores/$storeId/licenses'
  | '/stores/$storeId/webhooks/$webhookId';

export function KeysetPager({
  from,
  cursor,
  nextCursor,
}: {
  from: PagedPath;
  /** This page's cursor (none: the first page). */
  cursor: string | undefined;
  /** The API's nextCursor: null on the last page. */
  nextCursor: string | null;
}) {
  if (!cursor && !nextCursor) return null;
  return (
    <nav className="pager" aria-label="Pages">
      {cursor && (
        <Link
          from={from}
          to="."
          search={(prev) => ({ ...prev, cursor: undefined })}
          className={buttonClass('secondary')}
        >
          First page
        </Link>
      )}
      {nextCursor && (
        <Link
          from={from}
          to="."
          search={(prev) => ({ ...prev, cursor: nextCursor })}
          className={buttonClass('secondary')}
        >
          Next page
        </Link>
      )}
    </nav>
  );
}
