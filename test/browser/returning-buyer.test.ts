/**
 * In a real browser, one context throughout, as a returning buyer keeps their browser's cache: the
 * storefront's pages are revalidated with If-None-Match and answered 304, and the page the browser
 * shows from its cache keeps the policy its 200 carried (a browser merges a 304's headers into the
 * page it keeps). So after going back to the store, reloading the product and the cart, every
 * page is styled, the cart's module prices the cart, and the buyer checks out, pays and gets the
 * keys; the buyer pages and the dashboard survive a reload too. pagePerTest fails the test on any
 * CSP report, which is what a 304 carrying `default-src 'none'` caused.
 */
import { randomBytes } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createShop, keyProduct, launchChromium, pagePerTest, startPageServer } from './support.js';

// Evaluated in the page; tsconfig.test.json has no DOM types.
declare const document: any;

let server: Awaited<ReturnType<typeof startPageServer>>;
let browser: Browser;
let context: BrowserContext;
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
  (opened) => ({ context, page } = opened),
);

/**
 * The status the server really sent for each page the browser loaded, by path (Playwright reports
 * the cached page's 200 for a revalidation; the DevTools protocol has the 304 on the wire).
 */
async function wireStatuses(target: Page): Promise<Array<{ path: string; status: number }>> {
  const seen: Array<{ path: string; status: number }> = [];
  const documents = new Map<string, string>();
  const cdp = await context.newCDPSession(target);
  cdp.on('Network.requestWillBeSent', (event: { requestId: string; type?: string; request: { url: string } }) => {
    if (event.type === 'Document') documents.set(event.requestId, new URL(event.request.url).pathname);
  });
  cdp.on('Network.responseReceivedExtraInfo', (event: { requestId: string; statusCode: number }) => {
    const path = documents.get(event.requestId);
    if (path) seen.push({ path, status: event.statusCode });
  });
  await cdp.send('Network.enable');
  return seen;
}

/** Every stylesheet the page links was loaded and applied (a refused one has no sheet). */
async function styled(target: Page): Promise<boolean> {
  return target.evaluate(() => {
    const links = Array.from(document.querySelectorAll('link[rel="stylesheet"]') as ArrayLike<any>);
    return links.length > 0 && links.every((link: any) => link.sheet !== null && link.sheet.cssRules.length > 0);
  });
}

describe('a returning buyer (same browser, pages revalidated)', () => {
  it('sees styled pages after 304s, the cart loads after a reload, and checks out', async () => {
    const shop = await createShop(server.url, 'Return Forge');
    const keys = ['BACK-1111-AAAA', 'BACK-2222-BBBB'];
    const product = await keyProduct(shop, keys, { name: 'Return Racer', price: 10 });
    const statuses = await wireStatuses(page);
    const store = `/s/${shop.store.subdomain}`;

    // The first visit: store, product, add two to the cart.
    await page.goto(`${server.url}${store}`);
    await page.getByRole('link', { name: 'Return Racer' }).click();
    await page.waitForURL(`${server.url}${store}/products/${product.slug}`);
    await page.getByLabel('Quantity').fill('2');
    await page.getByRole('button', { name: 'Add to cart' }).click();
    await page.waitForURL(`${server.url}${store}/cart`);
    await expect.poll(() => page.locator('#cart-total').textContent()).toBe('$20.00');

    // Back to the store and the product: the browser holds both, the server answers 304.
    await page.goto(`${server.url}${store}`);
    await page.getByRole('link', { name: 'Return Racer' }).waitFor();
    expect(await styled(page), 'the store page revisited is styled').toBe(true);
    await page.goto(`${server.url}${store}/products/${product.slug}`);
    await page.reload();
    await page.getByRole('button', { name: 'Add to cart' }).waitFor();
    expect(await styled(page), 'the product page reloaded is styled').toBe(true);

    // The cart revisited and reloaded: its module runs and prices the cart kept in the browser.
    await page.goto(`${server.url}${store}/cart`);
    await page.reload();
    await expect.poll(() => page.locator('#cart-total').textContent()).toBe('$20.00');
    expect(await styled(page), 'the cart page reloaded is styled').toBe(true);
    expect(await page.getByLabel('Quantity of Return Racer').inputValue()).toBe('2');
    const revalidated = statuses.filter((seen) => seen.status === 304).map((seen) => seen.path);
    expect(revalidated).toEqual(expect.arrayContaining([store, `${store}/products/${product.slug}`, `${store}/cart`]));

    // Checkout, reloaded once on the way (the buyer pages are never kept: a 200 each time).
    await page.getByRole('button', { name: 'Checkout' }).click();
    await page.waitForURL(new RegExp(`^${server.url}/checkout/[a-z0-9]+\\?token=`));
    await page.reload();
    await page.getByLabel('E-mail').fill(`buyer-${randomBytes(4).toString('hex')}@example.test`);
    expect(await styled(page), 'the checkout page reloaded is styled').toBe(true);
    await page.getByLabel('Test payment').check();
    await page.getByRole('button', { name: 'Pay $20.00' }).click();
    await page.waitForURL(new RegExp(`^${server.url}/pay/test/`));
    await page.getByRole('button', { name: 'Pay $20.00' }).click();
    await page.waitForURL(new RegExp(`^${server.url}/orders/`));
    await expect.poll(() => page.locator('code.key').count()).toBe(2);
    await page.reload();
    await expect.poll(async () => (await page.locator('code.key').allTextContents()).sort()).toEqual(keys);
    expect(await styled(page), 'the order page reloaded is styled').toBe(true);
    const buyerPages = statuses.filter((seen) => /^\/(checkout|pay|orders)\//.test(seen.path));
    expect(buyerPages.length).toBeGreaterThanOrEqual(4);
    expect(buyerPages.filter((seen) => seen.status === 304)).toEqual([]);
  });

  it("reloads the dashboard from the browser's cache (304) and it still runs", async () => {
    const shop = await createShop(server.url, 'Return Desk');
    const statuses = await wireStatuses(page);
    await page.goto(`${server.url}/dashboard/sign-in`);
    await page.getByLabel('Email').fill(shop.seller.email);
    await page.getByLabel('Password').fill(shop.seller.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => !url.pathname.startsWith('/dashboard/sign-in'));
    await page.goto(`${server.url}/dashboard/stores/${shop.store.id}/orders`);
    await page.getByRole('heading', { level: 1, name: 'Orders' }).waitFor();
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Orders' }).waitFor();
    expect(await styled(page)).toBe(true);
    expect(statuses.some((seen) => seen.path.startsWith('/dashboard/') && seen.status === 304)).toBe(true);
  });
});
