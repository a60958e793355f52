/**
 * A local stand-in for api.stripe.com, enough for Checkout, refunds and saved payment methods:
 * `POST /v1/checkout/sessions`, `POST /v1/refunds`, `GET /v1/payment_intents/{id}`,
 * `GET /v1/setup_intents/{id}` and off-session `POST /v1/payment_intents`, with the form-encoded
 * body the stripe package sends. It records every request and honours idempotency keys as Stripe
 * does (same key and body -> the same answer, an error included, `idempotent-replayed: true`; same
 * key with another body -> 400 idempotency_error). A refund names a PaymentIntent one of its
 * sessions made; a second refund of one (under another key) is 400 `charge_already_refunded`, as
 * Stripe answers. `refuseRefunds` makes refunds fail with a Stripe-shaped error before anything is
 * made or remembered (a transient refusal: clear it and the same key goes through).
 *
 * Every session stands for a buyer who completed it: a `payment` session's PaymentIntent has
 * succeeded with a PaymentMethod (`pm_test_...`), a `setup` session's SetupIntent has set one up,
 * and `customer_creation: 'always'` made a Customer (`cus_test_...`). A session on an existing
 * `customer` (a `setup` one: a buyer's new method for a subscription) must name a Customer an
 * earlier session made (else 400 resource_missing, as Stripe answers) and may not also ask for
 * `customer_creation`; its SetupIntent sets a new PaymentMethod up on that Customer. A `setup`
 * session without `currency` is 400, as Stripe refuses it without payment_method_types. An
 * off-session PaymentIntent on a known customer and PaymentMethod answers as `cards` says for
 * that method (default `succeeds`): `declines` is Stripe's 402 card_error `card_declined` (decline_code
 * `insufficient_funds`), `requires_authentication` its 402 `authentication_required` with the
 * PaymentIntent in `requires_action`. Each such PaymentIntent made (replays are not) is in
 * `charges`. Point the server at it with STRIPE_API_BASE.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';

export interface FakeStripeRequest {
  method: string;
  path: string;
  /** The form body, flat: `line_items[0][price_data][unit_amount]` -> `'999'`. */
  form: Record<string, string>;
  headers: IncomingHttpHeaders;
  idempotencyKey: string | undefined;
  authorization: string | undefined;
}

export interface FakeSession {
  id: string;
  object: 'checkout.session';
  url: string;
  mode: string;
  status: 'open';
  payment_status: 'unpaid';
  amount_total: number;
  currency: string;
  customer_email: string | null;
  metadata: Record<string, string>;
  client_reference_id: string | null;
  /** A `setup` session's is made but never paid: its SetupIntent is what it completes. */
  payment_intent: string;
  setup_intent: string | null;
  /** The Customer the session made (`customer_creation: 'always'`), or null. */
  customer: string | null;
  success_url: string | null;
  cancel_url: string | null;
  created: number;
  livemode: false;
}

export interface FakeRefund {
  id: string;
  object: 'refund';
  amount: number;
  currency: string;
  payment_intent: string;
  metadata: Record<string, string>;
  reason: string | null;
  status: 'succeeded';
  created: number;
}

export interface FakePaymentIntent {
  id: string;
  object: 'payment_intent';
  amount: number;
  currency: string;
  status: 'succeeded' | 'requires_payment_method' | 'requires_action';
  customer: string | null;
  payment_method: string | null;
  setup_future_usage: string | null;
  metadata: Record<string, string>;
  last_payment_error: { type: string; code: string; decline_code?: string } | null;
  created: number;
  livemode: false;
}

export interface FakeSetupIntent {
  id: string;
  object: 'setup_intent';
  status: 'succeeded';
  customer: string | null;
  payment_method: string;
  usage: 'off_session';
  metadata: Record<string, string>;
  created: number;
  livemode: false;
}

/** How an off-session charge of a saved PaymentMethod goes. */
export type FakeCard = 'succeeds' | 'declines' | 'requires_authentication';

/** A Stripe error as `POST /v1/refunds` answers it: `{ error: { type, code, message } }` with this status. */
export interface FakeStripeRefusal {
  status: number;
  type: string;
  code?: string;
}

export interface FakeStripe {
  url: string;
  requests: FakeStripeRequest[];
  sessions: Map<string, FakeSession>;
  refunds: Map<string, FakeRefund>;
  paymentIntents: Map<string, FakePaymentIntent>;
  setupIntents: Map<string, FakeSetupIntent>;
  /** Off-session PaymentIntents made (POST /v1/payment_intents), in order; replays add none. */
  charges: FakePaymentIntent[];
  /** A PaymentMethod's behaviour when charged off-session (default `succeeds`). */
  cards: Map<string, FakeCard>;
  /** While set, every API call answers this HTTP status with a Stripe error body. */
  failWith: number | undefined;
  /** While set, `POST /v1/refunds` answers this error (and makes no refund). */
  refuseRefunds: FakeStripeRefusal | undefined;
  close(): Promise<void>;
}

function stripeError(res: ServerResponse, status: number, type: string, message: string, code?: string) {
  res.writeHead(status, {
    'content-type': 'application/json',
    'request-id': `req_${randomBytes(6).toString('hex')}`,
    'stripe-should-retry': 'false',
  });
  res.end(JSON.stringify({ error: { type, message, ...(code ? { code } : {}) } }));
}

/** `a[b][0][c]` keys of a metadata-style prefix as a flat object: prefix `metadata` -> `{ orderId }`. */
export function formObject(form: Record<string, string>, prefix: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(form)) {
    const match = key.startsWith(`${prefix}[`) ? /^\[([^\]]*)\]$/.exec(key.slice(prefix.length)) : null;
    if (match) out[match[1]!] = value;
  }
  return out;
}

export async function startFakeStripe(): Promise<FakeStripe> {
  const requests: FakeStripeRequest[] = [];
  const sessions = new Map<string, FakeSession>();
  const refunds = new Map<string, FakeRefund>();
  const paymentIntents = new Map<string, FakePaymentIntent>();
  const setupIntents = new Map<string, FakeSetupIntent>();
  const charges: FakePaymentIntent[] = [];
  const cards = new Map<string, FakeCard>();
  const idempotent = new Map<string, { digest: string; status: number; body: string }>();
  const now = () => Math.floor(Date.now() / 1000);
  const id = (prefix: string) => `${prefix}_test_${randomBytes(12).toString('hex')}`;

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const path = new URL(req.url ?? '/', 'http://fake').pathname;
      const form = Object.fromEntries(new URLSearchParams(body));
      const idempotencyKey =
        typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : undefined;
      const authorization = req.headers.authorization;
      requests.push({ method: req.method ?? '', path, form, headers: req.headers, idempotencyKey, authorization });

      if (fake.failWith)
        return stripeError(res, fake.failWith, 'api_error', 'Something went wrong on the fake Stripe (secret detail).');
      if (!authorization?.startsWith('Bearer sk_'))
        return stripeError(res, 401, 'invalid_request_error', 'Invalid API Key provided.');
      const retrieved = req.method === 'GET' ? /^\/v1\/(payment_intents|setup_intents)\/([^/]+)$/.exec(path) : null;
      if (retrieved) {
        const object =
          retrieved[1] === 'payment_intents' ? paymentIntents.get(retrieved[2]!) : setupIntents.get(retrieved[2]!);
        if (!object)
          return stripeError(
            res,
            404,
            'invalid_request_error',
            `No such ${retrieved[1] === 'payment_intents' ? 'payment_intent' : 'setupintent'}: '${retrieved[2]}'`,
            'resource_missing',
          );
        res.writeHead(200, {
          'content-type': 'application/json',
          'request-id': `req_${randomBytes(6).toString('hex')}`,
        });
        return res.end(JSON.stringify(object));
      }
      if (
        req.method !== 'POST' ||
        (path !== '/v1/checkout/sessions' && path !== '/v1/refunds' && path !== '/v1/payment_intents')
      ) {
        return stripeError(res, 404, 'invalid_request_error', `Unrecognized request URL (${req.method}: ${path}).`);
      }
      if (path === '/v1/refunds' && fake.refuseRefunds) {
        const { status, type, code } = fake.refuseRefunds;
        return stripeError(
          res,
          status,
          type,
          `The fake Stripe refuses this refund (secret detail, ${code ?? type}).`,
          code,
        );
      }

      const digest = createHash('sha256').update(`${path}\n${body}`).digest('hex');
      if (idempotencyKey) {
        const seen = idempotent.get(idempotencyKey);
        if (seen && seen.digest !== digest) {
          return stripeError(
            res,
            400,
            'idempotency_error',
            'Keys for idempotent requests can only be used with the same parameters they were first used with.',
          );
        }
        if (seen) {
          res.writeHead(seen.status, {
            'content-type': 'application/json',
            'idempotent-replayed': 'true',
            ...(seen.status >= 400 ? { 'stripe-should-retry': 'false' } : {}),
          });
          return res.end(seen.body);
        }
      }
      /** Answers `object` with `status`, remembered under the request's idempotency key. */
      const answer = (status: number, object: unknown) => {
        const text = JSON.stringify(object);
        if (idempotencyKey) idempotent.set(idempotencyKey, { digest, status, body: text });
        res.writeHead(status, {
          'content-type': 'application/json',
          'request-id': `req_${randomBytes(6).toString('hex')}`,
          ...(status >= 400 ? { 'stripe-should-retry': 'false' } : {}),
        });
        return res.end(text);
      };

      if (path === '/v1/payment_intents') {
        const known = [...paymentIntents.values(), ...setupIntents.values()].some(
          (i) => i.customer && i.customer === form.customer && i.payment_method === form.payment_method,
        );
        if (!form.customer || !form.payment_method || !known)
          return stripeError(
            res,
            400,
            'invalid_request_error',
            `No such PaymentMethod: '${form.payment_method ?? ''}' for this customer`,
            'resource_missing',
          );
        if (form.off_session !== 'true' || form.confirm !== 'true' || !Number.isInteger(Number(form.amount)))
          return stripeError(res, 400, 'invalid_request_error', 'Expected an off-session, confirmed amount.');
        const card = cards.get(form.payment_method) ?? 'succeeds';
        const intent: FakePaymentIntent = {
          id: id('pi'),
          object: 'payment_intent',
          amount: Number(form.amount),
          currency: form.currency ?? 'usd',
          status:
            card === 'succeeds' ? 'succeeded' : card === 'declines' ? 'requires_payment_method' : 'requires_action',
          customer: form.customer,
          payment_method: form.payment_method,
          setup_future_usage: null,
          metadata: formObject(form, 'metadata'),
          last_payment_error: null,
          created: now(),
          livemode: false,
        };
        paymentIntents.set(intent.id, intent);
        charges.push(intent);
        if (card === 'succeeds') return answer(200, intent);
        const error =
          card === 'declines'
            ? { type: 'card_error', code: 'card_declined', decline_code: 'insufficient_funds' }
            : { type: 'card_error', code: 'authentication_required', decline_code: 'authentication_required' };
        intent.last_payment_error = error;
        return answer(402, {
          error: {
            ...error,
            message:
              card === 'declines' ? 'Your card has insufficient funds.' : 'This payment requires authentication.',
            payment_intent: intent,
          },
        });
      }

      if (path === '/v1/refunds') {
        const paymentIntent = form.payment_intent;
        const paid = [...sessions.values()].find((s) => paymentIntent && s.payment_intent === paymentIntent);
        if (!paid) {
          return stripeError(
            res,
            400,
            'invalid_request_error',
            `No such payment_intent: '${paymentIntent ?? ''}'`,
            'resource_missing',
          );
        }
        if ([...refunds.values()].some((r) => r.payment_intent === paymentIntent)) {
          return stripeError(
            res,
            400,
            'invalid_request_error',
            `Charge for payment_intent ${paymentIntent} has already been refunded.`,
            'charge_already_refunded',
          );
        }
        const refund: FakeRefund = {
          id: `re_test_${randomBytes(12).toString('hex')}`,
          object: 'refund',
          amount: form.amount ? Number(form.amount) : paid.amount_total,
          currency: paid.currency,
          payment_intent: paid.payment_intent,
          metadata: formObject(form, 'metadata'),
          reason: form.reason ?? null,
          status: 'succeeded',
          created: Math.floor(Date.now() / 1000),
        };
        refunds.set(refund.id, refund);
        return answer(200, refund);
      }
      const amount =
        Number(form['line_items[0][price_data][unit_amount]'] ?? 0) * Number(form['line_items[0][quantity]'] ?? 1);
      const sessionId = id('cs');
      const mode = form.mode ?? 'payment';
      if (form.customer) {
        const known = [...sessions.values()].some((s) => s.customer === form.customer);
        if (!known)
          return stripeError(
            res,
            400,
            'invalid_request_error',
            `No such customer: '${form.customer}'`,
            'resource_missing',
          );
        if (form.customer_creation)
          return stripeError(
            res,
            400,
            'invalid_request_error',
            'You may only specify one of these parameters: customer, customer_creation.',
          );
      }
      if (mode === 'setup' && !form.currency && !form['payment_method_types[0]'])
        return stripeError(
          res,
          400,
          'invalid_request_error',
          'currency is required in setup mode when payment_method_types is not set.',
        );
      const customer = form.customer ?? (form.customer_creation === 'always' ? id('cus') : null);
      const paymentMethod = id('pm');
      const metadata = formObject(form, 'metadata');
      const paymentIntent: FakePaymentIntent = {
        id: id('pi'),
        object: 'payment_intent',
        amount,
        currency: form['line_items[0][price_data][currency]'] ?? 'usd',
        status: 'succeeded',
        customer,
        payment_method: paymentMethod,
        setup_future_usage: form['payment_intent_data[setup_future_usage]'] ?? null,
        metadata: formObject(form, 'payment_intent_data[metadata]'),
        last_payment_error: null,
        created: now(),
        livemode: false,
      };
      const setupIntent: FakeSetupIntent | null =
        mode === 'setup'
          ? {
              id: id('seti'),
              object: 'setup_intent',
              status: 'succeeded',
              customer,
              payment_method: paymentMethod,
              usage: 'off_session',
              metadata: formObject(form, 'setup_intent_data[metadata]'),
              created: now(),
              livemode: false,
            }
          : null;
      if (setupIntent) setupIntents.set(setupIntent.id, setupIntent);
      else paymentIntents.set(paymentIntent.id, paymentIntent);
      const session: FakeSession = {
        id: sessionId,
        object: 'checkout.session',
        url: `https://checkout.stripe.test/c/pay/${sessionId}`,
        mode,
        status: 'open',
        payment_status: 'unpaid',
        amount_total: amount,
        currency: form['line_items[0][price_data][currency]'] ?? form.currency ?? 'usd',
        customer_email: form.customer_email ?? null,
        metadata,
        client_reference_id: form.client_reference_id ?? null,
        payment_intent: paymentIntent.id,
        setup_intent: setupIntent?.id ?? null,
        customer,
        success_url: form.success_url ?? null,
        cancel_url: form.cancel_url ?? null,
        created: Math.floor(Date.now() / 1000),
        livemode: false,
      };
      sessions.set(sessionId, session);
      answer(200, session);
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const fake: FakeStripe = {
    url: `http://127.0.0.1:${port}`,
    requests,
    sessions,
    refunds,
    paymentIntents,
    setupIntents,
    charges,
    cards,
    failWith: undefined,
    refuseRefunds: undefined,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
  return fake;
}

/**
 * Stripe's `checkout.session.completed` event for a session of this fake, as Stripe's webhook
 * sends it once the buyer is through: a `payment` session paid, a `setup` one with its method set
 * up (nothing to pay). `object` replaces fields of the session in it. Unsigned: the caller signs
 * the JSON with its webhook secret.
 */
export function completedSessionEvent(session: FakeSession, object: Record<string, unknown> = {}) {
  const setup = session.mode === 'setup';
  return {
    id: `evt_test_${randomBytes(10).toString('hex')}`,
    object: 'event',
    api_version: Stripe.API_VERSION,
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    type: 'checkout.session.completed',
    data: {
      object: {
        id: session.id,
        object: 'checkout.session',
        mode: session.mode,
        status: 'complete',
        payment_status: setup ? 'no_payment_required' : 'paid',
        amount_total: setup ? null : session.amount_total,
        currency: session.currency,
        customer: session.customer,
        ...(setup ? { setup_intent: session.setup_intent } : { payment_intent: session.payment_intent }),
        client_reference_id: session.client_reference_id,
        metadata: session.metadata,
        ...object,
      },
    },
  };
}
