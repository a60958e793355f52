/** Walks a cursor-paged list to its end, one page request at a time. */

interface Page {
  hasMore: boolean;
  nextCursor: string | null;
}

/**
 * Yields every item of every page: `fetchPage(cursor)` is called with no cursor first, then
 * with each page's `nextCursor` while `hasMore` says so. Stop early with `break`; nothing is
 * fetched ahead.
 */
export async function* walkPages<TPage extends Page, TItem>(
  fetchPage: (cursor: string | undefined) => Promise<TPage>,
  itemsOf: (page: TPage) => TItem[],
): AsyncGenerator<TItem, void, undefined> {
  let cursor: string | undefined;
  for (;;) {
    const page = await fetchPage(cursor);
    yield* itemsOf(page);
    if (!page.hasMore || page.nextCursor === null) return;
    cursor = page.nextCursor;
  }
}
