/**
 * Paying orders through the `test` gateway, exactly as a gateway would notify the server; and
 * `buy`, a whole purchase as a buyer makes it, for the tests that need paid orders.
 */
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

/** What a buyer buys: one product, or a whole cart, and what they give at the checkout. */
export interface Purchase {
  storeId: string;
  /** One product, `quantity` of it (1 unless said)... */
  productId?: string;
  quantity?: number;
  /** ...or the cart's lines. */
  cart?: Array<{ productId: string; quantity: number }>;
  /** The buyer's e-mail: a fresh `buyer-…@example.test` unless said; `null` for an order without one. */
  email?: string | null;
  coupon?: string;
  customFields?: Record<string, string | number | boolean>;
  /** The buyer's address (X-Forwarded-For, behind the trusted proxy): a random one unless said. */
  ip?: string;
  /** More headers for each of the buyer's requests (the buyer's country, `cf-ipcountry`, say). */
  headers?: Record<string, string>;
}

/** The order bought, as the checkout page showed it before payment (it is paid now). */
export interface Bought {
  /** The order's id (what `/api/v1/checkout` calls `orderId`). */
  id: string;
  /** Its number as buyers and sellers see it, `ORD-…`. */
  orderId: string;
  /** The checkout token that opens it, and the checkout page's address with it. */
  token: string;
  url: string;
  /** The order's e-mail ('' for an order without one). */
  email: string;
  livemode: boolean;
  lines: Array<{ productId: string | null; productName: string; quantity: number; unitPrice: number }>;
  subtotal: number;
  discount: number;
  price: number;
  currency: string;
}

/**
 * A purchase as a buyer makes it, over HTTP: the cart checked out (`POST /api/v1/checkout`, in
 * its products' mode), the order opened with its token (`POST /api/checkout/enter`, as the checkout
 * page does, which answers its price) and paid through the test gateway (a signed notification of
 * that price, as the gateway sends it), which settles it. For a test that needs paid orders; a test
 * of the checkout's or the payment's own steps takes them itself.
 */
export async function buy(baseUrl: string, purchase: Purchase): Promise<Bought> {
  const headers = {
    'content-type': 'application/json',
    'x-forwarded-for': purchase.ip ?? `198.51.100.${1 + (randomBytes(1)[0]! % 254)}`,
    ...purchase.headers,
  };
  const cart = purchase.cart ?? [{ productId: purchase.productId!, quantity: purchase.quantity ?? 1 }];
  const email = purchase.email === undefined ? `buyer-${randomBytes(4).toString('hex')}@example.test` : purchase.email;
  const checkout = await fetch(`${baseUrl}/api/v1/checkout`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      shopId: purchase.storeId,
      cart,
      email,
      ...(purchase.coupon !== undefined ? { coupon: purchase.coupon } : {}),
      ...(purchase.customFields !== undefined ? { customFields: purchase.customFields } : {}),
    }),
  });
  expect(checkout.status, await checkout.clone().text()).toBe(200);
  const { url, orderId: id } = (await checkout.json()) as { url: string; orderId: string };
  const token = new URL(url).searchParams.get('token')!;
  const entered = await fetch(`${baseUrl}/api/checkout/enter`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ orderId: id, token }),
  });
  expect(entered.status, await entered.clone().text()).toBe(200);
  const { order } = (await entered.json()) as { order: Bought & { status: string } };
  expect(order.status).toBe('pending');
  const paid = await pay(baseUrl, { orderId: id, amount: order.price, currency: order.currency });
  expect(await paid.json()).toEqual({ outcome: 'settled' });
  return {
    id,
    orderId: order.orderId,
    token,
    url,
    email: order.email,
    livemode: order.livemode,
    lines: order.lines,
    subtotal: order.subtotal,
    discount: order.discount,
    price: order.price,
    currency: order.currency,
  };
}
