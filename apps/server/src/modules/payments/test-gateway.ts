/**
 * The `test` gateway: a notification is JSON signed with TEST_GATEWAY_SECRET in the same
 * `t=<unix>,v1=<hex>` scheme our webhooks use, so end-to-end tests and local development run the
 * real settlement path. In production it settles test orders only (test-gateway-rule.ts).
 *
 *   X-Test-Signature: t=1700000000,v1=<hex HMAC-SHA256 of "<t>.<raw body>">
 *   { "id": "tevt_1", "type": "payment.succeeded" | "payment.refunded" | "payment.failed",
 *     "orderId": "...", "amount": 19.99, "currency": "USD" }
 */
import { createHmac } from 'node:crypto';
import { z } from 'zod';
import { AppError } from '../../lib/errors.js';
import { safeEqual } from '../../lib/crypto.js';
import { amountToMinor } from '../../lib/money.js';
import type { PaymentNotification } from './gateway.js';

export const TEST_SIGNATURE_HEADER = 'x-test-signature';
const TOLERANCE_SECONDS = 300;

const ZTestNotification = z.strictObject({
  id: z.string().min(1).max(200),
  type: z.enum(['payment.succeeded', 'payment.refunded', 'payment.failed']),
  orderId: z.string().min(1).max(32),
  amount: z.number().nonnegative(),
  currency: z.string().regex(/^[A-Z]{3}$/),
});

export function signTestNotification(secret: string, rawBody: string, timestamp: number): string {
  return `t=${timestamp},v1=${createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex')}`;
}

const refuse = (why: string) => new AppError('signature_invalid', `Notification refused: ${why}.`);

export function verifyTestNotification(
  secret: string | undefined,
  raw: Buffer,
  header: string | undefined,
  now: Date,
): PaymentNotification {
  if (!secret) throw new AppError('not_found', 'The test gateway is not configured.');
  if (!header) throw refuse('no signature header');
  const parts = Object.fromEntries(header.split(',').map((part) => part.trim().split('=', 2) as [string, string]));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || !parts.v1) throw refuse('malformed signature header');
  if (Math.abs(now.getTime() / 1000 - t) > TOLERANCE_SECONDS) throw refuse('timestamp outside the tolerance');
  const expected = createHmac('sha256', secret)
    .update(Buffer.concat([Buffer.from(`${t}.`), raw]))
    .digest('hex');
  if (!safeEqual(parts.v1, expected)) throw refuse('signature does not match');
  // Only now is the body parsed.
  let parsed;
  try {
    parsed = ZTestNotification.parse(JSON.parse(raw.toString('utf8')));
  } catch {
    throw new AppError('validation_failed', 'The notification body is not valid.');
  }
  let amountMinor: number;
  try {
    amountMinor = amountToMinor(parsed.amount, parsed.currency);
  } catch {
    throw new AppError('validation_failed', 'The notification amount is not valid.');
  }
  const kind =
    parsed.type === 'payment.succeeded' ? 'paid' : parsed.type === 'payment.refunded' ? 'refunded' : 'failed';
  return {
    eventId: parsed.id,
    kind,
    orderId: parsed.orderId,
    amountMinor,
    currency: parsed.currency,
    providerRef: `test:${parsed.id}`,
  };
}
