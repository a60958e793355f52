/**
 * Black-box, over HTTP: the Home's setup checklist, `GET /api/dashboard/stores/{storeId}/onboarding`
 * (docs/decisions.md, "Onboarding checklist"). A new store has five open steps; each flips as the
 * seller does it through the real routes: a product, a save of the payment methods, the storefront
 * opened by the seller's side, a paid test purchase, an API key. "View the store" is the seller's:
 * a buyer's visit, a theme's API call with the preview token and a visit signed in to another
 * store leave it open; the dashboard's preview link and a page opened with the member's session
 * close it. Only a member of the store with View orders may read it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct } from './support/catalog.js';
import { buy, TEST_GATEWAY_SECRET } from './support/payments.js';
import { bearer, previewToken } from './support/preview.js';
import { addStaff, createKeyFor, createStoreFor, dashboard, registerSeller, type Seller } from './support/seller.js';
import { startServer } from './support/server.js';

let server: Awaited<ReturnType<typeof startServer>>;

beforeAll(async () => {
  server = await startServer({ TEST_GATEWAY_SECRET });
});
afterAll(async () => {
  await server?.stop();
});

const onboardingPath = (storeId: string) => `/api/dashboard/stores/${storeId}/onboarding`;

async function onboarding(seller: Seller, storeId: string) {
  const response = await dashboard(seller, 'GET', onboardingPath(storeId));
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as { steps: Array<{ id: string; done: boolean }>; complete: boolean };
}

const done = async (seller: Seller, storeId: string) =>
  (await onboarding(seller, storeId)).steps.filter((step) => step.done).map((step) => step.id);

const page = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${server.url}${path}`, { headers, redirect: 'manual' });

describe('the setup checklist', () => {
  it('starts with five open steps and closes each as the seller does it', async () => {
    const seller = await registerSeller(server.url);
    const store = await createStoreFor(seller);
    expect(await onboarding(seller, store.id)).toEqual({
      steps: ['add_product', 'payment_methods', 'view_store', 'test_purchase', 'api_key'].map((id) => ({
        id,
        done: false,
      })),
      complete: false,
    });

    const product = await createProduct(seller, store.id, { name: 'Test guide', price: 4 }, 'test');
    expect(await done(seller, store.id)).toEqual(['add_product']);

    const saved = await dashboard(seller, 'PATCH', `/api/dashboard/stores/${store.id}`, {
      settings: { paymentMethods: ['manual', 'test'] },
    });
    expect(saved.status).toBe(200);
    expect(await done(seller, store.id)).toEqual(['add_product', 'payment_methods']);

    // The storefront opened with the seller's session cookie, as the dashboard's live View store link does.
    const visit = await page(`/s/${store.subdomain}`, { cookie: seller.cookie });
    expect(visit.status).toBe(200);
    expect(await done(seller, store.id)).toEqual(['add_product', 'payment_methods', 'view_store']);

    const token = await previewToken(seller, store.id);
    await buy(server.url, { storeId: store.id, productId: product.id, headers: bearer(token) });
    expect(await done(seller, store.id)).toEqual(['add_product', 'payment_methods', 'view_store', 'test_purchase']);

    await createKeyFor(seller, { scopes: ['order:read'], storeIds: [store.id], mode: 'test' });
    const finished = await onboarding(seller, store.id);
    expect(finished.steps.every((step) => step.done)).toBe(true);
    expect(finished.complete).toBe(true);
  });

  it('counts the store as viewed by its seller only, not by buyers, themes or other sellers', async () => {
    const seller = await registerSeller(server.url);
    const store = await createStoreFor(seller);
    const stranger = await registerSeller(server.url);
    await createStoreFor(stranger);
    const token = await previewToken(seller, store.id);

    // A buyer's pages, a theme's API calls with the preview token, another store's seller.
    expect((await page(`/s/${store.subdomain}`)).status).toBe(200);
    expect((await page(`/s/${store.subdomain}/cart`)).status).toBe(200);
    expect((await page(`/s/${store.subdomain}?mode=test`)).status).toBe(200);
    const theme = await page(`/api/stores/by-subdomain/${store.subdomain}/storefront?mode=test`, bearer(token));
    expect(theme.status, await theme.clone().text()).toBe(200);
    expect((await page(`/s/${store.subdomain}`, { cookie: stranger.cookie })).status).toBe(200);
    expect((await page(`/s/${store.subdomain}?mode=test`, { cookie: stranger.cookie })).status).toBe(200);
    expect(await done(seller, store.id)).toEqual([]);

    // The dashboard's View store link in test mode: the preview token in the address, once.
    const opened = await page(`/s/${store.subdomain}?mode=test&preview=${encodeURIComponent(token)}`);
    expect(opened.status).toBe(303);
    expect(await done(seller, store.id)).toEqual(['view_store']);
  });

  it('is read by members with View orders only: another store’s seller and staff without it are refused', async () => {
    const owner = await registerSeller(server.url);
    const store = await createStoreFor(owner);
    const stranger = await registerSeller(server.url);
    const strangerRead = await dashboard(stranger, 'GET', onboardingPath(store.id));
    expect(strangerRead.status).toBe(403);
    expect((await strangerRead.json()).code).toBe('store_forbidden');

    const clerk = await registerSeller(server.url);
    await addStaff(owner, store.id, clerk, ['manageProducts']);
    const clerkRead = await dashboard(clerk, 'GET', onboardingPath(store.id));
    expect(clerkRead.status).toBe(403);
    expect((await clerkRead.json()).code).toBe('permission_missing');
    const viewer = await registerSeller(server.url);
    await addStaff(owner, store.id, viewer, ['viewOrders']);
    expect((await dashboard(viewer, 'GET', onboardingPath(store.id))).status).toBe(200);

    const anonymous = await fetch(`${server.url}${onboardingPath(store.id)}`);
    expect(anonymous.status).toBe(401);
  });
});
