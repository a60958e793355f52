/**
 * The one error model: every error code the API can answer with, and the single
 * code -> HTTP status table. Codes are added to, never renamed (docs/architecture.md, Errors).
 */
import { z } from 'zod';

export const ERROR_STATUS = {
  invalid_json: 400,
  unsupported_media_type: 415,
  payload_too_large: 413,
  validation_failed: 400,
  unauthorized: 401,
  /**
   * A seller's sign-in past its account's attempts: the password must come with the one-time code
   * e-mailed to the account (sent when the password is right).
   */
  sign_in_code_required: 401,
  /**
   * A seller's sign-in with the right password on an account with two-factor sign-in: send it
   * again with `twoFactorCode` (the authenticator app's code, or a recovery code).
   */
  two_factor_required: 401,
  csrf_failed: 403,
  scope_missing: 403,
  store_forbidden: 403,
  permission_missing: 403,
  /**
   * A store whose owner requires two-factor sign-in, reached by a member whose account has it
   * off: turn it on on the Account page (which stays open), then come back.
   */
  two_factor_enrolment_required: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  rate_limited: 429,
  store_banned: 403,
  cart_empty: 400,
  /** A cart of test-mode and live products together (test mode: docs/architecture.md). */
  mixed_modes: 400,
  /** A route for test data only (deleting it) called with a live key (test mode: docs/architecture.md). */
  test_key_required: 403,
  out_of_stock: 400,
  /** A cart with a recurring product's line beside any other line: a subscription is checked out alone. */
  recurring_alone: 400,
  product_unavailable: 400,
  coupon_invalid: 400,
  blacklisted: 403,
  order_not_paid: 409,
  order_not_pending: 400,
  nothing_to_deliver: 400,
  order_not_deliverable: 400,
  signature_invalid: 400,
  amount_mismatch: 400,
  webhook_disabled: 400,
  webhook_limit_reached: 400,
  url_not_allowed: 400,
  token_invalid: 400,
  activation_limit_reached: 409,
  license_inactive: 409,
  idempotency_key_reused: 422,
  idempotency_key_in_use: 409,
  service_unavailable: 503,
  /**
   * A subscription move that does not apply to its current status (resume an active one, cancel an
   * ended one); the message names the status.
   */
  invalid_transition: 409,
  /** The payment gateway refused or did not answer a call the action needs; nothing was changed. */
  gateway_error: 502,
  /**
   * A charge an action needs (a prorated plan change) was declined on the saved payment method;
   * nothing was changed.
   */
  payment_failed: 402,
  internal_error: 500,
} as const satisfies Record<string, number>;

export type TErrorCode = keyof typeof ERROR_STATUS;

export const ERROR_CODES = Object.keys(ERROR_STATUS) as [TErrorCode, ...TErrorCode[]];

export const ZErrorCode = z.enum(ERROR_CODES);

export const ZErrorIssue = z.object({
  path: z.string(),
  message: z.string(),
});
export type TErrorIssue = z.infer<typeof ZErrorIssue>;

/** The body of every non-2xx REST answer. */
export const ZErrorBody = z.object({
  error: z.string(),
  code: ZErrorCode,
  issues: z.array(ZErrorIssue).optional(),
});
export type TErrorBody = z.infer<typeof ZErrorBody>;

export function statusOf(code: TErrorCode): number {
  return ERROR_STATUS[code];
}

export function isErrorCode(value: unknown): value is TErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_STATUS, value);
}
