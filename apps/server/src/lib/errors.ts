/**
 * The one error type. Services throw AppError with a code from @svc/schemas; the HTTP
 * status follows from that code's row in ERROR_STATUS on every transport. It is a plain Error:
 * the transports map it (trpc/errors.ts for tRPC, http/error-reply.ts for the rest). Anything
 * else that is thrown is an internal error whose message never leaves the process.
 */
import { ERROR_STATUS, type TErrorCode, type TErrorIssue } from '@svc/schemas';
import { ZodError } from 'zod';
import { databaseFailure } from './database-failure.js';

/** The message a code carries when the thrower gave none (also what a framework error shows). */
export const GENERIC_MESSAGE: Partial<Record<TErrorCode, string>> = {
  invalid_json: 'The request body is not valid JSON.',
  validation_failed: 'The request is not valid.',
  not_found: 'Not found.',
  method_not_allowed: 'Method not allowed.',
  payload_too_large: 'The request body is too large.',
  unsupported_media_type: 'Send the body as application/json.',
  rate_limited: 'Too many requests. Please try again later.',
  unauthorized: 'Authentication required.',
  service_unavailable: 'The service is unavailable; try again shortly.',
  internal_error: 'Internal server error.',
};

export class AppError extends Error {
  override readonly name = 'AppError';
  readonly appCode: TErrorCode;
  readonly issues: TErrorIssue[] | undefined;
  /** REST answers with `{ error }` alone (a documented body that has no code). */
  readonly bare: boolean;

  constructor(
    code: TErrorCode,
    message?: string,
    opts: { issues?: TErrorIssue[]; cause?: unknown; bare?: boolean } = {},
  ) {
    super(message ?? GENERIC_MESSAGE[code] ?? code, { cause: opts.cause });
    this.appCode = code;
    this.issues = opts.issues;
    this.bare = opts.bare ?? false;
  }

  get status(): number {
    return ERROR_STATUS[this.appCode];
  }
}

export interface PublicError {
  code: TErrorCode;
  bare?: boolean;
  status: number;
  message: string;
  issues?: TErrorIssue[];
  /** True when the cause must be logged: nothing of it was shown to the client. */
  internal: boolean;
}

export function zodIssues(error: ZodError): TErrorIssue[] {
  return error.issues.flatMap((issue) => {
    const path = issue.path.map(String);
    // One issue per unknown field, named by its own path, so clients can point at it.
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ path: [...path, key].join('.'), message: 'Unknown field.' }));
    }
    return [{ path: path.join('.'), message: issue.message }];
  });
}

/**
 * node-postgres and knex failures that carry no code, only a message: the server died under a
 * query (a crash, an immediate shutdown, a network cut) or no connection could be had in time.
 * MikroORM wraps them in a DriverException whose message ends with the driver's (after the SQL).
 * knex's "Transaction query already complete" is what a transaction's next statement gets when
 * its connection failed under it (its BEGIN or an earlier statement on a connection PostgreSQL
 * had just closed); MikroORM surfaces that instead of the connection error. (A statement on a
 * transaction the code itself had finished would say the same; it is logged either way.)
 */
const CONNECTION_LOST =
  /(?:Connection terminated(?: unexpectedly| due to connection timeout)?|Connection ended unexpectedly|Client has encountered a connection error and is not queryable|Transaction query already complete, run with DEBUG=knex:tx for more info)$/;

/** Postgres SQLSTATEs and driver failures that mean "the database is not there right now". */
function isDatabaseUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current; depth++) {
    const e = current as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown };
    if (e.name === 'ConnectionException' || e.name === 'KnexTimeoutError') return true;
    if (typeof e.code === 'string') {
      if (
        [
          'ECONNREFUSED',
          'ECONNRESET',
          'ETIMEDOUT',
          'EPIPE',
          '57P01',
          '57P02',
          '57P03',
          '08006',
          '08001',
          '08003',
        ].includes(e.code)
      )
        return true;
    } else if (typeof e.message === 'string' && CONNECTION_LOST.test(e.message)) {
      return true;
    }
    current = e.cause;
  }
  return false;
}

/**
 * What a client may learn about an error. Only AppErrors keep a message; an unreachable database
 * is 503 and a write that lost a race 409, without their text; everything else is internal_error.
 * tRPC's own errors (and ours as tRPC carries them) are read by trpc/errors.ts, which ends here.
 */
export function toPublicError(error: unknown): PublicError {
  if (error instanceof AppError) {
    return {
      code: error.appCode,
      status: error.status,
      message: error.message,
      issues: error.issues,
      bare: error.bare,
      internal: false,
    };
  }
  if (isDatabaseUnavailable(error)) {
    return { code: 'service_unavailable', status: 503, message: GENERIC_MESSAGE.service_unavailable!, internal: true };
  }
  if (isConflict(error)) {
    return {
      code: 'conflict',
      status: 409,
      message: 'The change conflicts with the current state; retry.',
      internal: true,
    };
  }
  return { code: 'internal_error', status: 500, message: GENERIC_MESSAGE.internal_error!, internal: true };
}

/**
 * A change the current state refused: a unique or foreign-key constraint (a race with a
 * concurrent insert, or with the deletion of what the row points at) or an optimistic lock.
 */
const CONFLICT_ERRORS = new Set([
  'UniqueConstraintViolationException',
  'ForeignKeyConstraintViolationException',
  'OptimisticLockError',
]);

function isConflict(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  if (typeof name === 'string' && CONFLICT_ERRORS.has(name)) return true;
  const sqlState = databaseFailure(error)?.sqlState;
  return sqlState === '23505' || sqlState === '23503';
}

/** The part of a logger `logUnshown` writes to. */
interface FailureLog {
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/**
 * Logs, once, an error the client learnt nothing of (`internal`). A conflict is expected (two
 * writers raced): a warning that names the constraint and its table, never the statement or the
 * row. Anything else is an error with the error itself; the logger keeps a database error's
 * names and drops its statement (lib/logger.ts).
 */
export function logUnshown(
  log: FailureLog,
  error: unknown,
  pub: PublicError,
  fields: Record<string, unknown>,
  message: string,
): void {
  if (!pub.internal) return;
  if (pub.code !== 'conflict') {
    log.error({ ...fields, err: error }, message);
    return;
  }
  const refused = databaseFailure(error);
  if (refused) log.warn({ ...fields, database: refused }, 'conflict: the database refused the change');
  else log.warn({ ...fields, err: error }, 'conflict: the change lost a race');
}

/** `400 validation_failed` naming one field: for rules a schema cannot state. */
export function invalidField(path: string, message: string): AppError {
  return new AppError('validation_failed', 'The request is not valid.', { issues: [{ path, message }] });
}
