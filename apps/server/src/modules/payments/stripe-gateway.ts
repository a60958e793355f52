/**
 * The `stripe` gateway: Stripe Checkout. Starting a payment creates a Checkout Session for
 * the order's stored amount and sends the buyer to Stripe's page; Stripe's webhook events
 * (verified on the raw bytes with STRIPE_WEBHOOK_SECRET) become PaymentNotifications.
 *
 *   checkout.session.completed (payment_status paid), checkout.session.async_payment_succeeded -> paid
 *   checkout.session.async_payment_failed                                                     -> failed
 *   charge.refunded (refunded: true, i.e. in full)                                             -> refunded
 *   anything else                                                                              -> null (ignored)
 *
 * Refunding a settled payment creates a Stripe Refund of its PaymentIntent (the rest of it, in
 * full) with the idempotency key `svc-refund-<orderId>`, so a retry (ours, or stripe-node's own)
 * gets Stripe's same refund back instead of a second one.
 *
 * Saving the buyer's payment method (start with `saveMethod`, a subscription's first order): the
 * session sets `payment_intent_data.setup_future_usage: 'off_session'` and `customer_creation:
 * 'always'`, or, for a zero total (a trial), is a `setup` mode session; its metadata says
 * `saveMethod: '1'`. Its completion (checkout.session.completed) then reads the PaymentIntent or
 * SetupIntent for the PaymentMethod, and the settlement records the customer and method
 * (withSavedMethod). chargeSaved charges them later with an off-session PaymentIntent under the
 * caller's idempotency key:
 *
 *   PaymentIntent succeeded                                            -> succeeded
 *   402 card_error authentication_required / PaymentIntent requires_action -> requires_action
 *   402 card_error (card_declined, expired_card, ...)                  -> failed (decline_code or code)
 *   400/404 invalid_request_error (a detached or missing method)       -> failed (its code)
 *   network error, timeout, 429, 5xx, authentication, idempotency_error -> AppError gateway_error (retry)
 *
 * A buyer's new payment method for a subscription (startMethodUpdate, the customer area's Update
 * payment method) is the same `setup` session, on the customer the renewals charge, with the metadata
 * `{ subscriptionId, methodUpdate: '1' }`; its checkout.session.completed becomes a
 * MethodSavedNotification with the SetupIntent's PaymentMethod (withMethodSaved reads it), which
 * the renewals charge from then on.
 *
 * STRIPE_API_BASE points the client at another host (a local fake in tests).
 */
import { createHash } from 'node:crypto';
import Stripe from 'stripe';
import type { Config } from '../../config.js';
import type { Logger } from '../../lib/logger.js';
import { AppError, invalidField } from '../../lib/errors.js';
import { looksLikeId } from '../../lib/ids.js';
import { publicOrderNumber } from '../orders/order-views.js';
import type {
  ChargeResult,
  Gateway,
  MethodSavedNotification,
  PaymentNotification,
  SavedMethodRefs,
} from './gateway.js';

export const STRIPE_SIGNATURE_HEADER = 'stripe-signature';
/** Seconds a signed event stays acceptable (Stripe's default, and ours for the test gateway). */
const TOLERANCE_SECONDS = 300;

const clients = new Map<string, Stripe>();

/** `host`/`port`/`protocol` for the stripe package from STRIPE_API_BASE (only its origin is used). */
export function stripeApiAddress(base: string | undefined): {
  host?: string;
  port?: number;
  protocol?: 'http' | 'https';
} {
  if (!base) return {};
  const url = new URL(base);
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  return {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port ? Number(url.port) : protocol === 'http' ? 80 : 443,
    protocol,
  };
}

function stripeClient(secretKey: string, apiBase: string | undefined): Stripe {
  const cacheKey = `${apiBase ?? ''} ${secretKey}`;
  let client = clients.get(cacheKey);
  if (!client) {
    client = new Stripe(secretKey, {
      ...stripeApiAddress(apiBase),
      maxNetworkRetries: 1,
      timeout: 15_000,
      telemetry: false,
    });
    clients.set(cacheKey, client);
  }
  return client;
}

/**
 * The same order, amount and request reuse the session Stripe already made (Stripe keeps a key
 * for 24 hours). A changed amount (a coupon) or buyer e-mail is a different request and gets a
 * new session, instead of the idempotency error Stripe answers a reused key with other params.
 */
function idempotencyKey(orderId: string, amountMinor: number, currency: string, params: unknown): string {
  const digest = createHash('sha256').update(JSON.stringify(params)).digest('hex').slice(0, 24);
  return `svc-checkout-${orderId}-${amountMinor}-${currency}-${digest}`;
}

/** What a failed stripe-node call says, for the log (a StripeError's fields; never the request or the key). */
function stripeFailure(error: unknown) {
  const e = error as { type?: unknown; code?: unknown; statusCode?: unknown; requestId?: unknown; message?: unknown };
  return { type: e.type, code: e.code, statusCode: e.statusCode, requestId: e.requestId, message: e.message };
}

/** One refund per order at Stripe: the key is the order's, so every retry names the same refund. */
export const refundIdempotencyKey = (orderId: string): string => `svc-refund-${orderId}`;

/** Our answer when Stripe does not refund: no Stripe words, nothing of the request. */
const refundRefused = () =>
  new AppError(
    'gateway_error',
    'The payment gateway did not refund the payment; nothing was changed. Try again shortly.',
  );

/** A saving session's metadata mark: its completion records the customer and PaymentMethod. */
const SAVE_METHOD = '1';

/** A method-update session's metadata mark: its completion saves the method for the subscription. */
const METHOD_UPDATE = '1';

/** A Checkout Session that only sets a payment method up (nothing is paid): a trial's, or a new method's. */
function setupSession(
  currency: string,
  metadata: Record<string, string>,
): Pick<Stripe.Checkout.SessionCreateParams, 'mode' | 'currency' | 'setup_intent_data'> {
  return { mode: 'setup', currency: currency.toLowerCase(), setup_intent_data: { metadata } };
}

/** Stripe's page for `params`; Stripe failing, or answering no page, is `service_unavailable`. */
async function checkoutSessionUrl(
  config: Config,
  log: Logger,
  params: Stripe.Checkout.SessionCreateParams,
  options: Stripe.RequestOptions,
  about: Record<string, string>,
): Promise<string> {
  let session: Stripe.Checkout.Session;
  try {
    session = await stripeClient(config.stripeSecretKey!, config.stripeApiBase).checkout.sessions.create(
      params,
      options,
    );
  } catch (error) {
    log.error({ err: stripeFailure(error), ...about }, 'stripe checkout session failed');
    throw new AppError('service_unavailable', 'Stripe is not answering; try again shortly.');
  }
  if (!session.url) {
    log.error({ ...about, sessionId: session.id }, 'stripe checkout session has no url');
    throw new AppError('service_unavailable', 'Stripe is not answering; try again shortly.');
  }
  return session.url;
}

/** What a charge of a saved method may not be answered with: ours, without Stripe's words. */
const chargeRefused = () =>
  new AppError('gateway_error', 'The payment gateway did not answer the charge; try again shortly.');

/**
 * A Stripe error of an off-session charge as our answer (the table above): the buyer's bank said
 * no (failed), the buyer must authenticate (requires_action), or anything retryable (thrown).
 */
export function chargeErrorResult(error: unknown): ChargeResult {
  const e = error as {
    type?: string;
    code?: string;
    decline_code?: string;
    statusCode?: number;
    payment_intent?: { id?: string; status?: string };
  };
  const providerRef = typeof e.payment_intent?.id === 'string' ? e.payment_intent.id : null;
  if (e.code === 'authentication_required' || e.payment_intent?.status === 'requires_action')
    return { status: 'requires_action', providerRef };
  // stripe-node gives a card error without one an empty decline_code.
  if (e.type === 'StripeCardError')
    return { status: 'failed', declineCode: e.decline_code || e.code || 'card_declined', providerRef };
  if (e.type === 'StripeInvalidRequestError' && (e.statusCode === 400 || e.statusCode === 404) && e.code)
    return { status: 'failed', declineCode: e.code, providerRef };
  throw chargeRefused();
}

export const stripeGateway: Gateway = {
  method: 'stripe',
  async start(order, store, { config, log, now }, options = {}) {
    if (!config.stripeSecretKey) throw invalidField('paymentMethod', 'Stripe is not configured.');
    const orderUrl = `${config.publicUrl}/checkout/${encodeURIComponent(order.id)}`;
    const save = options.saveMethod === true;
    // A trial's first order totals 0: nothing to pay, only the method to set up.
    const setupOnly = save && order.priceMinor === 0;
    const metadata: Record<string, string> = save
      ? { orderId: order.id, saveMethod: SAVE_METHOD }
      : { orderId: order.id };
    const params: Stripe.Checkout.SessionCreateParams = {
      ...(setupOnly
        ? setupSession(order.currency, metadata)
        : {
            mode: 'payment',
            line_items: [
              {
                quantity: 1,
                price_data: {
                  currency: order.currency.toLowerCase(),
                  unit_amount: order.priceMinor,
                  product_data: { name: `${publicOrderNumber(order.number)} · ${store.name}`.slice(0, 250) },
                },
              },
            ],
            // Copied onto the PaymentIntent's charges, so `charge.refunded` names the order too.
            payment_intent_data: save ? { metadata, setup_future_usage: 'off_session' } : { metadata },
          }),
      ...(save ? { customer_creation: 'always' as const } : {}),
      customer_email: order.customerEmail,
      client_reference_id: order.id,
      metadata,
      // The session closes with the order (Stripe takes 30 minutes to 24 hours from now), so a
      // buyer cannot pay an order that has already expired.
      expires_at: Math.floor(
        Math.min(
          Math.max(order.createdAt.getTime() + config.checkoutLifetimeMs, now.getTime() + 31 * 60_000),
          now.getTime() + 23 * 3600_000,
        ) / 1000,
      ),
      success_url: `${orderUrl}?stripe=success&session_id={CHECKOUT_SESSION_ID}`,
      cancel_url: `${orderUrl}?stripe=cancelled`,
    };
    const redirectUrl = await checkoutSessionUrl(
      config,
      log,
      params,
      { idempotencyKey: idempotencyKey(order.id, order.priceMinor, order.currency, params) },
      { orderId: order.id },
    );
    return { redirectUrl };
  },

  async startMethodUpdate(request, ctx) {
    const { config } = ctx.deps;
    if (!config.stripeSecretKey) throw new AppError('service_unavailable', 'Stripe is not configured.');
    // The new method joins the customer the renewals charge (Stripe charges a method only with its customer).
    const customer = request.current?.gateway === 'stripe' ? request.current.customerRef : null;
    if (!customer)
      throw new AppError(
        'invalid_transition',
        'This subscription has no saved Stripe customer to add a card to; contact the store.',
      );
    const metadata = { subscriptionId: request.subscriptionId, methodUpdate: METHOD_UPDATE };
    const params: Stripe.Checkout.SessionCreateParams = {
      ...setupSession(request.currency, metadata),
      customer,
      client_reference_id: request.subscriptionId,
      metadata,
      success_url: request.doneUrl,
      cancel_url: request.cancelUrl,
    };
    // No idempotency key of ours: each click is a new session (a completed one cannot be reused);
    // stripe-node's own key covers its retry of this one request.
    const redirectUrl = await checkoutSessionUrl(
      config,
      ctx.log,
      params,
      {},
      { subscriptionId: request.subscriptionId },
    );
    return { redirectUrl };
  },

  async refund(payment, order, { config, log }) {
    // The PaymentIntent the session made is the payment's provider reference (settled from
    // checkout.session.completed); without it, or without the key, there is nothing to call.
    if (!config.stripeSecretKey || !payment.providerRef?.startsWith('pi_')) {
      log.error(
        { orderId: order.id, paymentId: payment.id, configured: Boolean(config.stripeSecretKey) },
        'stripe refund impossible: no secret key or no PaymentIntent',
      );
      throw refundRefused();
    }
    let refund: Stripe.Refund;
    try {
      // No amount: Stripe refunds what is left of the PaymentIntent, the whole of it unless the
      // seller refunded part of it in Stripe's dashboard.
      refund = await stripeClient(config.stripeSecretKey, config.stripeApiBase).refunds.create(
        { payment_intent: payment.providerRef, metadata: { orderId: order.id } },
        { idempotencyKey: refundIdempotencyKey(order.id) },
      );
    } catch (error) {
      log.error({ err: stripeFailure(error), orderId: order.id, paymentId: payment.id }, 'stripe refund failed');
      throw refundRefused();
    }
    // `pending` and `requires_action` are refunds on their way (bank transfers, some wallets);
    // `failed` or `canceled` at once is a refusal like an error.
    if (refund.status === 'failed' || refund.status === 'canceled') {
      log.error(
        { orderId: order.id, refundId: refund.id, status: refund.status, failureReason: refund.failure_reason },
        'stripe refund not made',
      );
      throw refundRefused();
    }
    return { refundRef: refund.id };
  },

  async chargeSaved(method, amountMinor, currency, idempotencyKey, ctx) {
    const { config } = ctx.deps;
    if (!config.stripeSecretKey || method.gateway !== 'stripe' || !method.customerRef) {
      ctx.log.error(
        { methodId: method.id, configured: Boolean(config.stripeSecretKey) },
        'stripe charge impossible: no secret key or no saved Stripe customer',
      );
      throw chargeRefused();
    }
    let intent: Stripe.PaymentIntent;
    try {
      intent = await stripeClient(config.stripeSecretKey, config.stripeApiBase).paymentIntents.create(
        {
          amount: amountMinor,
          currency: currency.toLowerCase(),
          customer: method.customerRef,
          payment_method: method.methodRef,
          off_session: true,
          confirm: true,
          metadata: method.orderId
            ? { orderId: method.orderId, savedMethodId: method.id }
            : { subscriptionId: method.subscriptionId ?? '', savedMethodId: method.id },
        },
        { idempotencyKey },
      );
    } catch (error) {
      ctx.log.warn({ err: stripeFailure(error), methodId: method.id }, 'stripe off-session charge not made');
      return chargeErrorResult(error);
    }
    if (intent.status === 'succeeded') return { status: 'succeeded', providerRef: intent.id };
    if (intent.status === 'requires_action' || intent.status === 'requires_confirmation')
      return { status: 'requires_action', providerRef: intent.id };
    if (intent.status === 'requires_payment_method') {
      const declineCode = intent.last_payment_error?.decline_code ?? intent.last_payment_error?.code ?? 'card_declined';
      return { status: 'failed', declineCode, providerRef: intent.id };
    }
    // `processing` (a bank debit on its way), `canceled`, `requires_capture`: not a card's answer.
    ctx.log.error(
      { methodId: method.id, intentId: intent.id, status: intent.status },
      'stripe charge in another state',
    );
    throw chargeRefused();
  },
};

/**
 * The PaymentMethod a saving session (metadata `saveMethod`) saved: read from its PaymentIntent
 * or SetupIntent (the completion event names them only). The customer is the session's, or the
 * intent's. A notification without the mark, or not `paid`, is answered as it is. Stripe not
 * answering throws `service_unavailable`, so Stripe delivers the event again later.
 */
export async function withSavedMethod(
  config: Config,
  notification: PaymentNotification & { saveFrom?: SaveFrom },
  log: Logger,
): Promise<PaymentNotification> {
  const { saveFrom, ...plain } = notification;
  if (!saveFrom || plain.kind !== 'paid') return plain;
  const savedMethod = await savedMethodFrom(config, saveFrom, log, { orderId: plain.orderId });
  // Without one it settles all the same: the buyer paid; only renewals cannot be charged.
  return savedMethod ? { ...plain, savedMethod } : plain;
}

/**
 * A method-update session's completion with the PaymentMethod its SetupIntent set up, or null
 * (ignored) when Stripe names none. Stripe not answering throws `service_unavailable`, so Stripe
 * delivers the event again later.
 */
export async function withMethodSaved(
  config: Config,
  notification: MethodSavedPending,
  log: Logger,
): Promise<MethodSavedNotification | null> {
  const { saveFrom, ...plain } = notification;
  const savedMethod = await savedMethodFrom(config, saveFrom, log, { subscriptionId: plain.subscriptionId });
  return savedMethod ? { ...plain, savedMethod } : null;
}

/** The customer and PaymentMethod of a saving session, read from its intent; null when Stripe names neither. */
async function savedMethodFrom(
  config: Config,
  saveFrom: SaveFrom,
  log: Logger,
  about: Record<string, string>,
): Promise<SavedMethodRefs | null> {
  if (!config.stripeSecretKey) throw new AppError('service_unavailable', 'Stripe is not configured.');
  const client = stripeClient(config.stripeSecretKey, config.stripeApiBase);
  let intent: { customer: string | { id: string } | null; payment_method: string | { id: string } | null };
  try {
    intent = saveFrom.intent.startsWith('seti_')
      ? await client.setupIntents.retrieve(saveFrom.intent)
      : await client.paymentIntents.retrieve(saveFrom.intent);
  } catch (error) {
    log.error({ err: stripeFailure(error), ...about }, 'stripe saved method not read');
    throw new AppError('service_unavailable', 'Stripe is not answering; try again shortly.');
  }
  const customerRef = saveFrom.customer ?? idOf(intent.customer);
  const methodRef = idOf(intent.payment_method);
  if (!customerRef || !methodRef) {
    log.error({ ...about, intent: saveFrom.intent }, 'stripe saving session without customer or method');
    return null;
  }
  return { gateway: 'stripe', customerRef, methodRef };
}

/** Where a saving session's PaymentMethod is read (withSavedMethod, withMethodSaved). */
interface SaveFrom {
  intent: string;
  customer: string | null;
}

/** A method-update session's completion before its SetupIntent is read (withMethodSaved). */
export type MethodSavedPending = Omit<MethodSavedNotification, 'savedMethod'> & { saveFrom: SaveFrom };

const refuse = (why: string) => new AppError('signature_invalid', `Notification refused: ${why}.`);

/** metadata.orderId when it can be one of ours; anything else (another integration on the account) is not our business. */
const ourOrderId = (metadata: Record<string, string> | null | undefined): string | null => {
  const orderId = metadata?.orderId;
  return typeof orderId === 'string' && looksLikeId(orderId) ? orderId : null;
};

const idOf = (value: string | { id: string } | null | undefined): string | null =>
  typeof value === 'string' ? value : (value?.id ?? null);

/**
 * A Stripe webhook event as a PaymentNotification, or null for an event that is not about
 * one of our orders' payments (the route answers 200 `ignored`). `raw` is the body exactly
 * as received: the signature covers those bytes, and nothing parses them before it verifies.
 */
export function verifyStripeNotification(
  config: Config,
  raw: Buffer,
  header: string | undefined,
  now: Date,
): (PaymentNotification & { saveFrom?: SaveFrom }) | MethodSavedPending | null {
  if (!config.stripeWebhookSecret) throw new AppError('not_found', 'The Stripe gateway is not configured.');
  if (!header) throw refuse('no signature header');
  let event: Stripe.Event;
  try {
    event = Stripe.webhooks.constructEvent(
      raw,
      header,
      config.stripeWebhookSecret,
      TOLERANCE_SECONDS,
      undefined,
      now.getTime(),
    );
  } catch (error) {
    if (error instanceof Stripe.errors.StripeSignatureVerificationError) throw refuse('signature does not verify');
    throw new AppError('validation_failed', 'The notification body is not valid.');
  }
  // Stripe checks only the age; a timestamp from the future is refused as the test gateway does.
  const signedAt = Number(/(?:^|,)\s*t=(\d+)/.exec(header)?.[1]);
  if (!Number.isFinite(signedAt) || signedAt - now.getTime() / 1000 > TOLERANCE_SECONDS)
    throw refuse('timestamp outside the tolerance');
  if (
    !event ||
    typeof event.id !== 'string' ||
    event.id.length === 0 ||
    event.id.length > 200 ||
    typeof event.type !== 'string' ||
    typeof event.data?.object !== 'object' ||
    event.data.object === null
  ) {
    throw new AppError('validation_failed', 'The notification body is not valid.');
  }

  switch (event.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded':
    case 'checkout.session.async_payment_failed': {
      const session = event.data.object;
      const failed = event.type === 'checkout.session.async_payment_failed';
      const saving = session.metadata?.saveMethod === SAVE_METHOD;
      // A buyer's new method for a subscription (startMethodUpdate): nothing is paid, nothing settles.
      if (session.mode === 'setup' && session.metadata?.methodUpdate === METHOD_UPDATE) {
        const subscriptionId = session.metadata.subscriptionId;
        const setupIntent = idOf(session.setup_intent);
        if (
          event.type !== 'checkout.session.completed' ||
          !subscriptionId ||
          !looksLikeId(subscriptionId) ||
          !setupIntent
        )
          return null;
        return {
          eventId: event.id,
          kind: 'method_saved',
          subscriptionId,
          saveFrom: { intent: setupIntent, customer: idOf(session.customer) },
        };
      }
      // A saving `setup` session (a trial's zero total) completes with nothing to pay: it settles 0.
      if (saving && session.mode === 'setup') {
        const orderId = ourOrderId(session.metadata);
        const setupIntent = idOf(session.setup_intent);
        if (failed || !orderId || !setupIntent || !session.currency || event.type !== 'checkout.session.completed')
          return null;
        return {
          eventId: event.id,
          kind: 'paid',
          orderId,
          amountMinor: 0,
          currency: session.currency.toUpperCase(),
          providerRef: setupIntent,
          saveFrom: { intent: setupIntent, customer: idOf(session.customer) },
        };
      }
      // `completed` with payment_status `unpaid` is an async payment still on its way.
      if (!failed && session.payment_status !== 'paid') return null;
      const orderId = ourOrderId(session.metadata);
      if (!orderId || typeof session.amount_total !== 'number' || !session.currency) return null;
      const paymentIntent = idOf(session.payment_intent);
      return {
        eventId: event.id,
        kind: failed ? 'failed' : 'paid',
        orderId,
        amountMinor: session.amount_total,
        currency: session.currency.toUpperCase(),
        providerRef: paymentIntent ?? session.id,
        ...(saving && paymentIntent ? { saveFrom: { intent: paymentIntent, customer: idOf(session.customer) } } : {}),
      };
    }
    case 'charge.refunded': {
      const charge = event.data.object;
      const orderId = ourOrderId(charge.metadata);
      // A partial refund leaves the order as it is; the seller decides what it means.
      if (!charge.refunded || !orderId) return null;
      return {
        eventId: event.id,
        kind: 'refunded',
        orderId,
        amountMinor: charge.amount_refunded,
        currency: charge.currency.toUpperCase(),
        providerRef: idOf(charge.payment_intent) ?? charge.id,
      };
    }
    default:
      return null;
  }
}
