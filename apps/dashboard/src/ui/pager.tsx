/**
 * Keyset paging under a table: `Next page` follows the API's nextCursor (kept in the URL by the
 * screen), `First page` goes back to the start. Keyset cursors only go forward, so there is no
 * numbered page and no `Previous page`; the browser's Back button returns to the page before.
 */
export function KeysetPager({
  nextCursor,
  atStart,
  onNext,
  onFirst,
}: {
  nextCursor: string | null;
  /** Whether this is the first page (no cursor in the URL). */
  atStart: boolean;
  onNext: (cursor: string) => void;
  onFirst: () => void;
}) {
  if (atStart && !nextCursor) return null;
  return (
    <nav className="pager" aria-label="Pages">
      {!atStart && (
        <button type="button" className="button" onClick={onFirst}>
          First page
        </button>
      )}
      {nextCursor && (
        <button type="button" className="button" onClick={() => onNext(nextCursor)}>
          Next page
        </button>
      )}
    </nav>
  );
}
