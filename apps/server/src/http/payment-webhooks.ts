/**
 * `POST /api/payments/{gateway}/webhook`: inbound gateway notifications. The body is kept as
 * raw bytes (whatever its content type) because the signature covers exactly those bytes;
 * nothing is parsed before it verifies. No session is read, so CSRF does not apply. A payment's
 * news settles or refunds an order (flows/settle-payment.ts); a buyer's new payment method for a
 * subscription (Stripe's completed method-update session) is saved for its renewals
 * (flows/customer-subscriptions.ts).
 */
import { z } from 'zod';
import type { AppDeps } from '../deps.js';
import { AppError } from '../lib/errors.js';
import { assertReadable } from '../lib/input-limits.js';
import { saveMethodFromGateway } from '../flows/customer-subscriptions.js';
import { handleNotification } from '../flows/settle-payment.js';
import type { GatewayNotification } from '../modules/payments/gateway.js';
import {
  STRIPE_SIGNATURE_HEADER,
  verifyStripeNotification,
  withMethodSaved,
  withSavedMethod,
} from '../modules/payments/stripe-gateway.js';
import { TEST_SIGNATURE_HEADER, verifyTestNotification } from '../modules/payments/test-gateway.js';
import { plainRoute } from './plain-route.js';

/** A verified notification, or null for a genuine event that concerns nothing of ours (answered 200 `ignored`). */
type Verifier = (
  deps: AppDeps,
  raw: Buffer,
  headers: Record<string, string | string[] | undefined>,
) => GatewayNotification | null | Promise<GatewayNotification | null>;

const header = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

export const VERIFIERS: Record<string, Verifier> = {
  // Signed with the test gateway's secret (TEST_GATEWAY_SECRET, or outside production the data directory's
  // test-gateway.secret; 404 without one); in production it settles test orders only (handleNotification).
  test: (deps, raw, headers) => {
    return verifyTestNotification(
      deps.config.testGatewaySecret,
      raw,
      header(headers[TEST_SIGNATURE_HEADER]),
      deps.clock.now(),
    );
  },
  // A saving session's completion reads its PaymentMethod from Stripe first (withSavedMethod,
  // withMethodSaved for a buyer's new method).
  stripe: async (deps, raw, headers) => {
    const verified = verifyStripeNotification(
      deps.config,
      raw,
      header(headers[STRIPE_SIGNATURE_HEADER]),
      deps.clock.now(),
    );
    if (!verified) return null;
    return verified.kind === 'method_saved'
      ? withMethodSaved(deps.config, verified, deps.log)
      : withSavedMethod(deps.config, verified, deps.log);
  },
};

export const paymentNotificationRoute = plainRoute({
  name: 'payments.notification',
  method: 'POST',
  path: '/api/payments/{gateway}/webhook',
  body: 'raw',
  query: z.strictObject({}),
  policy: {
    auth: { kind: 'signature' },
    csrf: 'none',
    cors: 'none',
    errors: ['not_found', 'validation_failed', 'payload_too_large'],
  },
  openapi: {
    operationId: 'payments-notification',
    summary:
      'Inbound payment notification (stripe: Stripe-Signature; test: X-Test-Signature t=<unix>,v1=<hex>); verified on the raw bytes',
    tags: ['payments'],
    requestParams: {
      path: z.object({ gateway: z.enum(['stripe', 'test']) }),
      header: z.object({
        'Stripe-Signature': z.string().max(4096).optional().meta({
          description: 'gateway `stripe`: `t=<unix>,v1=<hex>` (Stripe webhook signature); required for that gateway',
        }),
        'X-Test-Signature': z.string().max(4096).optional().meta({
          description: 'gateway `test`: `t=<unix>,v1=<hex>` HMAC-SHA256 of `<t>.<raw body>`; required for that gateway',
        }),
      }),
    },
    requestBody: {
      required: true,
      description: "The gateway's event, verified on its raw bytes before it is parsed.",
      content: {
        'application/json': {
          schema: z.union([
            z
              .object({
                id: z.string(),
                type: z.string(),
                data: z.object({ object: z.record(z.string(), z.unknown()) }),
              })
              .meta({
                title: 'StripeEvent',
                description: 'A Stripe event (checkout.session.completed, charge.refunded, ...)',
              }),
            z
              .object({
                id: z.string().min(1).max(200),
                type: z.enum(['payment.succeeded', 'payment.refunded', 'payment.failed']),
                orderId: z.string().min(1).max(32),
                amount: z.number().min(0),
                currency: z.string().regex(/^[A-Z]{3}$/),
              })
              .meta({
                title: 'TestGatewayNotification',
                description:
                  "The test gateway's notification (where TEST_GATEWAY_SECRET is set; in production for test orders only)",
              }),
          ]),
        },
      },
    },
    responses: {
      200: { description: 'Handled', content: { 'application/json': { schema: z.object({ outcome: z.string() }) } } },
    },
  },
  async handler(ctx, request, reply) {
    const gateway = ctx.params.gateway!;
    const verify = VERIFIERS[gateway];
    if (!verify) throw new AppError('not_found', 'Unknown payment gateway.');
    const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const notification = await verify(ctx.deps, raw, request.headers);
    if (!notification) {
      request.log.info({ gateway, outcome: 'ignored' }, 'payment notification');
      return reply.code(200).send({ outcome: 'ignored' });
    }
    // What is stored of it must be storable text (a NUL in an event id once reached PostgreSQL).
    assertReadable(notification);
    if (notification.kind === 'method_saved') {
      const saved = await saveMethodFromGateway(ctx, { gateway, notification, now: ctx.clock.now() });
      request.log.info(
        { gateway, eventId: notification.eventId, subscriptionId: notification.subscriptionId, outcome: saved },
        'payment method notification',
      );
      return reply.code(200).send({ outcome: saved });
    }
    const outcome = await handleNotification(ctx, { gateway, notification, now: ctx.clock.now() });
    request.log.info(
      { gateway, eventId: notification.eventId, orderId: notification.orderId, outcome },
      'payment notification',
    );
    return reply.code(200).send({ outcome });
  },
});
