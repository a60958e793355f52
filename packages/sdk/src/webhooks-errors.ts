/**
 * What a webhook that fails verification throws: `WebhookVerificationError`, its codes, and the
 * one way a malformed signature header is reported.
 */
import { SvcError } from './errors.js';

export type WebhookVerificationErrorCode =
  /** None of the signature headers, or an incomplete set of the Standard Webhooks ones. */
  | 'missing_header'
  /** A signature header that cannot be parsed. */
  | 'malformed_header'
  /** The signature is right but its timestamp is older (a replay?) or newer than the tolerance. */
  | 'timestamp_out_of_tolerance'
  /** No signature matches: another body (re-serialised JSON?), another secret, or a forgery. */
  | 'signature_mismatch'
  /** The body was given parsed, not as the raw bytes received. */
  | 'payload_not_raw'
  /** The secret is not a `whsec_...` string as shown by the service. */
  | 'secret_malformed'
  /** `toleranceSeconds` is not a positive number. */
  | 'tolerance_invalid'
  /** The headers argument is neither the request's headers nor a signature header's value. */
  | 'headers_invalid';

export class WebhookVerificationError extends SvcError<WebhookVerificationErrorCode> {
  override name = 'WebhookVerificationError';

  constructor(code: WebhookVerificationErrorCode, message: string) {
    super(message, { code });
  }
}

export function malformed(header: string, why: string): WebhookVerificationError {
  return new WebhookVerificationError('malformed_header', `The ${header} header is malformed: ${why}.`);
}
