/** Paying orders through the `test` gateway, exactly as a gateway would notify the server. */
import { createHmac, randomBytes } from 'node:crypto';
import { expect } from 'vitest';

export const TEST_GATEWAY_SECRET = 'test-gateway-secret-for-tests';

export interface TestNotification {
  id?: string;
  type?: 'payment.succeeded' | 'payment.refunded' | 'payment.failed';
  orderId: string;
  amount: number;
  currency?: string;
}

export function signedNotification(n: TestNotification, opts: { secret?: string; timestamp?: number } = {}) {
  const body = JSON.stringify({
    id: n.id ?? `tevt_${randomBytes(8).toString('hex')}`,
    type: n.type ?? 'payment.succeeded',
    orderId: n.orderId,
    amount: n.amount,
    currency: n.currency ?? 'USD',
  });
  const t = opts.timestamp ?? Math.floor(Date.now() / 1000);
  const v1 = createHmac('sha256', opts.secret ?? TEST_GATEWAY_SECRET)
    .update(`${t}.${body}`)
    .digest('hex');
  return { body, signature: `t=${t},v1=${v1}` };
}

export function notify(baseUrl: string, signed: { body: string; signature: string }) {
  return fetch(`${baseUrl}/api/payments/test/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-test-signature': signed.signature },
    body: signed.body,
  });
}

export async function pay(baseUrl: string, n: TestNotification) {
  return notify(baseUrl, signedNotification(n));
}

/**
 * One of `productId`, bought over HTTP as any buyer would (`/api/orders/create`, in the product's
 * mode) and paid through the test gateway: answers the paid order. A test product needs the
 * seller's side: `testCredential`, a preview token or a test key of the store.
 */
export async function paidOrder(
  baseUrl: string,
  order: { storeId: string; productId: string; email?: string; ip?: string; testCredential?: string },
): Promise<{ id: string; orderId: string }> {
  const created = await fetch(`${baseUrl}/api/orders/create`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-forwarded-for': order.ip ?? `198.51.100.${randomBytes(1)[0]}`,
      ...(order.testCredential ? { authorization: `Bearer ${order.testCredential}` } : {}),
    },
    body: JSON.stringify({
      storeId: order.storeId,
      cart: [{ productId: order.productId, quantity: 1 }],
      email: order.email ?? `buyer-${randomBytes(4).toString('hex')}@example.test`,
    }),
  });
  expect(created.status, await created.clone().text()).toBe(201);
  const { order: placed } = await created.json();
  expect((await (await pay(baseUrl, { orderId: placed.id, amount: placed.price })).json()).outcome).toBe('settled');
  return placed;
}
