/** What the /trpc adapter and the REST adapter share: context and error logging, the order of a batch's mutations; the /trpc answer's type. */
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
  if (error.cause instanceof AppError || error.code !== 'INTERNAL_SERVER_ERROR') return;
  const cause = error.cause ?? error;
  logUnshown((req as FastifyRequest).log, cause, toPublicError(cause), { path }, 'request failed in tRPC');
}

/**
 * Every /trpc answer is JSON, and says so. tRPC types the answers it makes itself, before any
 * procedure runs (a batch over TRPC_MAX_BATCH_SIZE, a body that is not application/json), as
 * `text/plain`; the calls' answers it types itself. A streamed batch (`trpc-accept:
 * application/jsonl`) keeps the type tRPC gives it.
 */
export function jsonAnswers({ info }: { info?: { accept?: string | null } | undefined }): {
  headers?: Record<string, string>;
} {
  return info?.accept === 'application/jsonl' ? {} : { headers: { 'content-type': 'application/json' } };
}

const turns = new WeakMap<object, Promise<unknown>>();
const settle = () => undefined;

/**
 * Runs `call` once the calls of the same request that asked before it have settled, whatever
 * their outcome: the mutations of one /trpc batch run one after another, in the batch's order
 * (docs/decisions.md, #37). `request` is what the batch's calls share (their ResponseSink). A
 * REST request or a single call waits for nothing.
 */
export function inTurn<T>(request: object, call: () => Promise<T>): Promise<T> {
  const before = turns.get(request);
  const mine = before ? before.then(call) : call();
  turns.set(request, mine.then(settle, settle));
  return mine;
}
