/** What the /trpc adapter and the REST adapter share: context and error logging. */
import type { TRPCError } from '@trpc/server';
import type { FastifyRequest } from 'fastify';
import { AppError, logUnshown, toPublicError } from '../lib/errors.js';

/** Errors raised by tRPC outside any procedure middleware (those log themselves). */
export function logAdapterError({
  error,
  req,
  path,
}: {
  error: TRPCError;
  req: unknown;
  path?: string | undefined;
}): void {
  if (error instanceof AppError || error.code !== 'INTERNAL_SERVER_ERROR') return;
  const cause = error.cause ?? error;
  logUnshown((req as FastifyRequest).log, cause, toPublicError(cause), { path }, 'request failed in tRPC');
}
