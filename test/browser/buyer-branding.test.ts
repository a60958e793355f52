/**
 * In a real browser, the store's brand on the buyer's pages: every page from the store to the
 * delivery (store, product, cart, checkout, pay, order, customer area) shows the store's logo and
 * its name linking back; the store's accent colours the buttons unless it is too light for AA in
 * the light scheme (then the token accent does); the product page is two columns at 1280 px and
 * one at 390 px with no sideways scrolling; URLs in delivery instructions are links; axe-core finds
 * nothing serious on any page, light or dark.
 */
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboard } from '../support/seller.js';
import { expectAccessible } from './dashboard-support.js';
import {
  createShop,
  keyProduct,
  launchChromium,
  pagePerTest,
  startPageServer,
  watchPage,
  type Shop,
} from './support.js';

// Evaluated in the page; tsconfig.test.json has no DOM types.
declare const document: any;
declare function getComputedStyle(element: unknown): any;

let server: Awaited<ReturnType<typeof startPageServer>>;
let browser: Browser;
let page: Page;
let watch: ReturnType<typeof watchPage>;

beforeAll(async () => {
  [server, browser] = await Promise.all([startPageServer(), launchChromium()]);
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});
pagePerTest(
  () => ({ browser, serviceUrl: server.url }),
  (opened) => ({ page, watch } = opened),
);

async function brandedShop(name: string, accentColor: string): Promise<Shop> {
  const shop = await createShop(server.url, name);
  const look = await dashboard(shop.seller, 'PATCH', `/api/dashboard/stores/${shop.store.id}`, { accentColor });
  expect(look.status, await look.clone().text()).toBe(200);
  const logo = await sharp({ create: { width: 96, height: 96, channels: 3, background: { r: 15, g: 118, b: 110 } } })
    .png()
    .toBuffer();
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(logo)], { type: 'image/png' }), 'logo.png');
  const uploaded = await fetch(`${server.url}/api/dashboard/stores/${shop.store.id}/logo`, {
    method: 'POST',
    headers: { cookie: shop.seller.cookie, 'x-csrf-token': shop.seller.csrfToken },
    body: form,
  });
  expect(uploaded.status, await uploaded.clone().text()).toBeLessThan(300);
  return shop;
}

/** The page's header names the store, links it to `href`, and shows its logo, loaded. */
async function expectBrand(name: string, href: string): Promise<void> {
  const link = page.getByRole('banner').getByRole('link', { name, exact: true });
  await link.waitFor();
  expect(await link.getAttribute('href')).toBe(href);
  const logo = link.locator('img.store-logo');
  await expect.poll(() => logo.evaluate((img: any) => img.complete && img.naturalWidth)).toBeGreaterThan(0);
}

const buttonColour = () =>
  page
    .locator('button.primary')
    .first()
    .evaluate((button: any) => getComputedStyle(button).backgroundColor as string);

describe('the store’s brand on the buyer’s pages', () => {
  it('shows the logo and the name linking back on every page from the store to the delivery, axe-clean light and dark', async () => {
    const shop = await brandedShop('Brand Forge', '#0f766e');
    const home = `/s/${shop.store.subdomain}`;
    const product = await keyProduct(shop, ['BRAND-1111-AAAA'], {
      name: 'Nova Racer',
      price: 12,
      description: 'An arcade racer across **twelve neon cities**.',
      deliveryMethods: ['licenseKeys', 'deliveryInstructions'],
      deliveryInstructions: 'Redeem it at https://store.example/redeem. Not javascript:alert(1) though.',
    });

    await page.goto(`${server.url}${home}`);
    await expectBrand('Brand Forge', home);
    expect(await buttonColour()).toBe('rgb(15, 118, 110)');
    // Teal is too dark for AA on the dark scheme's backgrounds: there the token accent (#8ab4ff) is used.
    await page.emulateMedia({ colorScheme: 'dark' });
    expect(await buttonColour()).toBe('rgb(138, 180, 255)');
    await page.emulateMedia({ colorScheme: 'light' });
    await expectAccessible(page, 'store page');

    await page.getByRole('link', { name: 'Nova Racer' }).click();
    await page.getByRole('heading', { level: 1, name: 'Nova Racer' }).waitFor();
    await expectBrand('Brand Forge', home);
    expect(await page.locator('.description strong').textContent()).toBe('twelve neon cities');
    await expectAccessible(page, 'product page');

    await page.getByRole('button', { name: 'Add to cart' }).click();
    await page.waitForURL(`${server.url}${home}/cart`);
    await expect.poll(() => page.locator('#cart-total').textContent()).toBe('$12.00');
    // No coupon, no Discount row (it was shown as "−$0.00": a display rule beat the hidden attribute).
    expect(await page.locator('dl.totals dt', { hasText: 'Discount' }).isVisible()).toBe(false);
    await expectBrand('Brand Forge', home);
    await expectAccessible(page, 'cart page');

    await page.getByRole('button', { name: 'Checkout' }).click();
    await page.waitForURL(/\/checkout\//);
    await page.getByLabel('E-mail').waitFor();
    await expectBrand('Brand Forge', home);
    expect(await buttonColour()).toBe('rgb(15, 118, 110)');
    await expectAccessible(page, 'checkout page');
    await page.getByLabel('E-mail').fill(`brand-${randomBytes(4).toString('hex')}@example.test`);
    await page.getByLabel('Test payment').check();
    await page.getByRole('button', { name: 'Pay $12.00' }).click();

    await page.waitForURL(/\/pay\/test\//);
    await expectBrand('Brand Forge', home);
    await expectAccessible(page, 'pay page');
    await page.getByRole('button', { name: 'Pay $12.00' }).click();

    await page.waitForURL(/\/orders\//);
    await page.locator('code.key').waitFor();
    await expectBrand('Brand Forge', home);
    // The instructions' address is a link, with the same rules as a description's; nothing else is.
    const redeem = page.getByRole('link', { name: 'https://store.example/redeem' });
    expect(await redeem.getAttribute('href')).toBe('https://store.example/redeem');
    expect(await redeem.getAttribute('rel')).toBe('nofollow noopener');
    expect(await page.locator('a[href^="javascript"]').count()).toBe(0);
    await expectAccessible(page, 'order page');

    await page.goto(`${server.url}/account/${shop.store.subdomain}`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await expectBrand('Brand Forge', home);
    await expectAccessible(page, 'customer area');
    expect(product.id).toBeTruthy();
  });

  it('falls back to the token accent where the store’s is too light for AA (light scheme), and uses it where it fits (dark)', async () => {
    const shop = await brandedShop('Lemon Forge', '#fde047');
    await keyProduct(shop, ['LEMON-1111-AAAA'], { name: 'Lemon Racer', price: 3 });
    await page.goto(`${server.url}/s/${shop.store.subdomain}`);
    await page.getByRole('heading', { level: 1, name: 'Lemon Forge' }).waitFor();
    // Light: #fde047 on white is 1.3:1, so the token accent (#1d4ed8) colours the button.
    expect(await buttonColour()).toBe('rgb(29, 78, 216)');
    await page.emulateMedia({ colorScheme: 'dark' });
    // Dark: the yellow is AA on the dark backgrounds and under the dark button text: it is used.
    expect(await buttonColour()).toBe('rgb(253, 224, 71)');
    await expectAccessible(page, 'store page with a light accent');
  });

  it('lays the product page out in two columns at 1280 px and one at 390 px, with no sideways scrolling', async () => {
    const shop = await brandedShop('Layout Forge', '#7c3aed');
    const product = await keyProduct(shop, ['LAYOUT-1111-AAAA'], {
      name: 'Layout Racer',
      price: 8,
      description: 'A long description. '.repeat(40),
    });
    await page.goto(`${server.url}/s/${shop.store.subdomain}/products/${product.slug}`);
    await page.getByRole('heading', { level: 1, name: 'Layout Racer' }).waitFor();
    const boxes = async () => {
      const pictures = (await page.locator('.product-images').boundingBox())!;
      const buy = (await page.locator('.buy-box').boundingBox())!;
      const overflow = await page.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      );
      return { pictures, buy, overflow };
    };
    // A product without images shows a placeholder of the same frame: no hole.
    expect(await page.locator('.product-images .placeholder').count()).toBe(1);

    const wide = await boxes();
    expect(wide.buy.x).toBeGreaterThanOrEqual(wide.pictures.x + wide.pictures.width);
    expect(Math.abs(wide.buy.y - wide.pictures.y)).toBeLessThan(2);
    expect(wide.overflow).toBeLessThanOrEqual(0);

    await page.setViewportSize({ width: 390, height: 844 });
    const narrow = await boxes();
    expect(narrow.buy.y).toBeGreaterThanOrEqual(narrow.pictures.y + narrow.pictures.height);
    expect(Math.abs(narrow.buy.x - narrow.pictures.x)).toBeLessThan(2);
    expect(narrow.overflow).toBeLessThanOrEqual(0);
    expect(watch.foreign()).toEqual([]);
  });
});
