/**
 * The headers the service would send with a body, signed both ways (`generateTestHeader`), for
 * testing a webhook handler without the service: the signing side of what webhooks.ts verifies.
 */
import { concat, hmacSha256, randomHex, toBase64, toHex, utf8, type Bytes } from './webhooks-crypto.js';
import { checkSecret, rawBytes, standardKey, type RawBody } from './webhooks-inputs.js';

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
