/**
 * A local stand-in for api.stripe.com, enough for Checkout and refunds: `POST /v1/checkout/sessions`
 * and `POST /v1/refunds`, with the form-encoded body the stripe package sends. It records every
 * request and honours idempotency keys as Stripe does (same key and body -> the same object,
 * `idempotent-replayed: true`; same key with another body -> 400 idempotency_error). A refund names
 * a PaymentIntent one of its sessions made; a second refund of one (under another key) is 400
 * `charge_already_refunded`, as Stripe answers. `refuseRefunds` makes refunds fail with a
 * Stripe-shaped error before anything is made or remembered (a transient refusal: clear it and the
 * same key goes through). Point the server at it with STRIPE_API_BASE.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

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
  payment_intent: string;
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
  const idempotent = new Map<string, { digest: string; object: FakeSession | FakeRefund }>();

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
      if (req.method !== 'POST' || (path !== '/v1/checkout/sessions' && path !== '/v1/refunds')) {
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
          res.writeHead(200, { 'content-type': 'application/json', 'idempotent-replayed': 'true' });
          return res.end(JSON.stringify(seen.object));
        }
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
        if (idempotencyKey) idempotent.set(idempotencyKey, { digest, object: refund });
        res.writeHead(200, {
          'content-type': 'application/json',
          'request-id': `req_${randomBytes(6).toString('hex')}`,
        });
        return res.end(JSON.stringify(refund));
      }
      const amount =
        Number(form['line_items[0][price_data][unit_amount]'] ?? 0) * Number(form['line_items[0][quantity]'] ?? 1);
      const id = `cs_test_${randomBytes(12).toString('hex')}`;
      const session: FakeSession = {
        id,
        object: 'checkout.session',
        url: `https://checkout.stripe.test/c/pay/${id}`,
        mode: form.mode ?? 'payment',
        status: 'open',
        payment_status: 'unpaid',
        amount_total: amount,
        currency: form['line_items[0][price_data][currency]'] ?? 'usd',
        customer_email: form.customer_email ?? null,
        metadata: formObject(form, 'metadata'),
        client_reference_id: form.client_reference_id ?? null,
        payment_intent: `pi_test_${randomBytes(12).toString('hex')}`,
        success_url: form.success_url ?? null,
        cancel_url: form.cancel_url ?? null,
        created: Math.floor(Date.now() / 1000),
        livemode: false,
      };
      sessions.set(id, session);
      if (idempotencyKey) idempotent.set(idempotencyKey, { digest, object: session });
      res.writeHead(200, { 'content-type': 'application/json', 'request-id': `req_${randomBytes(6).toString('hex')}` });
      res.end(JSON.stringify(session));
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const fake: FakeStripe = {
    url: `http://127.0.0.1:${port}`,
    requests,
    sessions,
    refunds,
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
