/**
 * Test mode from the buyer's side needs the seller (docs/decisions.md, "Test mode needs the
 * seller"): a preview token of the store, as the dashboard's View store link gets it.
 */
import { expect } from 'vitest';
import { dashboard, type Seller } from './seller.js';

/** A preview token of the store's test mode (`stores.previewToken`), an hour long. */
export async function previewToken(seller: Seller, storeId: string): Promise<string> {
  const response = await dashboard(seller, 'GET', `/api/dashboard/stores/${storeId}/preview-token`);
  expect(response.status, await response.clone().text()).toBe(200);
  const { token } = (await response.json()) as { token: string };
  expect(token).toMatch(/^svc_preview_/);
  return token;
}

/** `Authorization: Bearer <credential>`: a preview token or a test key on the theme API. */
export const bearer = (credential: string): Record<string, string> => ({ authorization: `Bearer ${credential}` });

/** The svc_preview cookie a storefront page opened with `?preview=` sets, as the browser sends it back. */
export const previewCookie = (token: string): Record<string, string> => ({ cookie: `svc_preview=${token}` });

/** What a recurring plan's checkout, paid on the test gateway's page, leaves: the order and its checkout token. */
export interface TestPageSubscription {
  orderId: string;
  token: string;
}

/**
 * A buyer subscribes in test mode: checks out one seat of `planId` with the store's preview
 * token, starts the test gateway and pays on its page with `card` (a named test card), which
 * answers 303. Each request from a client address of its own (`ip`).
 */
export async function subscribeOnTestPage(
  baseUrl: string,
  input: { storeId: string; productId: string; planId: string; email: string; preview: string; card: string },
  ip: () => string,
): Promise<TestPageSubscription> {
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': ip(), ...headers },
      body: JSON.stringify(body),
    });
  const cart = [{ productId: input.productId, planId: input.planId, quantity: 1 }];
  const checkout = await post(
    '/api/v1/checkout',
    { shopId: input.storeId, cart, email: input.email },
    bearer(input.preview),
  );
  expect(checkout.status, await checkout.clone().text()).toBe(200);
  const { orderId, url } = (await checkout.json()) as { orderId: string; url: string };
  const token = new URL(url).searchParams.get('token')!;
  const started = await post('/api/checkout/start', { orderId, token, paymentMethod: 'test' });
  expect(started.status, await started.text()).toBe(200);
  const paid = await fetch(`${baseUrl}/pay/test/${orderId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token, card: input.card }).toString(),
    redirect: 'manual',
  });
  expect(paid.status).toBe(303);
  return { orderId, token };
}
