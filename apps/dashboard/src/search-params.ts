/**
 * Reading a URL's search params for a route's `validateSearch`: anything a visitor typed into the
 * address bar is either a value of the expected shape or nothing. No zod here: the router's chunk,
 * part of the shell's first load, imports this module and each screen's `search.ts`.
 */

/** A search param that is a non-empty string of at most `max` characters, or nothing. */
export function text(value: unknown, max = 200): string | undefined {
  return typeof value === 'string' && value.length > 0 && value.length <= max ? value : undefined;
}

/** A search param that is one of `allowed`, or nothing. */
export function oneOf<T extends string>(value: unknown, allowed: readonly T[]): T | undefined {
  return allowed.includes(value as T) ? (value as T) : undefined;
}

/** A keyset-paged list with a search box: the page's cursor and the query. */
export interface PageSearch {
  cursor?: string;
  q?: string;
}
export const validatePageSearch = (search: Record<string, unknown>): PageSearch => ({
  cursor: text(search.cursor),
  q: text(search.q),
});
