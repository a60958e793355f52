/**
 * The one rate-limit step. A procedure's `meta.rateLimit` names its budget; the same
 * middleware runs on /trpc and REST, and for every call of a tRPC batch.
 */
import type { FastifyReply } from 'fastify';
import type { RateLimitDecision, RateLimitRule } from '../lib/rate-limit.js';
import { AppError } from '../lib/errors.js';
import { rateLimited } from '../lib/metrics.js';
import type { Context } from './context.js';

export function setRateLimitHeaders(res: FastifyReply, rule: RateLimitRule, decision: RateLimitDecision): void {
  const resetSeconds = Math.ceil(decision.resetMs / 1000);
  const windowSeconds = Math.ceil(rule.windowMs / 1000);
  res.header('X-RateLimit-Limit', String(decision.limit));
  res.header('X-RateLimit-Remaining', String(decision.remaining));
  res.header('X-RateLimit-Reset', String(resetSeconds));
  // IETF draft-ietf-httpapi-ratelimit-headers structured fields.
  res.header('RateLimit-Policy', `"${rule.name}";q=${rule.max};w=${windowSeconds}`);
  res.header('RateLimit', `"${rule.name}";r=${decision.remaining};t=${resetSeconds}`);
  if (!decision.allowed) res.header('Retry-After', String(Math.max(1, resetSeconds)));
}

export async function enforceRateLimit(ctx: Context, rule: RateLimitRule, key = ctx.ip): Promise<void> {
  const decision = await ctx.deps.limiter.hit(key, rule, ctx.clock.now().getTime());
  setRateLimitHeaders(ctx.res, rule, decision);
  if (!decision.allowed) {
    rateLimited.inc({ route: rule.name });
    throw new AppError('rate_limited', undefined, { bare: rule.bareBody });
  }
}
