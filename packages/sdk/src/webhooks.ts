/**
 * Verifying the webhooks the service sends, in the merchant's own server.
 *
 * Every delivery is signed twice:
 *  - `X-Service-Signature: t=<unix seconds>,v1=<hex>`, hex = HMAC-SHA256 keyed with the whole
 *    secret string (`whsec_...`) over `"<t>.<raw body>"`;
 *  - Standard Webhooks (https://www.standardwebhooks.com): `webhook-id` (the event id),
 *    `webhook-timestamp`, `webhook-signature: v1,<base64>`, base64 = HMAC-SHA256 keyed with
 *    the base64-decoded bytes after `whsec_` over `"<webhook-id>.<webhook-timestamp>.<raw body>"`.
 * `verifySignature` checks ours when it is there and falls back to Standard Webhooks only when
 * the request carries those headers alone.
 *
 * Everything runs on WebCrypto (`globalThis.crypto.subtle`), so the same code works in Node
 * (>= 20), Deno, Bun, browsers and edge runtimes; WebCrypto is asynchronous, hence every
 * function here returns a Promise.
 */
import { SvcError } from './errors.js';
import type { ApiProcedures } from './generated/api.js';

// ---------------------------------------------------------------------------------------------
// Events

/**
 * Every event the service sends, discriminated on `event`, each with its own `data`: generated
 * from the server's schemas (the events API's answer, `ZEventBody`), so a webhook body, an
 * `events.get` answer and each event of `events.list` / `events.iterate` are the same type.
 */
type AnyWebhookEvent = ApiProcedures['events.get']['output'];

/** Every event name: `order.created`, ..., `webhook.test`. */
export type WebhookEventName = AnyWebhookEvent['event'];

/**
 * A webhook body, discriminated on `event`: `WebhookEvent` is the union of all of them,
 * `WebhookEvent<'order.paid'>` one of them. `id` is the event id (`evt_...`), the same on every
 * retry (deduplicate on it); `createdAt` is when the event happened, not when it was sent.
 */
export type WebhookEvent<E extends WebhookEventName = WebhookEventName> = Extract<AnyWebhookEvent, { event: E }>;

/** The `data` of each event the service sends. */
export type WebhookEventDataMap = { [E in WebhookEventName]: WebhookEvent<E>['data'] };

export type OrderEvent = WebhookEvent<'order.created' | 'order.paid' | 'order.completed' | 'order.refunded'>;
export type ProductEvent = WebhookEvent<'product.created' | 'product.updated' | 'product.deleted'>;
export type LicenseEvent = WebhookEvent<
  'license.activated' | 'license.deactivated' | 'license.disabled' | 'license.enabled'
>;
export type WebhookTestEvent = WebhookEvent<'webhook.test'>;

// ---------------------------------------------------------------------------------------------
// Errors

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

// ---------------------------------------------------------------------------------------------
// Inputs

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

export interface VerifyOptions {
  /**
   * How far (in seconds) the signed timestamp may be from now, into the past or the future;
   * default 300. Must be positive: the replay check cannot be turned off.
   */
  toleranceSeconds?: number;
  /** The current time; for tests. */
  now?: Date;
}

export interface VerifiedWebhook {
  /** Which signature was checked: ours (`X-Service-Signature`) or Standard Webhooks. */
  scheme: 'service' | 'standard';
  /** The signed timestamp, unix seconds. */
  timestamp: number;
}

// ---------------------------------------------------------------------------------------------
// API

/**
 * Checks that a webhook request was signed by the service with `secret` and is fresh.
 * Resolves when it is, rejects with a `WebhookVerificationError` (see its `code`) when not.
 *
 * Async because it uses WebCrypto, which is: `await` it before trusting the body.
 *
 * The signature is checked before the timestamp, so `timestamp_out_of_tolerance` means an
 * authentic request that is too old (a replay; every delivery attempt is signed afresh) or dated in the future
 * (a clock off); `signature_mismatch` covers everything not signed with `secret` over these
 * exact bytes. Answer either with a 4xx and do not act on the body.
 *
 * @param rawBody the body exactly as received, before any JSON parsing.
 * @param headers the request headers, any case; or the `X-Service-Signature` header's value.
 * @param secret  the endpoint's signing secret, `whsec_...`.
 */
export async function verifySignature(
  rawBody: RawBody,
  headers: WebhookSignatureInput,
  secret: string,
  options: VerifyOptions = {},
): Promise<VerifiedWebhook> {
  const tolerance = checkTolerance(options.toleranceSeconds);
  const nowSeconds = currentSeconds(options.now);
  checkSecret(secret);
  const body = rawBytes(rawBody);
  checkHeadersArgument(headers);

  const serviceHeader = typeof headers === 'string' ? headers : readHeader(headers, SERVICE_SIGNATURE_HEADER);
  let verified: VerifiedWebhook;
  if (typeof headers === 'string' || serviceHeader !== undefined) {
    verified = await verifyService(body, serviceHeader!, secret);
  } else {
    const id = readHeader(headers, STANDARD_ID_HEADER);
    const timestamp = readHeader(headers, STANDARD_TIMESTAMP_HEADER);
    const signature = readHeader(headers, STANDARD_SIGNATURE_HEADER);
    if (id === undefined && timestamp === undefined && signature === undefined) {
      throw new WebhookVerificationError(
        'missing_header',
        'The request has no X-Service-Signature header (nor the Standard Webhooks webhook-signature headers): is it a webhook from the service, and does your framework pass the headers through?',
      );
    }
    if (id === undefined || timestamp === undefined || signature === undefined) {
      const missing = [
        id === undefined && STANDARD_ID_HEADER,
        timestamp === undefined && STANDARD_TIMESTAMP_HEADER,
        signature === undefined && STANDARD_SIGNATURE_HEADER,
      ].filter((name): name is string => typeof name === 'string');
      throw new WebhookVerificationError(
        'missing_header',
        `The Standard Webhooks header${missing.length > 1 ? 's' : ''} ${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} missing.`,
      );
    }
    verified = await verifyStandard(body, id, timestamp, signature, secret);
  }

  const age = nowSeconds - verified.timestamp;
  if (age > tolerance) {
    throw new WebhookVerificationError(
      'timestamp_out_of_tolerance',
      `The signature is ${age} s old, more than the tolerance of ${tolerance} s: a replayed request, or a clock that is off.`,
    );
  }
  if (-age > tolerance) {
    throw new WebhookVerificationError(
      'timestamp_out_of_tolerance',
      `The signature is dated ${-age} s in the future, more than the tolerance of ${tolerance} s: check this server's clock.`,
    );
  }
  return verified;
}

/**
 * Verifies the request (as `verifySignature`, so it is async) and returns its body parsed,
 * typed as the union of the events, discriminated on `event`:
 *
 *     const event = await constructEvent(await request.text(), request.headers, secret);
 *     if (event.event === 'order.paid') fulfil(event.data.order);
 *
 * An event added to the service after this version of the SDK arrives with an `event` the
 * union does not list: keep a `default` branch.
 */
export async function constructEvent(
  rawBody: RawBody,
  headers: WebhookSignatureInput,
  secret: string,
  options: VerifyOptions = {},
): Promise<WebhookEvent> {
  await verifySignature(rawBody, headers, secret, options);
  const text = typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBytes(rawBody));
  return JSON.parse(text) as WebhookEvent;
}

/** The second argument must be headers or a signature header's value; say what to pass when it is not. */
function checkHeadersArgument(headers: unknown): void {
  if (typeof headers === 'string' || (typeof headers === 'object' && headers !== null && !Array.isArray(headers)))
    return;
  const got = headers === null ? 'null' : Array.isArray(headers) ? 'an array' : typeof headers;
  throw new WebhookVerificationError(
    'headers_invalid',
    `The second argument must be the request's headers (a Headers object, or a plain object such as req.headers) or the X-Service-Signature header's value as a string; got ${got}.`,
  );
}

export interface TestHeaderInput {
  /** The exact body your test will send. */
  payload: RawBody;
  secret: string;
  /** Unix seconds; default now. */
  timestamp?: number;
  /** The `webhook-id`; default the payload's `id`, else a random `evt_test_...`. */
  eventId?: string;
}

export interface WebhookTestHeaders {
  'content-type': 'application/json';
  'x-service-signature': string;
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
  [name: string]: string;
}

/**
 * The headers the service would send with `payload`, signed both ways, for testing your
 * webhook handler without the service. Async (WebCrypto).
 *
 *     const body = JSON.stringify(event);
 *     const headers = await generateTestHeader({ payload: body, secret });
 *     await fetch('http://localhost:3000/webhooks', { method: 'POST', headers, body });
 */
export async function generateTestHeader(input: TestHeaderInput): Promise<WebhookTestHeaders> {
  const { secret } = input;
  checkSecret(secret);
  const key = standardKey(secret);
  const body = rawBytes(input.payload);
  const timestamp = input.timestamp ?? Math.floor(Date.now() / 1000);
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new TypeError(
      `generateTestHeader: timestamp must be a non-negative integer of unix seconds, got ${String(timestamp)}.`,
    );
  }
  const eventId = input.eventId ?? payloadEventId(body) ?? `evt_test_${randomHex(12)}`;
  if (typeof eventId !== 'string' || eventId === '')
    throw new TypeError('generateTestHeader: eventId must be a non-empty string.');
  const t = String(timestamp);
  const [service, standard] = await Promise.all([
    hmacSha256(utf8(secret), concat(utf8(`${t}.`), body)),
    hmacSha256(key, concat(utf8(`${eventId}.${t}.`), body)),
  ]);
  return {
    'content-type': 'application/json',
    'x-service-signature': `t=${t},v1=${toHex(service)}`,
    'webhook-id': eventId,
    'webhook-timestamp': t,
    'webhook-signature': `v1,${toBase64(standard)}`,
  };
}

// ---------------------------------------------------------------------------------------------
// The two schemes

async function verifyService(body: Bytes, header: string, secret: string): Promise<VerifiedWebhook> {
  let t: string | undefined;
  const candidates: Bytes[] = [];
  for (const part of header.split(',')) {
    const item = part.trim();
    if (item === '') continue;
    const eq = item.indexOf('=');
    if (eq < 0) throw malformed(SERVICE_SIGNATURE_HEADER, `"${clip(item)}" is not a key=value pair`);
    const name = item.slice(0, eq).trim();
    const value = item.slice(eq + 1).trim();
    if (name === 't') {
      if (t !== undefined) throw malformed(SERVICE_SIGNATURE_HEADER, 't= appears more than once');
      if (!TIMESTAMP.test(value)) throw malformed(SERVICE_SIGNATURE_HEADER, 't= is not unix seconds');
      t = value;
    } else if (name === 'v1') {
      if (!/^[0-9a-fA-F]{64}$/.test(value)) throw malformed(SERVICE_SIGNATURE_HEADER, 'v1= is not 64 hex digits');
      candidates.push(fromHex(value));
    }
    // Other schemes (a future v2) are skipped, as is customary.
  }
  if (t === undefined) throw malformed(SERVICE_SIGNATURE_HEADER, 'it has no t=');
  if (candidates.length === 0) throw malformed(SERVICE_SIGNATURE_HEADER, 'it has no v1= signature');
  const expected = await hmacSha256(utf8(secret), concat(utf8(`${t}.`), body));
  if (!anyMatch(expected, candidates)) {
    throw new WebhookVerificationError(
      'signature_mismatch',
      'No v1 signature of X-Service-Signature matches the body: verify the raw bytes as received (not JSON that was parsed and serialised again) with the secret of this very endpoint (rotated lately?).',
    );
  }
  return { scheme: 'service', timestamp: Number(t) };
}

async function verifyStandard(
  body: Bytes,
  id: string,
  timestamp: string,
  header: string,
  secret: string,
): Promise<VerifiedWebhook> {
  if (id === '') throw malformed(STANDARD_ID_HEADER, 'it is empty');
  if (!TIMESTAMP.test(timestamp)) throw malformed(STANDARD_TIMESTAMP_HEADER, 'it is not unix seconds');
  const candidates: Bytes[] = [];
  for (const item of header.split(/\s+/)) {
    if (item === '') continue;
    const comma = item.indexOf(',');
    if (comma < 0) throw malformed(STANDARD_SIGNATURE_HEADER, `"${clip(item)}" is not version,signature`);
    if (item.slice(0, comma) !== 'v1') continue; // v1a (asymmetric) and later versions are not ours to check
    const decoded = fromBase64(item.slice(comma + 1));
    if (decoded === null) throw malformed(STANDARD_SIGNATURE_HEADER, 'a v1 signature is not base64');
    candidates.push(decoded);
  }
  if (candidates.length === 0) throw malformed(STANDARD_SIGNATURE_HEADER, 'it has no v1 signature');
  const expected = await hmacSha256(standardKey(secret), concat(utf8(`${id}.${timestamp}.`), body));
  if (!anyMatch(expected, candidates)) {
    throw new WebhookVerificationError(
      'signature_mismatch',
      'No v1 signature of webhook-signature matches the body: verify the raw bytes as received (not JSON that was parsed and serialised again) with the secret of this very endpoint (rotated lately?).',
    );
  }
  return { scheme: 'standard', timestamp: Number(timestamp) };
}

// ---------------------------------------------------------------------------------------------
// Checks of the inputs

const TIMESTAMP = /^\d{1,12}$/;

function checkTolerance(value: number | undefined): number {
  const tolerance = value ?? DEFAULT_WEBHOOK_TOLERANCE_SECONDS;
  if (typeof tolerance !== 'number' || !Number.isFinite(tolerance) || tolerance <= 0) {
    throw new WebhookVerificationError(
      'tolerance_invalid',
      `toleranceSeconds must be a positive number of seconds, got ${String(tolerance)}: 0 or less would switch the replay protection off, which is refused. Leave it out for the default of ${DEFAULT_WEBHOOK_TOLERANCE_SECONDS}.`,
    );
  }
  return tolerance;
}

function currentSeconds(now: Date | undefined): number {
  // Not `instanceof Date`: a Date from another realm (an iframe, a vm context) is one too.
  const ms =
    now === undefined ? Date.now() : Object.prototype.toString.call(now) === '[object Date]' ? now.getTime() : NaN;
  if (!Number.isFinite(ms)) throw new TypeError('options.now must be a valid Date.');
  return Math.floor(ms / 1000);
}

function checkSecret(secret: unknown): asserts secret is string {
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
function standardKey(secret: string): Bytes {
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
function rawBytes(body: unknown): Bytes {
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
function readHeader(headers: WebhookHeaders, name: string): string | undefined {
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

function payloadEventId(body: Bytes): string | undefined {
  try {
    const parsed: unknown = JSON.parse(new TextDecoder().decode(body));
    if (
      typeof parsed === 'object' &&
      parsed !== null &&
      typeof (parsed as { id?: unknown }).id === 'string' &&
      (parsed as { id: string }).id !== ''
    ) {
      return (parsed as { id: string }).id;
    }
  } catch {
    // not JSON: a random id then
  }
  return undefined;
}

function malformed(header: string, why: string): WebhookVerificationError {
  return new WebhookVerificationError('malformed_header', `The ${header} header is malformed: ${why}.`);
}

function clip(value: string): string {
  return value.length > 40 ? `${value.slice(0, 40)}…` : value;
}

// ---------------------------------------------------------------------------------------------
// Bytes and WebCrypto

type Bytes = Uint8Array<ArrayBuffer>;

interface WebCryptoLike {
  subtle: {
    importKey(
      format: 'raw',
      keyData: Bytes,
      algorithm: { name: 'HMAC'; hash: 'SHA-256' },
      extractable: false,
      usages: ['sign'],
    ): Promise<unknown>;
    sign(algorithm: 'HMAC', key: unknown, data: Bytes): Promise<ArrayBuffer>;
  };
  getRandomValues(array: Bytes): Bytes;
}

function webCrypto(): WebCryptoLike {
  const found = (globalThis as { crypto?: Partial<WebCryptoLike> }).crypto;
  if (found?.subtle === undefined || found.getRandomValues === undefined) {
    throw new Error(
      '@svc/sdk webhooks need WebCrypto (globalThis.crypto.subtle): Node 20 or later, Deno, Bun, a browser (in a secure context) or an edge runtime.',
    );
  }
  return found as WebCryptoLike;
}

async function hmacSha256(key: Bytes, data: Bytes): Promise<Bytes> {
  const { subtle } = webCrypto();
  const cryptoKey = await subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await subtle.sign('HMAC', cryptoKey, data));
}

/** Compares every candidate in full, in time that depends on the lengths only. */
function anyMatch(expected: Bytes, candidates: Bytes[]): boolean {
  let matched = 0;
  for (const candidate of candidates) matched |= timingSafeEqual(expected, candidate) ? 1 : 0;
  return matched === 1;
}

function timingSafeEqual(a: Bytes, b: Bytes): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}

const encoder = new TextEncoder();

function utf8(text: string): Bytes {
  return encoder.encode(text);
}

function concat(head: Bytes, tail: Bytes): Bytes {
  const out = new Uint8Array(head.length + tail.length);
  out.set(head, 0);
  out.set(tail, head.length);
  return out;
}

function toHex(bytes: Bytes): string {
  let out = '';
  for (const byte of bytes) out += byte.toString(16).padStart(2, '0');
  return out;
}

function fromHex(hex: string): Bytes {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

function toBase64(bytes: Bytes): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Strict base64 (standard alphabet, padded); null when it is not. */
function fromBase64(text: string): Bytes | null {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return null;
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

function randomHex(bytes: number): string {
  return toHex(webCrypto().getRandomValues(new Uint8Array(bytes)));
}
