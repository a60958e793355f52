/**
 * Verifying the webhooks the service sends, in the merchant's own server: `verifySignature` and
 * `constructEvent`, and the two signature schemes they check. What they take and refuse is
 * webhooks-inputs.ts's, the error they throw webhooks-errors.ts's, the event types
 * webhooks-events.ts's; the signing side for a merchant's own tests is webhooks-test-header.ts.
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
import { anyMatch, concat, fromBase64, fromHex, hmacSha256, utf8, type Bytes } from './webhooks-crypto.js';
import { malformed, WebhookVerificationError } from './webhooks-errors.js';
import type { WebhookEvent } from './webhooks-events.js';
import {
  checkHeadersArgument,
  checkSecret,
  checkTolerance,
  clip,
  currentSeconds,
  rawBytes,
  readHeader,
  SERVICE_SIGNATURE_HEADER,
  STANDARD_ID_HEADER,
  STANDARD_SIGNATURE_HEADER,
  STANDARD_TIMESTAMP_HEADER,
  standardKey,
  TIMESTAMP,
  type RawBody,
  type WebhookSignatureInput,
} from './webhooks-inputs.js';

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
