/**
 * Signatures on outgoing webhooks, two schemes at once:
 *  - ours, as the interface documents: `X-Service-Signature: t=<unix>,v1=<hex>` where
 *    hex = HMAC-SHA256(secret, "<t>.<raw body>");
 *  - Standard Webhooks: `webhook-id` (the event id), `webhook-timestamp`, and
 *    `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<t>.<body>">` keyed with the
 *    base64-decoded bytes after `whsec_`, so off-the-shelf verifiers work too.
 * And the secrets: made here, with the key they are sealed under at rest.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { Config } from '../../config.js';
import { deriveKey } from '../../lib/crypto.js';

export const SECRET_PREFIX = 'whsec_';

export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/** The key webhook secrets are sealed with, derived from APP_ENCRYPTION_KEY for this use alone. */
export function webhookSecretKey(config: Pick<Config, 'encryptionKey'>): Buffer {
  return deriveKey(config.encryptionKey, 'webhook-secret');
}

export function serviceSignature(secret: string, timestamp: number, body: string): string {
  return `t=${timestamp},v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

export function standardSignature(secret: string, eventId: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${eventId}.${timestamp}.${body}`).digest('base64')}`;
}

export function signatureHeaders(
  secret: string,
  input: { eventId: string; event: string; deliveryId: string; timestamp: number; body: string },
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'svc-webhooks/1',
    'x-service-signature': serviceSignature(secret, input.timestamp, input.body),
    'x-service-event': input.event,
    'x-service-event-id': input.eventId,
    'x-service-delivery-id': input.deliveryId,
    'webhook-id': input.eventId,
    'webhook-timestamp': String(input.timestamp),
    'webhook-signature': standardSignature(secret, input.eventId, input.timestamp, input.body),
  };
}
