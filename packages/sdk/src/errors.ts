/**
 * The SDK's error base. Every error the SDK throws on purpose is an `SvcError`; the API
 * errors of the coming clients extend it with their HTTP `status` and the API's `code`
 * (one of `ERROR_CODES`), the webhook verifier with its own codes.
 */

const BRAND = Symbol.for('@svc/sdk.SvcError');

export interface SvcErrorOptions<C extends string = string> {
  code: C;
  /** HTTP status of the answer, for errors that come from an API response. */
  status?: number | undefined;
  /** Seconds to wait before retrying, when the service said so (`Retry-After`). */
  retryAfter?: number | undefined;
  cause?: unknown;
}

export class SvcError<C extends string = string> extends Error {
  override name = 'SvcError';
  /** What went wrong, machine-readable: switch on this, not on `message`. */
  readonly code: C;
  // `declare`: no own property (not even `undefined`) unless the error has one.
  declare readonly status?: number;
  declare readonly retryAfter?: number;

  constructor(message: string, options: SvcErrorOptions<C>) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = options.code;
    if (options.status !== undefined) (this as { status?: number }).status = options.status;
    if (options.retryAfter !== undefined) (this as { retryAfter?: number }).retryAfter = options.retryAfter;
    Object.defineProperty(this, BRAND, { value: true });
  }
}

/**
 * True for any `SvcError`, also one thrown by another copy of the SDK (the ESM and the CJS
 * build loaded side by side), where `instanceof` says false.
 */
export function isSvcError(value: unknown): value is SvcError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
}
