/**
 * A local stand-in for api.stripe.com, enough for Checkout: `POST /v1/checkout/sessions`
 * with the form-encoded body the stripe package sends. It records every request and honours
 * idempotency keys as Stripe does (same key and body -> the same session; same key with
 * another body -> 400 idempotency_error). Point the server at it with STRIPE_API_BASE.
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

export interface FakeStripe {
  url: string;
  requests: FakeStripeRequest[];
  sessions: Map<string, FakeSession>;
  /** While set, every API call answers this HTTP status with a Stripe error body. */
  failWith: number | undefined;
  close(): Promise<void>;
}

function stripeError(
  res: ServerResponse,
  status: number,
  type: string,
  message: string,
  extra: Record<string, string> = {},
) {
  res.writeHead(status, {
    'content-type': 'application/json',
    'request-id': `req_${randomBytes(6).toString('hex')}`,
    'stripe-should-retry': 'false',
    ...extra,
  });
  res.end(JSON.stringify({ error: { type, message } }));
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
  const idempotent = new Map<string, { digest: string; session: FakeSession }>();

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
      if (req.method !== 'POST' || path !== '/v1/checkout/sessions') {
        return stripeError(res, 404, 'invalid_request_error', `Unrecognized request URL (${req.method}: ${path}).`);
      }

      const digest = createHash('sha256').update(body).digest('hex');
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
          return res.end(JSON.stringify(seen.session));
        }
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
      if (idempotencyKey) idempotent.set(idempotencyKey, { digest, session });
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
    failWith: undefined,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
  return fake;
}
