/** The error classes every entry point exports: what its calls throw, to catch and tell apart. */
export {
  SvcApiError,
  SvcInvalidRequestError,
  SvcAuthenticationError,
  SvcPermissionError,
  SvcNotFoundError,
  SvcConflictError,
  SvcIdempotencyError,
  SvcRateLimitError,
  SvcConnectionError,
  type SvcErrorType,
  type SvcApiErrorIssue,
  type ConnectionErrorCode,
} from '../api-errors.js';
export type { TErrorCode, TErrorBody } from '../error-codes.js';
export { SvcError, isSvcError, type SvcErrorOptions } from '../errors.js';
export type { ClientOptions, RequestOptions, CreateRequestOptions, FetchLike } from '../transport.js';
