/**
 * The error codes the API can answer with, as plain data: the SDK ships without zod, so it
 * cannot re-export them from @svc/schemas (that pulls zod into the bundle and a private
 * package into the published types). Kept equal to `ERROR_CODES` of
 * packages/schemas/src/errors.ts by a test (webhooks.test.ts); codes are only ever added.
 */
export const ERROR_CODES = [
  'invalid_json',
  'unsupported_media_type',
  'payload_too_large',
  'validation_failed',
  'unauthorized',
  'sign_in_code_required',
  'two_factor_required',
  'csrf_failed',
  'scope_missing',
  'store_forbidden',
  'permission_missing',
  'two_factor_enrolment_required',
  'not_found',
  'method_not_allowed',
  'conflict',
  'rate_limited',
  'store_banned',
  'cart_empty',
  'mixed_modes',
  'test_key_required',
  'out_of_stock',
  'recurring_alone',
  'product_unavailable',
  'coupon_invalid',
  'blacklisted',
  'order_not_paid',
  'order_not_pending',
  'nothing_to_deliver',
  'order_not_deliverable',
  'signature_invalid',
  'amount_mismatch',
  'webhook_disabled',
  'webhook_limit_reached',
  'url_not_allowed',
  'token_invalid',
  'activation_limit_reached',
  'license_inactive',
  'idempotency_key_reused',
  'idempotency_key_in_use',
  'service_unavailable',
  'invalid_transition',
  'gateway_error',
  'payment_failed',
  'internal_error',
] as const;

export type TErrorCode = (typeof ERROR_CODES)[number];

/** The body of every non-2xx REST answer. */
export interface TErrorBody {
  error: string;
  code: TErrorCode;
  issues?: Array<{ path: string; message: string }> | undefined;
}
