/**
 * In a real browser: the dashboard's Test mode (docs/architecture.md, Test mode, issue 31 item 3). The `Test mode`
 * switch in the header is reached with Tab and turned on with Space; a `Test mode` status then
 * says so on every screen (axe-clean, light and dark). A product created in test mode is listed
 * in test mode only; a test order bought with it counts in Home's figures in test mode only; every
 * API call carries the mode in `X-Svc-Mode`; the mode survives a reload and a deep link, and a
 * switch in another tab is followed. A key created in test mode is `sk_test_…` in its dialog
 * and `test` in the list. A test order's payment proof downloads from its page in test mode (a plain
 * route, fetched with the mode header).
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct } from '../support/catalog.js';
import { buy } from '../support/payments.js';
import { previewToken } from '../support/preview.js';
import { type Seller } from '../support/seller.js';
import { dashboardPagePerTest, expectAccessible, signInThroughUi, storeUrl } from './dashboard-support.js';
import { createShop, launchChromium, screenshots, startPageServer } from './support.js';

// Evaluated in the page; tsconfig.test.json has no DOM types.
declare const document: any;

let server: Awaited<ReturnType<typeof startPageServer>>;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  [server, browser] = await Promise.all([startPageServer(), launchChromium()]);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});
dashboardPagePerTest(
  () => ({ browser, serviceUrl: server.url }),
  (opened) => ({ page } = opened),
);

const modeSwitch = () => page.getByRole('switch', { name: 'Test mode' });
/** A pointer's click on the switch: on its visible label (the input itself is visually hidden). */
const clickModeSwitch = () => page.locator('label', { has: modeSwitch() }).click();
const banner = () => page.getByRole('status').filter({ hasText: 'You are viewing test data' });

async function signIn(seller: Seller, url: string): Promise<void> {
  await page.goto(url);
  await signInThroughUi(page, seller);
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
}

async function goTo(link: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: link, exact: true }).click();
  await page.getByRole('heading', { level: 1, name: link }).waitFor();
}

/** The mode header of every API call the page makes from now on (tRPC and plain dashboard routes). */
function recordModeHeaders(): Array<{ url: string; mode: string | undefined }> {
  const seen: Array<{ url: string; mode: string | undefined }> = [];
  page.on('request', (request) => {
    const { pathname } = new URL(request.url());
    if (pathname.startsWith('/trpc/') || pathname.startsWith('/api/dashboard/')) {
      seen.push({ url: pathname, mode: request.headers()['x-svc-mode'] });
    }
  });
  return seen;
}

/** The product list's names, once the list (or its empty line) is shown. */
async function listedProducts(): Promise<string[]> {
  const table = page.getByRole('table', { name: 'Products' });
  await table.waitFor();
  await page.getByText('Loading products…').waitFor({ state: 'detached' });
  const rows = (await table.getByRole('row').allTextContents()).slice(1);
  // An empty list's one row is its empty state: `No products yet.` and what to do next.
  return rows.filter((row) => !row.startsWith('No products yet.'));
}

/** Home's `Today` card: its order count. */
async function ordersToday(): Promise<string> {
  const card = page.locator('section.card', { has: page.getByRole('heading', { name: /^Today/ }) });
  await card.waitFor();
  return ((await card.locator('dd.figure').nth(1).textContent()) ?? '').trim();
}

describe('dashboard test mode', () => {
  it('the switch by keyboard, the banner, test products and figures kept apart from live ones, and the mode kept on reload', async () => {
    const shop = await createShop(server.url, 'Mode Works');
    // A live product, made over HTTP without the header.
    await createProduct(shop.seller, shop.store.id, { name: 'Live Lantern', price: 5 });
    const calls = recordModeHeaders();
    await signIn(shop.seller, storeUrl(server.url, shop.store.id, '/products'));
    await page.getByRole('heading', { level: 1, name: 'Products' }).waitFor();
    expect(await listedProducts()).toEqual([expect.stringContaining('Live Lantern')]);
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.filter((call) => call.mode !== 'live')).toEqual([]);
    calls.length = 0;
    expect(await modeSwitch().isChecked()).toBe(false);
    expect(await banner().count()).toBe(0);

    // Keyboard: the switch follows the Store switcher in the tab order; Space turns it on.
    await page.getByRole('combobox', { name: 'Store' }).focus();
    await page.keyboard.press('Tab');
    expect(await modeSwitch().evaluate((element) => element === document.activeElement)).toBe(true);
    await page.keyboard.press('Space');
    await banner().waitFor();
    expect(await modeSwitch().isChecked()).toBe(true);
    expect(await banner().textContent()).toContain('Test mode');
    // The live product is gone from the list at once: the cache was reset, the list is the test one.
    expect(await listedProducts()).toEqual([]);
    await expectAccessible(page, 'Products in test mode');
    // The banner at a phone's and a laptop's width, light and dark: no sideways scrolling, no low-contrast text.
    await screenshots(page, 'dashboard-test-mode-light');
    await page.emulateMedia({ colorScheme: 'dark' });
    await screenshots(page, 'dashboard-test-mode-dark');
    await page.emulateMedia({ colorScheme: 'light' });

    // A product created in test mode is listed in test mode.
    await page.getByRole('link', { name: 'New product' }).click();
    await page.getByRole('heading', { name: 'New product', level: 1 }).waitFor();
    await page.getByLabel('Name').fill('Test Teapot');
    await page.getByLabel('Price').fill('19.99');
    await page.getByRole('checkbox', { name: 'Delivery instructions' }).check();
    await page.getByRole('textbox', { name: 'Delivery instructions' }).fill('Brew for three minutes.');
    await page.getByRole('button', { name: 'Create product' }).click();
    await page.getByRole('heading', { name: 'Test Teapot', level: 1 }).waitFor();
    await banner().waitFor();
    const productId = new URL(page.url()).pathname.split('/').pop()!;
    await goTo('Products');
    // The list cached before the creation may show until its refetch lands.
    await expect.poll(listedProducts, { timeout: 10_000 }).toEqual([expect.stringContaining('Test Teapot')]);

    // Bought: a test order (by the seller's side: a preview token), counted on Home in test mode.
    const preview = await previewToken(shop.seller, shop.store.id);
    await buy(server.url, { storeId: shop.store.id, productId, headers: { authorization: `Bearer ${preview}` } });
    await goTo('Home');
    await expect.poll(ordersToday, { timeout: 10_000 }).toBe('1');
    await expectAccessible(page, 'Home in test mode');
    // Every call since the switch said test: the lists, the product's creation, Home's figures.
    expect(calls.some((call) => call.url.includes('catalog.create'))).toBe(true);
    expect(calls.filter((call) => call.mode !== 'test')).toEqual([]);

    // A reload, and a deep link in a new tab of the same browser, keep the mode.
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Home' }).waitFor();
    await banner().waitFor();
    expect(await modeSwitch().isChecked()).toBe(true);
    expect(await ordersToday()).toBe('1');
    // `View store` opens the storefront of the mode: its test products, with a preview token in
    // the link, which opens them in a browser without this session too (a colleague's).
    const viewStore = page.getByRole('link', { name: 'View store' });
    await expect
      .poll(() => viewStore.getAttribute('href'))
      .toMatch(new RegExp(`^/s/${shop.store.subdomain}\\?mode=test&preview=svc_preview_`));
    const elsewhere = await browser.newContext();
    try {
      const tab = await elsewhere.newPage();
      await tab.goto(`${server.url}${(await viewStore.getAttribute('href'))!}`);
      expect(tab.url()).toBe(`${server.url}/s/${shop.store.subdomain}?mode=test`);
      await tab.getByRole('complementary', { name: 'Test mode' }).waitFor();
      await tab.getByRole('link', { name: 'Test Teapot' }).waitFor();
      // Without the token, the same address in that browser is the live store.
      const stranger = await browser.newContext();
      try {
        const strangerTab = await stranger.newPage();
        await strangerTab.goto(`${server.url}/s/${shop.store.subdomain}?mode=test`);
        await strangerTab.getByRole('link', { name: 'Live Lantern' }).waitFor();
        expect(await strangerTab.getByRole('link', { name: 'Test Teapot' }).count()).toBe(0);
      } finally {
        await stranger.close();
      }
    } finally {
      await elsewhere.close();
    }
    const other = await page.context().newPage();
    try {
      await other.goto(storeUrl(server.url, shop.store.id, '/products'));
      await other.getByRole('heading', { level: 1, name: 'Products' }).waitFor();
      await other.getByRole('status').filter({ hasText: 'You are viewing test data' }).waitFor();
      expect(await other.getByRole('switch', { name: 'Test mode' }).isChecked()).toBe(true);
    } finally {
      await other.close();
    }

    // Off: no banner, the live figures and list without the test product and its order.
    await clickModeSwitch();
    await banner().waitFor({ state: 'detached' });
    expect(await modeSwitch().isChecked()).toBe(false);
    await expect.poll(ordersToday, { timeout: 10_000 }).toBe('0');
    expect(await page.getByRole('link', { name: 'View store' }).getAttribute('href')).toBe(
      `/s/${shop.store.subdomain}`,
    );
    await goTo('Products');
    await expect.poll(listedProducts, { timeout: 10_000 }).toEqual([expect.stringContaining('Live Lantern')]);
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Products' }).waitFor();
    expect(await modeSwitch().isChecked()).toBe(false);
    expect(await banner().count()).toBe(0);

    // Switched on in another tab of this browser: this tab follows, list and banner together.
    const second = await page.context().newPage();
    try {
      await second.goto(storeUrl(server.url, shop.store.id, '/products'));
      await second.getByRole('heading', { level: 1, name: 'Products' }).waitFor();
      await second.locator('label', { has: second.getByRole('switch', { name: 'Test mode' }) }).click();
      await second.getByRole('status').filter({ hasText: 'You are viewing test data' }).waitFor();
    } finally {
      await second.close();
    }
    await banner().waitFor();
    expect(await modeSwitch().isChecked()).toBe(true);
    await expect.poll(listedProducts, { timeout: 10_000 }).toEqual([expect.stringContaining('Test Teapot')]);
  }, 120_000);

  it('a key made in test mode is sk_test_ in its dialog and test in the list', async () => {
    const shop = await createShop(server.url, 'Test Keys');
    await signIn(shop.seller, storeUrl(server.url, shop.store.id, '/api-keys'));
    await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
    await clickModeSwitch();
    await banner().waitFor();

    await page.getByRole('button', { name: 'Create API key' }).click();
    const form = page.getByRole('dialog', { name: 'Create an API key' });
    await form.getByLabel('Name', { exact: true }).fill('Staging');
    // The mode choice starts at the dashboard's mode.
    expect(await form.getByRole('radio', { name: 'Test' }).isChecked()).toBe(true);
    await form.getByRole('checkbox', { name: /^order:read\b/ }).check();
    await expect
      .poll(() => form.getByRole('checkbox', { name: 'Test Keys' }).isChecked(), { timeout: 10_000 })
      .toBe(true);
    await form.getByRole('button', { name: 'Create key' }).click();

    const shown = page.getByRole('dialog', { name: 'Your new API key' });
    await shown.getByRole('button', { name: 'Copy' }).waitFor();
    const key = (await shown.getByLabel('Secret').textContent())?.trim() ?? '';
    expect(key).toMatch(/^sk_test_/);
    await expectAccessible(page, 'the new test key dialog');
    await shown.getByRole('button', { name: 'Done' }).click();

    const row = page.getByRole('row', { name: /Staging/ });
    await row.waitFor();
    const modeCell = row.getByRole('cell').nth(2);
    expect((await modeCell.textContent())?.trim()).toBe('test');
    expect(await row.textContent()).not.toContain(key);

    // The key reads the test mode's orders: none, and answers as a test key would.
    const orders = await fetch(`${server.url}/api/merchant/v1/stores/${shop.store.id}/orders`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(orders.status, await orders.clone().text()).toBe(200);

    // A live key made from test mode by choosing Live is sk_live_ and listed as live.
    await page.getByRole('button', { name: 'Create API key' }).click();
    await form.getByLabel('Name', { exact: true }).fill('Production');
    await form.getByRole('radio', { name: 'Live' }).check();
    await form.getByRole('checkbox', { name: /^order:read\b/ }).check();
    await form.getByRole('button', { name: 'Create key' }).click();
    await shown.getByRole('button', { name: 'Copy' }).waitFor();
    expect((await shown.getByLabel('Secret').textContent())?.trim()).toMatch(/^sk_live_/);
    await shown.getByRole('button', { name: 'Done' }).click();
    const live = page.getByRole('row', { name: /Production/ });
    await live.waitFor();
    expect((await live.getByRole('cell').nth(2).textContent())?.trim()).toBe('live');
    await expectAccessible(page, 'API keys in test mode');

    // The Developers screen offers the test key only, in test mode.
    await goTo('Developers');
    const offered = page.getByRole('combobox', { name: 'API key' });
    await offered.waitFor();
    expect((await offered.getByRole('option').allTextContents()).map((name) => name.trim())).toEqual([
      `Staging (${key.slice(0, 14)}…)`,
    ]);
    expect(await page.getByRole('region', { name: 'curl' }).textContent()).toContain(`Bearer ${key.slice(0, 14)}...`);
  }, 120_000);

  it("downloads a test order's payment proof from its page in test mode; in live mode the order is not found", async () => {
    const shop = await createShop(server.url, 'Proof Works');
    // A test product, made over HTTP as the dashboard does in test mode.
    const made = await fetch(`${server.url}/api/dashboard/stores/${shop.store.id}/products`, {
      method: 'POST',
      headers: {
        cookie: shop.seller.cookie,
        'x-csrf-token': shop.seller.csrfToken,
        'x-svc-mode': 'test',
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        name: 'Test Transfer',
        price: 7,
        deliveryMethods: ['deliveryInstructions'],
        deliveryInstructions: 'Thanks!',
      }),
    });
    expect(made.status, await made.clone().text()).toBe(201);
    const product = (await made.json()) as { id: string; livemode: boolean };
    expect(product.livemode).toBe(false);
    // The buyer (the seller's side, with the store's preview token) checks out, chooses the manual
    // transfer and sends the proof.
    const checkout = await fetch(`${server.url}/api/v1/checkout`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${await previewToken(shop.seller, shop.store.id)}`,
      },
      body: JSON.stringify({
        shopId: shop.store.id,
        cart: [{ productId: product.id, quantity: 1 }],
        email: `buyer-${randomBytes(4).toString('hex')}@example.test`,
      }),
    });
    expect(checkout.status, await checkout.clone().text()).toBe(200);
    const { url, orderId } = (await checkout.json()) as { url: string; orderId: string };
    const token = new URL(url).searchParams.get('token')!;
    const start = await fetch(`${server.url}/api/checkout/start`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ orderId, token, paymentMethod: 'manual' }),
    });
    expect(start.status, await start.clone().text()).toBe(200);
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('test receipt bytes')], { type: 'image/png' }), 'receipt.png');
    const sent = await fetch(`${server.url}/api/orders/${orderId}/payment-proof?token=${token}`, {
      method: 'POST',
      body: form,
    });
    expect(sent.status, await sent.clone().text()).toBe(201);

    const orderPage = storeUrl(server.url, shop.store.id, `/orders/${orderId}`);
    await signIn(shop.seller, orderPage);
    // Live (the default): the test order is not found.
    await page.getByRole('alert').filter({ hasText: 'Order not found.' }).waitFor();
    expect(await page.getByRole('heading', { level: 1, name: /^Order ORD-/ }).count()).toBe(0);
    await clickModeSwitch();
    await banner().waitFor();
    await page.getByRole('heading', { level: 1, name: /^Order ORD-/ }).waitFor();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Payment proof' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('receipt.png');
    expect(await readFile(await download.path(), 'utf8')).toBe('test receipt bytes');
    await expectAccessible(page, 'a test order in test mode');
  }, 120_000);
});
