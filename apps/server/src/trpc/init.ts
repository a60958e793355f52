/**
 * The tRPC instance: context, the route meta type, and the error formatter that lets no
 * internal message, stack or SQL reach a client on /trpc (REST bodies are reshaped from the
 * same shape in http/rest.ts).
 */
import { initTRPC } from '@trpc/server';
import { TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { TErrorCode, TErrorIssue } from '@svc/schemas';
import { publicError, trpcCodeOf } from './errors.js';
import type { ApiContext } from './context.js';
import type { RoutePolicy } from './policy.js';

/**
 * A procedure's meta: its documented route (trpc-to-openapi's `openapi`) and its whole policy.
 * The builders in procedures.ts fill the auth, CSRF and CORS parts (the guards they apply are
 * modules/access/guards.ts); each procedure adds its path, its error codes and, where it has
 * them, its limit, idempotency and success status. Every field is optional here only because
 * tRPC merges meta in steps.
 */
export type SvcMeta = OpenApiMeta<Partial<RoutePolicy>>;

export interface SvcErrorData {
  code: TErrorCode;
  httpStatus: number;
  path?: string | undefined;
  issues?: TErrorIssue[];
  bare?: boolean;
}

export const t = initTRPC
  .context<ApiContext>()
  .meta<SvcMeta>()
  .create({
    isDev: false,
    errorFormatter({ shape, error }) {
      const pub = publicError(error);
      const data: SvcErrorData = { code: pub.code, httpStatus: pub.status, path: shape.data.path };
      if (pub.issues) data.issues = pub.issues;
      if (pub.bare) data.bare = true;
      // tRPC's numeric code follows our status (an AppError reaches here wrapped as an internal error).
      return { message: pub.message, code: TRPC_ERROR_CODES_BY_KEY[trpcCodeOf(pub.status)], data };
    },
  });
