/** Conditional GETs: whether a request's If-None-Match names an answer's ETag, and the 304 that says so. */
import type { FastifyReply } from 'fastify';

/** Whether an If-None-Match names this ETag (a list, weak or strong, or `*`). */
export function ifNoneMatchHas(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((tag) => {
    const trimmed = tag.trim();
    return trimmed === '*' || trimmed === etag || trimmed === `W/${etag}`;
  });
}

/**
 * 304 Not Modified, with the headers the route set that guide the cache (ETag, Cache-Control,
 * Vary) and no Content-Security-Policy. A browser merges a 304's headers into the answer it keeps
 * and shows that (RFC 9110 §15.4.5; Chromium does), so a policy on the 304 replaces the page's:
 * the `default-src 'none'` every answer starts with (security-headers.ts) once left a returning
 * buyer's store page unstyled and the cart's module refused. Without one, the page keeps the
 * policy its 200 carried, whatever that page's policy was (a store's accent colour is in it).
 */
export function sendNotModified(reply: FastifyReply): FastifyReply {
  reply.removeHeader('Content-Security-Policy');
  return reply.code(304).send();
}
