/**
 * Procedure builders. Every procedure starts from `baseProcedure`, which applies the
 * route's rate limit and, where meta says `idempotent`, the Idempotency-Key step, and
 * turns whatever a procedure throws into an AppError, so /trpc and REST answer with the
 * same status and code.
 */
import { AppError, toPublicError } from '../lib/errors.js';
import { applyIdempotency } from './idempotency.middleware.js';
import { enforceRateLimit } from './rate-limit.middleware.js';
import { t } from './init.js';

export const router = t.router;

const normaliseErrors = t.middleware(async ({ ctx, path, next }) => {
  const result = await next();
  if (!result.ok && !(result.error instanceof AppError)) {
    const pub = toPublicError(result.error);
    // The original is logged here, once; the client only ever sees `pub`.
    if (pub.internal) ctx.log.error({ err: result.error.cause ?? result.error, path }, 'procedure failed');
    throw new AppError(pub.code, pub.message, { issues: pub.issues, cause: result.error });
  }
  return result;
});

const applyRateLimit = t.middleware(async ({ ctx, meta, next }) => {
  if (meta?.rateLimit) await enforceRateLimit(ctx, meta.rateLimit);
  return next();
});

// Rate limit first: a replay or a 409 still counts against the client's budget.
export const baseProcedure = t.procedure.use(normaliseErrors).use(applyRateLimit).use(applyIdempotency);

/** Anyone may call it; limits come from meta. */
export const publicProcedure = baseProcedure;
