/**
 * In a real browser: `Delete test data` on the Settings screen (test mode: docs/architecture.md). The owner
 * asks, a dialog asks back (its confirming button is `Delete`), Cancel deletes nothing; `Delete`
 * starts the background job and the screen shows its status until it finishes. The store's test
 * products and orders are gone; its live ones stay.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientIp, type Seller } from '../support/seller.js';
import { createShop, launchChromium, startPageServer } from './support.js';
import { dashboardPagePerTest, expectAccessible, signInThroughUi, storeUrl } from './dashboard-support.js';

let server: Awaited<ReturnType<typeof startPageServer>>;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  [server, browser] = await Promise.all([startPageServer(), launchChromium()]);
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});
dashboardPagePerTest(
  () => ({ browser, serviceUrl: server.url }),
  (opened) => ({ page } = opened),
);

/** A dashboard call in one mode (X-Svc-Mode), as the dashboard's toggle makes it. */
function inMode(seller: Seller, mode: 'live' | 'test', method: string, path: string, body?: unknown) {
  return fetch(`${server.url}${path}`, {
    method,
    headers: {
      cookie: seller.cookie,
      'x-svc-mode': mode,
      'x-forwarded-for': clientIp(),
      ...(method === 'GET' ? {} : { 'x-csrf-token': seller.csrfToken }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function productNames(seller: Seller, storeId: string, mode: 'live' | 'test'): Promise<string[]> {
  const response = await inMode(seller, mode, 'GET', `/api/dashboard/stores/${storeId}/products`);
  expect(response.status).toBe(200);
  const body = (await response.json()) as { products: Array<{ name: string }> };
  return body.products.map((p) => p.name).sort();
}

describe('Delete test data', () => {
  it('asks, then deletes the store’s test data in the background and shows the job until it finishes', async () => {
    const shop = await createShop(server.url, 'Wipe Forge');
    const { seller, store } = shop;
    for (const [mode, name] of [
      ['live', 'Live pack'],
      ['test', 'Test pack'],
      ['test', 'Another test pack'],
    ] as const) {
      const response = await inMode(seller, mode, 'POST', `/api/dashboard/stores/${store.id}/products`, {
        name,
        price: 4,
        deliveryMethods: ['manualDelivery'],
      });
      expect(response.status, await response.clone().text()).toBe(201);
    }
    expect(await productNames(seller, store.id, 'test')).toEqual(['Another test pack', 'Test pack']);

    await page.goto(storeUrl(server.url, store.id, '/settings'));
    await signInThroughUi(page, seller);
    await page.getByRole('heading', { name: 'Test data' }).waitFor();

    // Cancel: nothing is deleted.
    await page.getByRole('button', { name: 'Delete test data' }).click();
    const dialog = page.getByRole('alertdialog', { name: 'Delete this store’s test data?' });
    await dialog.waitFor();
    await expectAccessible(page, 'settings: delete test data dialog');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(await productNames(seller, store.id, 'test')).toEqual(['Another test pack', 'Test pack']);

    await page.getByRole('button', { name: 'Delete test data' }).click();
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    // The job's status, read again until it finishes (the server's job looks every second).
    await page
      .getByRole('status')
      .filter({ hasText: /^Test data deleted: \d+ rows\.$/ })
      .waitFor({ timeout: 30_000 });

    expect(await productNames(seller, store.id, 'test')).toEqual([]);
    expect(await productNames(seller, store.id, 'live')).toEqual(['Live pack']);
  });
});
