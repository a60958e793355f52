/**
 * In a real browser: /docs opens on the merchant API, every one of its operations on the page (so
 * find-in-page finds them), and its definitions (Merchant API, License API, Dashboard and seller
 * sign-in, Storefront, themes and buyers) hold between them every operation of /api/openapi.json,
 * each once. The whole document on one page showed auth and two public routes: past 150 rows
 * Swagger UI renders only those in view, and the dashboard's came first.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, pagePerTest, startPageServer } from './support.js';

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
pagePerTest(
  () => ({ browser, serviceUrl: server.url }),
  (opened) => ({ page } = opened),
);

const DEFINITIONS = ['Merchant API', 'License API', 'Dashboard and seller sign-in', 'Storefront, themes and buyers'];

/** The operations on the page, as `METHOD /path` (webhook events excluded: they are not paths). */
async function shownOperations(): Promise<string[]> {
  const rows = page.locator('.opblock-tag-section .opblock');
  const shown: string[] = [];
  for (const row of await rows.all()) {
    const method = (await row.locator('.opblock-summary-method').textContent())?.trim() ?? '';
    const path = (await row.locator('.opblock-summary-path').getAttribute('data-path')) ?? '';
    shown.push(`${method} ${path}`);
  }
  return shown;
}

describe('the API reference at /docs', () => {
  it('opens on the merchant API and shows every documented operation in one of its definitions', async () => {
    const document = await (await fetch(`${server.url}/api/openapi.json`)).json();
    const documented = Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(
      ([path, item]) =>
        Object.keys(item)
          .filter((key) => ['get', 'post', 'put', 'patch', 'delete'].includes(key))
          .map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(documented.length).toBeGreaterThan(150);

    await page.goto(`${server.url}/docs`);
    // Swagger UI builds the merchant definition's ~190 operations in the browser: on a loaded
    // 2-core machine that took more than the default 10 s once, so it gets 30.
    await page.getByRole('heading', { name: /Merchant API/ }).waitFor({ timeout: 30_000 });
    const definition = page.getByLabel('Select a definition');
    expect(await definition.locator('option:checked').textContent()).toBe('Merchant API');
    // The merchant API's rows are on the page itself, not only once scrolled to.
    for (const tag of ['merchant: store', 'merchant: orders', 'merchant: products', 'merchant: webhooks'])
      await page.locator(`.opblock-tag[data-tag="${tag}"]`).waitFor();
    const merchant = await shownOperations();
    expect(merchant).toEqual(
      expect.arrayContaining([
        'GET /api/merchant/v1/stores/{storeId}/orders',
        'POST /api/merchant/v1/stores/{storeId}/products',
        'POST /api/merchant/v1/stores/{storeId}/orders/{orderId}/refund',
      ]),
    );
    expect(merchant.every((operation) => operation.includes('/api/merchant/v1/'))).toBe(true);

    const seen = [...merchant];
    for (const name of DEFINITIONS.slice(1)) {
      await definition.selectOption({ label: name });
      await page.getByRole('heading', { name: new RegExp(`: ${name}`) }).waitFor();
      await page.locator('.opblock-tag-section .opblock').first().waitFor();
      seen.push(...(await shownOperations()));
    }
    expect([...seen].sort()).toEqual([...documented].sort());
  });
});
