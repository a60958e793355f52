/**
 * `POST /api/payments/{gateway}/webhook`: inbound gateway notifications. The body is kept
 * as raw bytes (whatever its content type) because the signature covers exactly those
 * bytes; nothing is parsed before it verifies. CSRF does not apply (no session).
 */
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../deps.js';
import { AppError, toPublicError } from '../lib/errors.js';
import { handleNotification, type PaymentNotification } from '../modules/payments/notifications.js';
import { STRIPE_SIGNATURE_HEADER, verifyStripeNotification } from '../modules/payments/stripe-gateway.js';
import { TEST_SIGNATURE_HEADER, verifyTestNotification } from '../modules/payments/test-gateway.js';
import { sendError } from './error-reply.js';

/** A verified notification, or null for a genuine event that concerns no payment of ours (answered 200 `ignored`). */
type Verifier = (deps: AppDeps, raw: Buffer, headers: Record<string, string | string[] | undefined>) => PaymentNotification | null | Promise<PaymentNotification | null>;

const header = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

export const VERIFIERS: Record<string, Verifier> = {
  test: (deps, raw, headers) => {
    if (deps.config.isProduction) throw new AppError('not_found', 'Not found.');
    return verifyTestNotification(deps.config.testGatewaySecret, raw, header(headers[TEST_SIGNATURE_HEADER]), deps.clock.now());
  },
  stripe: (deps, raw, headers) => verifyStripeNotification(deps.config, raw, header(headers[STRIPE_SIGNATURE_HEADER]), deps.clock.now()),
};

export async function paymentWebhooksPlugin(app: FastifyInstance, opts: { deps: AppDeps; verifiers?: Record<string, Verifier> }): Promise<void> {
  const verifiers = opts.verifiers ?? VERIFIERS;
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 1024 * 1024 }, (_request, body, done) => done(null, body));

  app.post<{ Params: { gateway: string } }>('/api/payments/:gateway/webhook', async (request, reply) => {
    try {
      const verify = verifiers[request.params.gateway];
      if (!verify) throw new AppError('not_found', 'Unknown payment gateway.');
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const notification = await verify(opts.deps, raw, request.headers);
      if (!notification) {
        request.log.info({ gateway: request.params.gateway, outcome: 'ignored' }, 'payment notification');
        return reply.code(200).send({ outcome: 'ignored' });
      }
      const outcome = await handleNotification(opts.deps.orm.em.fork(), request.params.gateway, notification, opts.deps.clock.now());
      request.log.info({ gateway: request.params.gateway, eventId: notification.eventId, orderId: notification.orderId, outcome }, 'payment notification');
      return reply.code(200).send({ outcome });
    } catch (error) {
      const pub = toPublicError(error);
      if (pub.internal) request.log.error({ err: error }, 'payment notification failed');
      return sendError(reply, pub);
    }
  });
}
