/**
 * In a real browser, against a server started as `npm start` starts it: no TEST_GATEWAY_SECRET
 * (nor anything else about payments) in its environment. The seller ticks `Test gateway` in
 * Settings and saves; then, in test mode, opens their store through `View store`, buys their own
 * test product with the test gateway and gets its key. Before, outside production the gateway
 * needed TEST_GATEWAY_SECRET, so checkout offered only Manual payment.
 */
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct, importKeys } from '../support/catalog.js';
import { createStoreFor, dashboard, registerSeller } from '../support/seller.js';
import { signInThroughUi } from './dashboard-support.js';
import { launchChromium, pagePerTest, startPageServer } from './support.js';

let server: Awaited<ReturnType<typeof startPageServer>>;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  [server, browser] = await Promise.all([startPageServer({ TEST_GATEWAY_SECRET: undefined }), launchChromium()]);
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});
pagePerTest(
  () => ({ browser, serviceUrl: server.url }),
  (opened) => ({ page } = opened),
);

describe('a plain start', () => {
  it('lets a seller enable the test gateway and buy from their own store in test mode', async () => {
    const seller = await registerSeller(server.url);
    const store = await createStoreFor(seller, 'Plain Forge');
    const product = await createProduct(
      seller,
      store.id,
      { name: 'Trial Key', price: 3, deliveryMethods: ['licenseKeys'] },
      'test',
    );
    await importKeys(seller, store.id, product.id, ['PLAIN-1111-AAAA'], 'test');

    // Settings: tick Test gateway, save.
    await page.goto(`${server.url}/dashboard/stores/${store.id}/settings`);
    await signInThroughUi(page, seller);
    const testGateway = page.getByRole('checkbox', { name: /^Test gateway/ });
    await testGateway.check();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const stored = await (await dashboard(seller, 'GET', `/api/dashboard/stores/${store.id}`)).json();
    expect(stored.settings.paymentMethods).toContain('test');

    // Test mode on, then the storefront of the mode through View store (its preview token).
    const modeSwitch = page.getByRole('switch', { name: 'Test mode' });
    await modeSwitch.focus();
    await page.keyboard.press('Space');
    await expect.poll(() => modeSwitch.isChecked()).toBe(true);
    const viewStore = page.getByRole('link', { name: 'View store' });
    await expect.poll(() => viewStore.getAttribute('href')).toMatch(/[?&]preview=svc_preview_/);
    await page.goto(`${server.url}${(await viewStore.getAttribute('href'))!}`);
    await page.getByRole('complementary', { name: 'Test mode' }).waitFor();
    await page.getByRole('link', { name: 'Trial Key' }).click();
    await page.getByRole('button', { name: 'Add to cart' }).click();
    await expect.poll(() => page.locator('#cart-total').textContent()).toBe('$3.00');
    await page.getByRole('button', { name: 'Checkout' }).click();

    // The checkout offers the test gateway, and it settles the order.
    await page.waitForURL(new RegExp(`^${server.url}/checkout/[a-z0-9]+\\?token=`));
    await page.getByLabel('E-mail').fill(`buyer-${randomBytes(4).toString('hex')}@example.test`);
    await page.getByLabel('Test payment').check();
    await page.getByRole('button', { name: 'Pay $3.00' }).click();
    await page.waitForURL(new RegExp(`^${server.url}/pay/test/`));
    await page.getByRole('button', { name: 'Pay $3.00' }).click();
    await page.waitForURL(new RegExp(`^${server.url}/orders/`));
    await expect.poll(() => page.locator('code.key').allTextContents()).toEqual(['PLAIN-1111-AAAA']);
  });
});
