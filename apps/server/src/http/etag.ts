/** Conditional GETs: whether a request's If-None-Match names an answer's ETag. */

/** Whether an If-None-Match names this ETag (a list, weak or strong, or `*`). */
export function ifNoneMatchHas(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((tag) => {
    const trimmed = tag.trim();
    return trimmed === '*' || trimmed === etag || trimmed === `W/${etag}`;
  });
}
