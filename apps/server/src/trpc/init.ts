/**
 * The tRPC instance: context, the OpenAPI meta type, and the error formatter that lets
 * no internal message, stack or SQL reach a client on /trpc (REST bodies are reshaped
 * from the same shape in http/rest.ts).
 */
import { initTRPC } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { TErrorCode, TErrorIssue } from '@svc/schemas';
import type { RateLimitRule } from '../lib/rate-limit.js';
import { toPublicError } from '../lib/errors.js';
import type { Context } from './context.js';

export type SvcMeta = OpenApiMeta<{
  /** Success status on REST when it is not 200 (201 create, 204 delete). */
  successStatus?: 201 | 204;
  /** Route budget per client; enforced by the base middleware, documented with 429. */
  rateLimit?: RateLimitRule;
  /** How the route authenticates, for the OpenAPI document (the guards enforce it). */
  auth?: 'session' | 'apiKey' | 'customer';
  /** Honours an Idempotency-Key header (trpc/idempotency.middleware.ts); documented with 409/422. */
  idempotent?: boolean;
}>;

export interface SvcErrorData {
  code: TErrorCode;
  httpStatus: number;
  path?: string | undefined;
  issues?: TErrorIssue[];
  bare?: boolean;
}

export const t = initTRPC
  .context<Context>()
  .meta<SvcMeta>()
  .create({
    isDev: false,
    errorFormatter({ shape, error }) {
      const pub = toPublicError(error);
      const data: SvcErrorData = { code: pub.code, httpStatus: pub.status, path: shape.data.path };
      if (pub.issues) data.issues = pub.issues;
      if (pub.bare) data.bare = true;
      return { message: pub.message, code: shape.code, data };
    },
  });
