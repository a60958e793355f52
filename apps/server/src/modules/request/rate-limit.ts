/**
 * The one rate-limit step, without the transport. A route's policy names its budget; the same
 * step runs on /trpc and REST (and for every call of a tRPC batch), for plain routes, and where
 * a service spends a budget of its own. The decision's headers go to the request's
 * ResponseSink, so they are on the answer whatever its status.
 */
import type { ResponseSink } from '../../lib/cookies.js';
import { AppError } from '../../lib/errors.js';
import { rateLimited } from '../../lib/metrics.js';
import type { RateLimitDecision, RateLimitRule } from '../../lib/rate-limit.js';
import type { Context } from './context.js';

export function setRateLimitHeaders(response: ResponseSink, rule: RateLimitRule, decision: RateLimitDecision): void {
  const resetSeconds = Math.ceil(decision.resetMs / 1000);
  const windowSeconds = Math.ceil(rule.windowMs / 1000);
  const headers = response.headers;
  headers['X-RateLimit-Limit'] = String(decision.limit);
  headers['X-RateLimit-Remaining'] = String(decision.remaining);
  headers['X-RateLimit-Reset'] = String(resetSeconds);
  // IETF draft-ietf-httpapi-ratelimit-headers structured fields.
  headers['RateLimit-Policy'] = `"${rule.name}";q=${rule.max};w=${windowSeconds}`;
  headers.RateLimit = `"${rule.name}";r=${decision.remaining};t=${resetSeconds}`;
  if (decision.allowed) delete headers['Retry-After'];
  else headers['Retry-After'] = String(Math.max(1, resetSeconds));
}

/** The remaining budget the answer's headers already promise (the lowest of the budgets applied so far). */
export function promisedRemaining(response: ResponseSink): number {
  const value = response.headers['X-RateLimit-Remaining'];
  return value === undefined ? Number.POSITIVE_INFINITY : Number(value);
}

export async function enforceRateLimit(
  ctx: Pick<Context, 'deps' | 'clock' | 'caller' | 'answer'>,
  rule: RateLimitRule,
  key = ctx.caller.ip,
): Promise<void> {
  const decision = await ctx.deps.limiter.hit(key, rule, ctx.clock.now().getTime());
  setRateLimitHeaders(ctx.answer, rule, decision);
  if (!decision.allowed) {
    rateLimited.inc({ route: rule.name });
    throw new AppError('rate_limited', undefined, { bare: rule.bareBody });
  }
}

/**
 * A budget of the service's own beside the route's (per account, per e-mail address): refused
 * as the route's is, and its headers replace the route's only where it is the tighter one, so
 * the answer promises the least that is left.
 */
export async function enforceTighterLimit(
  ctx: Pick<Context, 'deps' | 'clock' | 'answer'>,
  rule: RateLimitRule,
  key: string,
): Promise<void> {
  const decision = await ctx.deps.limiter.hit(key, rule, ctx.clock.now().getTime());
  if (!decision.allowed || decision.remaining < promisedRemaining(ctx.answer))
    setRateLimitHeaders(ctx.answer, rule, decision);
  if (!decision.allowed) {
    rateLimited.inc({ route: rule.name });
    throw new AppError('rate_limited', undefined, { bare: rule.bareBody });
  }
}
