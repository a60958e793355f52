/** What the /trpc adapter and the REST adapter share: context and error logging. */
import { TRPCError } from '@trpc/server';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../lib/errors.js';

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
  if (error.cause instanceof AppError || error.code !== 'INTERNAL_SERVER_ERROR') return;
  (req as FastifyRequest).log.error({ err: error.cause ?? error, path }, 'request failed in tRPC');
}
