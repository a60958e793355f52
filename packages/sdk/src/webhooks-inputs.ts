/**
 * What the webhook functions take, and the checks that refuse it with a useful message: the
 * secret, the raw body, the headers (a `Headers`, a plain object, or the signature header's
 * value), the tolerance and the clock; the header names and defaults.
 */
import { fromBase64, utf8, type Bytes } from './webhooks-crypto.js';
import { malformed, WebhookVerificationError } from './webhooks-errors.js';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300;

export const SERVICE_SIGNATURE_HEADER = 'x-service-signature';
export const STANDARD_ID_HEADER = 'webhook-id';
export const STANDARD_TIMESTAMP_HEADER = 'webhook-timestamp';
export const STANDARD_SIGNATURE_HEADER = 'webhook-signature';

/** The request body exactly as received: a string, a Node `Buffer`, a `Uint8Array` or an `ArrayBuffer`. */
export type RawBody = string | Uint8Array | ArrayBuffer;

/** Anything with a case-insensitive `get`, such as the Fetch API's `Headers`. */
export interface HeadersLike {
  get(name: string): string | null;
}

/**
 * Request headers: a `Headers` instance (fetch, Next.js, Hono, workers) or a plain object such
 * as Node's `req.headers` or a Lambda event's `headers`; names are matched case-insensitively.
 */
export type WebhookHeaders = HeadersLike | Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * What the verifying functions take as their second argument: the request's headers, or (as with
 * Stripe's `constructEvent`) the value of the `X-Service-Signature` header alone.
 */
export type WebhookSignatureInput = WebhookHeaders | string;

export const TIMESTAMP = /^\d{1,12}$/;

export function checkTolerance(value: number | undefined): number {
  const tolerance = value ?? DEFAULT_WEBHOOK_TOLERANCE_SECONDS;
  if (typeof tolerance !== 'number' || !Number.isFinite(tolerance) || tolerance <= 0) {
    throw new WebhookVerificationError(
      'tolerance_invalid',
      `toleranceSeconds must be a positive number of seconds, got ${String(tolerance)}: 0 or less would switch the replay protection off, which is refused. Leave it out for the default of ${DEFAULT_WEBHOOK_TOLERANCE_SECONDS}.`,
    );
  }
  return tolerance;
}

export function currentSeconds(now: Date | undefined): number {
  // Not `instanceof Date`: a Date from another realm (an iframe, a vm context) is one too.
  const ms =
    now === undefined ? Date.now() : Object.prototype.toString.call(now) === '[object Date]' ? now.getTime() : NaN;
  if (!Number.isFinite(ms)) throw new TypeError('options.now must be a valid Date.');
  return Math.floor(ms / 1000);
}

export function checkSecret(secret: unknown): asserts secret is string {
  if (typeof secret !== 'string') {
    throw new WebhookVerificationError(
      'secret_malformed',
      `The webhook secret must be a string (whsec_...), got ${secret === null ? 'null' : typeof secret}: is the environment variable set?`,
    );
  }
  if (secret !== secret.trim()) {
    throw new WebhookVerificationError(
      'secret_malformed',
      'The webhook secret is malformed: the secret has surrounding whitespace (a newline from the .env file or the copy?). Trim it where you load it.',
    );
  }
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX) || secret.length === WEBHOOK_SECRET_PREFIX.length) {
    throw new WebhookVerificationError(
      'secret_malformed',
      `The webhook secret is malformed: it must start with "${WEBHOOK_SECRET_PREFIX}", as the service shows it when the webhook is created or its secret rotated (not the secret prefix, nor an API key).`,
    );
  }
}

/** The Standard Webhooks key: the bytes the base64 after `whsec_` stands for. */
export function standardKey(secret: string): Bytes {
  const key = fromBase64(secret.slice(WEBHOOK_SECRET_PREFIX.length));
  if (key === null || key.length === 0) {
    throw new WebhookVerificationError(
      'secret_malformed',
      `The webhook secret is malformed: what follows "${WEBHOOK_SECRET_PREFIX}" is not base64.`,
    );
  }
  return key;
}

/** The body as bytes, copied; anything but raw data is refused. */
export function rawBytes(body: unknown): Bytes {
  if (typeof body === 'string') return utf8(body);
  if (body instanceof ArrayBuffer || Object.prototype.toString.call(body) === '[object ArrayBuffer]')
    return new Uint8Array((body as ArrayBuffer).slice(0));
  if (ArrayBuffer.isView(body)) return new Uint8Array(new Uint8Array(body.buffer, body.byteOffset, body.byteLength));
  const got =
    body === null
      ? 'null'
      : body === undefined
        ? 'undefined'
        : Array.isArray(body)
          ? 'an array'
          : typeof body === 'object'
            ? 'an object'
            : typeof body;
  throw new WebhookVerificationError(
    'payload_not_raw',
    `The webhook payload must be the raw request body (a string, Buffer, Uint8Array or ArrayBuffer), got ${got}. ` +
      'The signature covers the exact bytes that were sent, which JSON parsing loses: pass the raw bytes, e.g. express.raw({ type: "application/json" }) instead of express.json() for this route, or `await request.text()` with fetch-style requests.',
  );
}

/** One header's value, case-insensitively; undefined when absent. */
export function readHeader(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof headers !== 'object' || headers === null) {
    throw new TypeError('headers must be a Headers instance or an object of header names to values.');
  }
  if (typeof (headers as HeadersLike).get === 'function') {
    return (headers as HeadersLike).get(name) ?? undefined;
  }
  const values: string[] = [];
  for (const [key, value] of Object.entries(headers as Record<string, unknown>)) {
    if (key.toLowerCase() !== name || value === undefined || value === null) continue;
    if (typeof value === 'string') values.push(value);
    else if (Array.isArray(value)) values.push(...value.map(String));
    else if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
      values.push(String(value));
    else throw malformed(name, 'it is not text');
  }
  if (values.length === 0) return undefined;
  if (new Set(values).size > 1) throw malformed(name, 'it appears more than once with different values');
  return values[0];
}

/** The second argument must be headers or a signature header's value; say what to pass when it is not. */
export function checkHeadersArgument(headers: unknown): void {
  if (typeof headers === 'string' || (typeof headers === 'object' && headers !== null && !Array.isArray(headers)))
    return;
  const got = headers === null ? 'null' : Array.isArray(headers) ? 'an array' : typeof headers;
  throw new WebhookVerificationError(
    'headers_invalid',
    `The second argument must be the request's headers (a Headers object, or a plain object such as req.headers) or the X-Service-Signature header's value as a string; got ${got}.`,
  );
}

export function clip(value: string): string {
  return value.length > 40 ? `${value.slice(0, 40)}…` : value;
}
