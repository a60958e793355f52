/**
 * The errors an API call can end in. Every one is an `SvcError` (so `isSvcError` and
 * `instanceof SvcError` hold), with a subclass per HTTP status a caller handles differently:
 *
 * | status | class                 | typical codes                                      |
 * | ------ | --------------------- | -------------------------------------------------- |
 * | 400    | `SvcInvalidRequestError` | validation_failed (see `issues`), cart_empty, coupon_invalid |
 * | 401    | `SvcAuthenticationError` | unauthorized                                     |
 * | 403    | `SvcPermissionError`  | scope_missing, store_forbidden, permission_missing |
 * | 404    | `SvcNotFoundError`    | not_found                                          |
 * | 409    | `SvcConflictError`    | conflict, out_of_stock, idempotency_key_in_use     |
 * | 422    | `SvcIdempotencyError` | idempotency_key_reused                             |
 * | 429    | `SvcRateLimitError`   | rate_limited (`retryAfter` in seconds)             |
 * | other  | `SvcApiError`         | internal_error, service_unavailable, gateway_error |
 * | none   | `SvcConnectionError`  | connection_failed, timeout, aborted (no answer)    |
 *
 * `type` names the class as a string, for a `switch` that survives two copies of the SDK.
 */
import type { TErrorCode } from './error-codes.js';
import { SvcError } from './errors.js';

export type SvcErrorType =
  | 'invalid_request'
  | 'authentication'
  | 'permission'
  | 'not_found'
  | 'conflict'
  | 'idempotency'
  | 'rate_limit'
  | 'api'
  | 'connection';

export interface SvcApiErrorIssue {
  /** The input field, dotted (`cart.0.quantity`), or a header name. */
  path: string;
  message: string;
}

/** The codes of an answer that never arrived. */
export type ConnectionErrorCode = 'connection_failed' | 'timeout' | 'aborted';

export interface SvcApiErrorInit {
  status?: number | undefined;
  code: TErrorCode | ConnectionErrorCode | (string & {});
  message: string;
  retryAfter?: number | undefined;
  issues?: SvcApiErrorIssue[] | undefined;
  requestId?: string | undefined;
  procedure: string;
  cause?: unknown;
}

/** An API call that failed: an error answer (with `status`) or no answer at all. */
export class SvcApiError extends SvcError<TErrorCode | ConnectionErrorCode | (string & {})> {
  override name = 'SvcApiError';
  readonly type: SvcErrorType = 'api';
  /** Field-level problems of a 400 `validation_failed`. */
  readonly issues: SvcApiErrorIssue[];
  /** The `X-Request-Id` of the answer, for support. */
  declare readonly requestId?: string;
  /** The procedure called, such as `orders.list`. */
  readonly procedure: string;

  constructor(init: SvcApiErrorInit) {
    super(init.message, { code: init.code, status: init.status, retryAfter: init.retryAfter, cause: init.cause });
    this.issues = init.issues ?? [];
    this.procedure = init.procedure;
    if (init.requestId !== undefined) (this as { requestId?: string }).requestId = init.requestId;
  }
}

/** A subclass of `SvcApiError` whose `type` is `T`: what the table below makes of each row. */
export interface SvcApiErrorClass<T extends SvcErrorType> {
  new (init: SvcApiErrorInit): SvcApiError & { readonly type: T };
  readonly prototype: SvcApiError & { readonly type: T };
}

/** One subclass from its row: its class name (also `error.name`) and its `type`. */
function apiErrorClass<T extends SvcErrorType>(name: string, type: T): SvcApiErrorClass<T> {
  const Class = class extends SvcApiError {
    override name = name;
    override readonly type: T = type;
  };
  Object.defineProperty(Class, 'name', { value: name });
  return Class;
}

export const SvcInvalidRequestError = apiErrorClass('SvcInvalidRequestError', 'invalid_request');
export const SvcAuthenticationError = apiErrorClass('SvcAuthenticationError', 'authentication');
export const SvcPermissionError = apiErrorClass('SvcPermissionError', 'permission');
export const SvcNotFoundError = apiErrorClass('SvcNotFoundError', 'not_found');
export const SvcConflictError = apiErrorClass('SvcConflictError', 'conflict');
export const SvcIdempotencyError = apiErrorClass('SvcIdempotencyError', 'idempotency');
export const SvcRateLimitError = apiErrorClass('SvcRateLimitError', 'rate_limit');
export const SvcConnectionError = apiErrorClass('SvcConnectionError', 'connection');
export type SvcInvalidRequestError = InstanceType<typeof SvcInvalidRequestError>;
export type SvcAuthenticationError = InstanceType<typeof SvcAuthenticationError>;
export type SvcPermissionError = InstanceType<typeof SvcPermissionError>;
export type SvcNotFoundError = InstanceType<typeof SvcNotFoundError>;
export type SvcConflictError = InstanceType<typeof SvcConflictError>;
export type SvcIdempotencyError = InstanceType<typeof SvcIdempotencyError>;
export type SvcRateLimitError = InstanceType<typeof SvcRateLimitError>;
export type SvcConnectionError = InstanceType<typeof SvcConnectionError>;

const BY_STATUS: Record<number, SvcApiErrorClass<SvcErrorType>> = {
  400: SvcInvalidRequestError,
  401: SvcAuthenticationError,
  403: SvcPermissionError,
  404: SvcNotFoundError,
  409: SvcConflictError,
  422: SvcIdempotencyError,
  429: SvcRateLimitError,
};

/** The error for an answer with `status` (or none, for a connection failure). */
export function apiErrorFor(init: SvcApiErrorInit): SvcApiError {
  if (init.status === undefined) return new SvcConnectionError(init);
  const Class = BY_STATUS[init.status] ?? SvcApiError;
  return new Class(init);
}
