/**
 * The one place our errors meet tRPC's. An AppError is a plain Error (lib/errors.ts); tRPC
 * carries whatever a procedure throws as a TRPCError, so on the way out it becomes one with the
 * code of its status and itself as the cause (`toTRPCError`), and on the way to the client every
 * TRPCError is read back into our terms (`publicError`): ours from its cause, tRPC's own request
 * errors (a parse error, bad input, a batch over the limit) in our codes, anything else internal.
 */
import { TRPCError } from '@trpc/server';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';
import { ERROR_STATUS, type TErrorCode } from '@svc/schemas';
import { ZodError } from 'zod';
import { AppError, GENERIC_MESSAGE, toPublicError, zodIssues, type PublicError } from '../lib/errors.js';

const TRPC_CODE_BY_STATUS: Record<number, TRPC_ERROR_CODE_KEY> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  402: 'PAYMENT_REQUIRED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_SUPPORTED',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'UNPROCESSABLE_CONTENT',
  429: 'TOO_MANY_REQUESTS',
  500: 'INTERNAL_SERVER_ERROR',
  502: 'BAD_GATEWAY',
  503: 'SERVICE_UNAVAILABLE',
};

/** What a tRPC error that we did not raise ourselves means in our codes. */
const APP_CODE_BY_TRPC_CODE: Partial<Record<TRPC_ERROR_CODE_KEY, TErrorCode>> = {
  PARSE_ERROR: 'invalid_json',
  BAD_REQUEST: 'validation_failed',
  NOT_FOUND: 'not_found',
  METHOD_NOT_SUPPORTED: 'method_not_allowed',
  PAYLOAD_TOO_LARGE: 'payload_too_large',
  UNSUPPORTED_MEDIA_TYPE: 'unsupported_media_type',
  TOO_MANY_REQUESTS: 'rate_limited',
  UNAUTHORIZED: 'unauthorized',
};

/** tRPC's code for an HTTP status (what /trpc clients read besides our `data.code`). */
export function trpcCodeOf(status: number): TRPC_ERROR_CODE_KEY {
  return TRPC_CODE_BY_STATUS[status] ?? 'INTERNAL_SERVER_ERROR';
}

/** Our error as tRPC carries it: the code of its status, its message, itself as the cause. */
export function toTRPCError(error: AppError): TRPCError {
  return new TRPCError({ code: trpcCodeOf(ERROR_STATUS[error.appCode]), message: error.message, cause: error });
}

/** The AppError a thrown value is or carries (a TRPCError from toTRPCError, or one tRPC wrapped). */
export function appErrorOf(error: unknown): AppError | undefined {
  if (error instanceof AppError) return error;
  if (error instanceof TRPCError && error.cause instanceof AppError) return error.cause;
  return undefined;
}

/**
 * What a client may learn about anything a tRPC call threw, on /trpc and REST alike. Only our
 * errors and tRPC's own request errors keep a message; everything else is lib/errors.ts's call.
 */
export function publicError(error: unknown): PublicError {
  const ours = appErrorOf(error);
  if (ours) return toPublicError(ours);
  if (!(error instanceof TRPCError)) return toPublicError(error);
  if (error.code === 'BAD_REQUEST' && error.cause instanceof SyntaxError) {
    return { code: 'invalid_json', status: 400, message: GENERIC_MESSAGE.invalid_json!, internal: false };
  }
  if (error.code === 'BAD_REQUEST' && error.cause instanceof ZodError) {
    return {
      code: 'validation_failed',
      status: 400,
      message: GENERIC_MESSAGE.validation_failed!,
      issues: zodIssues(error.cause),
      internal: false,
    };
  }
  if (error.code === 'INTERNAL_SERVER_ERROR' || error.code === 'SERVICE_UNAVAILABLE') {
    return toPublicError(error.cause ?? new Error(error.message));
  }
  const code = APP_CODE_BY_TRPC_CODE[error.code];
  if (code) {
    // tRPC's own request errors (bad batch size, parse error) carry safe messages,
    // but a parse error's message quotes the body: use ours there.
    const message = code === 'validation_failed' ? error.message : GENERIC_MESSAGE[code]!;
    return { code, status: ERROR_STATUS[code], message, internal: false };
  }
  return { code: 'internal_error', status: 500, message: GENERIC_MESSAGE.internal_error!, internal: true };
}
