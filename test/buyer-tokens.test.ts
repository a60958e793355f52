/**
 * Buyer routes and the checkout token, black-box: a token that does not open the order is 403
 * in our error body whatever its shape (one character, the right length but wrong, 200 or 4,000
 * characters, unicode), as docs/decisions.md says of a token given but not matching; none given is 401.
 * (A token of the wrong length once answered 400 from the input schema.)
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct, importKeys } from './support/catalog.js';
import { buy, TEST_GATEWAY_SECRET } from './support/payments.js';
import { clientIp, createStoreFor, registerSeller, uniqueEmail } from './support/seller.js';
import { startServer } from './support/server.js';

let server: Awaited<ReturnType<typeof startServer>>;
let paid: { id: string; token: string };
let pending: { id: string; token: string };
let ticketId = '';

const json = { 'content-type': 'application/json' };

async function placeOrder(storeId: string, productId: string): Promise<{ id: string; token: string }> {
  const response = await fetch(`${server.url}/api/orders/create`, {
    method: 'POST',
    headers: { ...json, 'x-forwarded-for': clientIp() },
    body: JSON.stringify({ storeId, cart: [{ productId, quantity: 1 }], email: uniqueEmail('buyer') }),
  });
  expect(response.status).toBe(201);
  const body = await response.json();
  return { id: body.order.id, token: body.checkoutToken };
}

beforeAll(async () => {
  server = await startServer({ TEST_GATEWAY_SECRET });
  const seller = await registerSeller(server.url);
  const store = await createStoreFor(seller);
  const product = await createProduct(seller, store.id, { name: 'Tokens', price: 5, deliveryMethods: ['licenseKeys'] });
  await importKeys(seller, store.id, product.id, ['TOKEN-KEY-1', 'TOKEN-KEY-2']);
  paid = await buy(server.url, { storeId: store.id, productId: product.id, email: uniqueEmail('buyer') });
  pending = await placeOrder(store.id, product.id);
  const ticket = await fetch(`${server.url}/api/tickets`, {
    method: 'POST',
    headers: { ...json, 'x-forwarded-for': clientIp() },
    body: JSON.stringify({ orderId: paid.id, token: paid.token, subject: 'Hello', message: 'A question' }),
  });
  expect(ticket.status).toBe(201);
  ticketId = (await ticket.json()).id;
}, 60_000);
afterAll(() => server?.stop());

/** Tokens that open nothing: every shape but the one a token has, and that one too. */
function wrongTokens(right: string): Array<[string, string]> {
  return [
    ['1 character', 'x'],
    ['10 characters', 'abcdefghij'],
    ['the right length, wrong', randomBytes(32).toString('base64url')],
    ['one character short', right.slice(0, -1)],
    ['one character more', `${right}x`],
    ['200 characters', 'a'.repeat(200)],
    ['4,000 characters', 'b'.repeat(4_000)],
    ['unicode', 'ünïcödé-✓-😀'.repeat(3)],
  ];
}

describe('a checkout token that does not open the order', () => {
  it('is 403 in our body on every buyer route, whatever its shape', async () => {
    const requests = (token: string): Array<[string, string, string, unknown?]> => [
      ['GET keys', 'GET', `/api/orders/${paid.id}/keys?token=${encodeURIComponent(token)}`],
      ['GET delivery', 'GET', `/api/orders/${paid.id}/delivery?token=${encodeURIComponent(token)}`],
      ['GET ticket', 'GET', `/api/tickets/${ticketId}?token=${encodeURIComponent(token)}`],
      ['POST checkout/enter', 'POST', '/api/checkout/enter', { orderId: pending.id, token }],
      ['POST checkout/start', 'POST', '/api/checkout/start', { orderId: pending.id, token, paymentMethod: 'manual' }],
      ['POST try-assign-keys', 'POST', `/api/orders/${paid.id}/try-assign-keys`, { token }],
      ['POST feedback', 'POST', '/api/feedback/create', { orderId: paid.id, token, rating: 5, text: 'Fine' }],
      ['POST tickets', 'POST', '/api/tickets', { orderId: paid.id, token, subject: 'Again', message: 'Hello' }],
      ['POST ticket reply', 'POST', `/api/tickets/${ticketId}/messages`, { token, message: 'More' }],
    ];
    const problems: string[] = [];
    for (const [shape, token] of wrongTokens(paid.token)) {
      for (const [label, method, path, body] of requests(token)) {
        const response = await fetch(`${server.url}${path}`, {
          method,
          headers: { ...(body === undefined ? {} : json), 'x-forwarded-for': clientIp() },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await response.text();
        const parsed = JSON.parse(text) as { error?: unknown; code?: unknown };
        if (response.status !== 403 || typeof parsed.error !== 'string' || parsed.code !== 'store_forbidden')
          problems.push(`${label} [${shape}] -> ${response.status} ${text.slice(0, 160)}`);
        if (text.includes(token) && token.length > 3) problems.push(`${label} [${shape}] echoes the token`);
      }
    }
    expect(problems).toEqual([]);
  }, 60_000);

  it('while the right token opens the order, and none at all is 401', async () => {
    const keys = await fetch(`${server.url}/api/orders/${paid.id}/keys?token=${paid.token}`);
    expect(keys.status).toBe(200);
    expect((await keys.json()).keys).toHaveLength(1);
    const none = await fetch(`${server.url}/api/orders/${paid.id}/keys`);
    expect(none.status).toBe(401);
    expect((await none.json()).code).toBe('unauthorized');
    const enter = await fetch(`${server.url}/api/checkout/enter`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ orderId: pending.id, token: pending.token }),
    });
    expect(enter.status).toBe(200);
  });
});
