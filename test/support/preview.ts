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
