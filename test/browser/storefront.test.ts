/**
 * In a real browser, on the hosted storefront: a buyer opens /s/<subdomain>, opens a product,
 * adds two to the cart, applies a coupon, checks out, pays with the test gateway and lands on
 * the delivery page with their keys. No CSP violation and nothing from another origin on the
 * way (pagePerTest checks); screenshots at 360 and 1280 px go to test/.screenshots/. And the same
 * in test mode (`?mode=test`), opened as the dashboard's View store link opens it (with the store's
 * preview token): the banner, the mode kept from store to cart, a test cart of its own; a stranger's
 * browser at the same address gets the live store.
 */
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importKeys } from '../support/catalog.js';
import { previewToken } from '../support/preview.js';
import { dashboard } from '../support/seller.js';
import {
  createProduct,
  createShop,
  keyProduct,
  launchChromium,
  lowContrastText,
  pagePerTest,
  screenshots,
  startPageServer,
  unlabelledControls,
  watchPage,
} from './support.js';

// Evaluated in the page; tsconfig.test.json has no DOM types.
declare const localStorage: any;

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

describe('a buyer on the hosted storefront', () => {
  it('opens the store, a product, adds two to the cart, applies a coupon, pays and gets the keys', async () => {
    const shop = await createShop(server.url);
    const keys = ['NOVA-1111-AAAA', 'NOVA-2222-BBBB'];
    const product = await keyProduct(shop, keys, { name: 'Nova Racer (Steam key)', price: 10 });
    const coupon = await dashboard(shop.seller, 'POST', `/api/dashboard/stores/${shop.store.id}/coupons`, {
      code: 'TENOFF',
      discountType: 'percent',
      discountValue: 10,
    });
    expect(coupon.status, await coupon.clone().text()).toBe(201);
    const picture = await sharp({
      create: { width: 1200, height: 800, channels: 3, background: { r: 200, g: 60, b: 40 } },
    })
      .png()
      .toBuffer();
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(picture)], { type: 'image/png' }), 'nova.png');
    const uploaded = await fetch(`${server.url}/api/dashboard/stores/${shop.store.id}/products/${product.id}/images`, {
      method: 'POST',
      headers: { cookie: shop.seller.cookie, 'x-csrf-token': shop.seller.csrfToken },
      body: form,
    });
    expect(uploaded.status, await uploaded.clone().text()).toBe(201);

    await page.goto(`${server.url}/s/${shop.store.subdomain}`);
    await page.getByRole('heading', { level: 1, name: 'Pixel Forge' }).waitFor();
    // The card's picture: a WebP rendition the browser chose from srcset, loaded.
    const card = page.getByRole('img', { name: 'Nova Racer (Steam key)' });
    await expect.poll(() => card.evaluate((img: any) => img.complete && img.naturalWidth)).toBeGreaterThan(0);
    expect(await card.evaluate((img: any) => img.currentSrc)).toMatch(/\/images\/\w+\/\w+\/(480|960)\.webp$/);
    await screenshots(page, 'storefront-store');
    await page.getByRole('link', { name: 'Nova Racer (Steam key)' }).click();

    await page.waitForURL(`${server.url}/s/${shop.store.subdomain}/products/${product.slug}`);
    await page.getByRole('heading', { level: 1, name: 'Nova Racer (Steam key)' }).waitFor();
    expect(await page.locator('.price').textContent()).toBe('$10.00');
    const main = page.getByRole('img', { name: 'Nova Racer (Steam key)' });
    await expect.poll(() => main.evaluate((img: any) => img.complete && img.naturalWidth)).toBeGreaterThan(0);
    expect(await unlabelledControls(page)).toEqual([]);
    await screenshots(page, 'storefront-product');
    await page.getByLabel('Quantity').fill('2');
    await page.getByRole('button', { name: 'Add to cart' }).click();

    // The cart page takes the product off its address into localStorage.
    await page.waitForURL(`${server.url}/s/${shop.store.subdomain}/cart`);
    const total = page.locator('#cart-total');
    await expect.poll(() => total.textContent()).toBe('$20.00');
    expect(await page.getByLabel('Quantity of Nova Racer (Steam key)').inputValue()).toBe('2');
    expect(await page.evaluate((key) => localStorage.getItem(key), `svc-cart:${shop.store.id}`)).toBe(
      JSON.stringify([{ productId: product.id, quantity: 2 }]),
    );

    await page.getByLabel('Coupon code').fill('tenoff');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('TENOFF takes $2.00 off.').waitFor();
    expect(await total.textContent()).toBe('$18.00');
    // Another quantity: kept, priced again, and the coupon applied again to the new cart.
    const quantity = page.getByLabel('Quantity of Nova Racer (Steam key)');
    await quantity.fill('1');
    await quantity.press('Tab');
    await page.getByText('TENOFF takes $1.00 off.').waitFor();
    expect(await total.textContent()).toBe('$9.00');
    expect(await page.evaluate((key) => localStorage.getItem(key), `svc-cart:${shop.store.id}`)).toBe(
      JSON.stringify([{ productId: product.id, quantity: 1 }]),
    );
    await quantity.fill('2');
    await quantity.press('Tab');
    await page.getByText('TENOFF takes $2.00 off.').waitFor();
    expect(await total.textContent()).toBe('$18.00');
    expect(await unlabelledControls(page)).toEqual([]);
    await screenshots(page, 'storefront-cart');

    await page.getByRole('button', { name: 'Checkout' }).click();
    await page.waitForURL(new RegExp(`^${server.url}/checkout/[a-z0-9]+\\?token=`));
    await page.getByLabel('E-mail').fill(`buyer-${randomBytes(4).toString('hex')}@example.test`);
    await page.getByLabel('Test payment').check();
    await page.getByRole('button', { name: 'Pay $18.00' }).click();
    await page.waitForURL(new RegExp(`^${server.url}/pay/test/`));
    await page.getByRole('button', { name: 'Pay $18.00' }).click();

    await page.waitForURL(new RegExp(`^${server.url}/orders/`));
    const delivered = page.locator('code.key');
    await expect.poll(() => delivered.count()).toBe(2);
    expect((await delivered.allTextContents()).sort()).toEqual(keys);
    expect(watch.foreign()).toEqual([]);

    // Every key sold: the storefront now says Sold out, with no button.
    await page.goto(`${server.url}/s/${shop.store.subdomain}`);
    await page.getByText('Sold out').waitFor();
    expect(await page.getByRole('button', { name: /Add to cart/ }).count()).toBe(0);
  });
});

describe('a buyer on the hosted storefront in test mode', () => {
  it('sees the Test mode banner, keeps the mode from store to cart, and pays a test order with the test gateway', async () => {
    const shop = await createShop(server.url, 'Mode Forge');
    const keys = ['TEST-1111-AAAA'];
    // The seller's test product, made with the dashboard's Test mode on.
    const product = await createProduct(
      shop.seller,
      shop.store.id,
      { name: 'Trial Racer', price: 4, deliveryMethods: ['licenseKeys'] },
      'test',
    );
    await importKeys(shop.seller, shop.store.id, product.id, keys, 'test');
    await keyProduct(shop, ['LIVE-1111-AAAA'], { name: 'Live Racer', price: 6 });

    // A stranger's browser at the test address: the live store, no banner, no test product.
    await page.goto(`${server.url}/s/${shop.store.subdomain}?mode=test`);
    await page.getByRole('link', { name: 'Live Racer' }).waitFor();
    expect(await page.getByRole('link', { name: 'Trial Racer' }).count()).toBe(0);
    expect(await page.getByRole('complementary', { name: 'Test mode' }).count()).toBe(0);

    // The dashboard's View store link: the preview token once, then the svc_preview cookie.
    const token = await previewToken(shop.seller, shop.store.id);
    await page.goto(`${server.url}/s/${shop.store.subdomain}?mode=test&preview=${encodeURIComponent(token)}`);
    expect(page.url()).toBe(`${server.url}/s/${shop.store.subdomain}?mode=test`);
    await page.getByRole('complementary', { name: 'Test mode' }).waitFor();
    expect(await page.getByRole('link', { name: 'Live Racer' }).count()).toBe(0);
    expect(await lowContrastText(page)).toEqual([]);
    await page.getByRole('link', { name: 'Trial Racer' }).click();
    await page.waitForURL(`${server.url}/s/${shop.store.subdomain}/products/${product.slug}?mode=test`);
    await page.getByRole('complementary', { name: 'Test mode' }).waitFor();
    await page.getByRole('button', { name: 'Add to cart' }).click();

    await page.waitForURL(`${server.url}/s/${shop.store.subdomain}/cart?mode=test`);
    await page.getByRole('complementary', { name: 'Test mode' }).waitFor();
    await expect.poll(() => page.locator('#cart-total').textContent()).toBe('$4.00');
    expect(await page.evaluate((key) => localStorage.getItem(key), `svc-cart:${shop.store.id}:test`)).toBe(
      JSON.stringify([{ productId: product.id, quantity: 1 }]),
    );
    expect(await page.evaluate((key) => localStorage.getItem(key), `svc-cart:${shop.store.id}`)).toBeNull();
    expect(await page.getByRole('link', { name: 'Trial Racer' }).getAttribute('href')).toBe(
      `/s/${shop.store.subdomain}/products/${product.id}?mode=test`,
    );

    await page.getByRole('button', { name: 'Checkout' }).click();
    await page.waitForURL(new RegExp(`^${server.url}/checkout/[a-z0-9]+\\?token=`));
    await page.getByLabel('E-mail').fill(`buyer-${randomBytes(4).toString('hex')}@example.test`);
    await page.getByLabel('Test payment').check();
    await page.getByRole('button', { name: 'Pay $4.00' }).click();
    await page.waitForURL(new RegExp(`^${server.url}/pay/test/`));
    await page.getByRole('button', { name: 'Pay $4.00' }).click();
    await page.waitForURL(new RegExp(`^${server.url}/orders/`));
    await expect.poll(() => page.locator('code.key').allTextContents()).toEqual(keys);
    expect(watch.foreign()).toEqual([]);
  });
});
