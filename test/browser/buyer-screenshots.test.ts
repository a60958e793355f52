/**
 * The buyer's pages as a person sees them, saved for review in docs/screenshots/ (listed in
 * docs/screenshots/README-buyer.md): store, product, cart, checkout, the test pay page, a manual
 * payment's instructions, the order page waiting for it, the delivery page and the customer area,
 * at 1280 and 390 px, light and (where it matters) dark. Runs only when asked, with the name of the
 * set: `BUYER_SCREENSHOTS=after npx vitest run test/browser/buyer-screenshots.test.ts`. The PNGs are
 * the viewport only, re-encoded with a palette by sharp so they stay small.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboard } from '../support/seller.js';
import { REPO_ROOT } from '../support/server.js';
import { createProduct, createShop, keyProduct, launchChromium, startPageServer } from './support.js';

const SET = process.env.BUYER_SCREENSHOTS;
const DIR = path.join(REPO_ROOT, 'docs/screenshots');

let server: Awaited<ReturnType<typeof startPageServer>>;
let browser: Browser;

beforeAll(async () => {
  if (!SET) return;
  [server, browser] = await Promise.all([startPageServer(), launchChromium()]);
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

type Shot = { width: 1280 | 390; scheme: 'light' | 'dark' };
const LIGHT: Shot[] = [
  { width: 1280, scheme: 'light' },
  { width: 390, scheme: 'light' },
];
const BOTH: Shot[] = [...LIGHT, { width: 1280, scheme: 'dark' }, { width: 390, scheme: 'dark' }];

async function shoot(page: Page, name: string, shots: Shot[], ready: () => Promise<unknown>): Promise<void> {
  for (const { width, scheme } of shots) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 800 });
    await page.emulateMedia({ colorScheme: scheme });
    await ready();
    const png = await page.screenshot();
    const prefix = ['store', 'product', 'cart'].includes(name) ? 'storefront' : 'buyer';
    const file = path.join(DIR, `${prefix}-${name}-${SET}-${width}${scheme === 'dark' ? '-dark' : ''}.png`);
    await sharp(png).png({ palette: true, quality: 90, compressionLevel: 9 }).toFile(file);
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1280, height: 800 });
}

async function uploadLogo(shop: Awaited<ReturnType<typeof createShop>>): Promise<void> {
  const logo = await sharp({
    create: { width: 160, height: 160, channels: 4, background: { r: 15, g: 118, b: 110, alpha: 1 } },
  })
    .composite([
      {
        input: Buffer.from(
          '<svg xmlns="http://www.w3.org/2000/svg" width="160" height="160"><circle cx="80" cy="80" r="44" fill="#fde68a"/></svg>',
        ),
      },
    ])
    .png()
    .toBuffer();
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(logo)], { type: 'image/png' }), 'logo.png');
  const response = await fetch(`${server.url}/api/dashboard/stores/${shop.store.id}/logo`, {
    method: 'POST',
    headers: { cookie: shop.seller.cookie, 'x-csrf-token': shop.seller.csrfToken },
    body: form,
  });
  expect(response.status, await response.clone().text()).toBeLessThan(300);
}

async function uploadImage(shop: Awaited<ReturnType<typeof createShop>>, productId: string): Promise<void> {
  const picture = await sharp({
    create: { width: 1200, height: 800, channels: 3, background: { r: 40, g: 60, b: 140 } },
  })
    .composite([
      {
        input: Buffer.from(
          '<svg xmlns="http://www.w3.org/2000/svg" width="1200" height="800"><path d="M0 620 L300 420 L520 560 L820 300 L1200 640 L1200 800 L0 800Z" fill="#f472b6"/><circle cx="900" cy="180" r="90" fill="#fde68a"/></svg>',
        ),
      },
    ])
    .png()
    .toBuffer();
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(picture)], { type: 'image/png' }), 'cover.png');
  const response = await fetch(`${server.url}/api/dashboard/stores/${shop.store.id}/products/${productId}/images`, {
    method: 'POST',
    headers: { cookie: shop.seller.cookie, 'x-csrf-token': shop.seller.csrfToken },
    body: form,
  });
  expect(response.status, await response.clone().text()).toBe(201);
}

describe.skipIf(!SET)('buyer pages, for the eye', () => {
  it('saves the store, product, cart, checkout, pay, manual, order, delivery and account pages', async () => {
    const shop = await createShop(server.url, 'Pixel Forge');
    const look = await dashboard(shop.seller, 'PATCH', `/api/dashboard/stores/${shop.store.id}`, {
      description: 'Games, art packs and soundtracks by an indie studio of three.',
      accentColor: '#0f766e',
      settings: { paymentMethods: ['test', 'manual'], manualPaymentInstructions: '' },
    });
    expect(look.status, await look.clone().text()).toBe(200);
    await uploadLogo(shop);
    const racer = await keyProduct(shop, ['NOVA-1111-AAAA', 'NOVA-2222-BBBB', 'NOVA-3333-CCCC'], {
      name: 'Nova Racer (Steam key)',
      price: 56.4,
      description:
        'An arcade racer across **twelve neon cities**.\n\n- Split-screen for four\n- A soundtrack by [Lumen](https://example.com/lumen)\n\n**Lifetime updates.**',
    });
    await uploadImage(shop, racer.id);
    await createProduct(shop.seller, shop.store.id, {
      name: 'Pixel Art Course',
      price: 49,
      description: 'Eight hours of video lessons.',
      deliveryMethods: ['deliveryInstructions'],
      deliveryInstructions: 'Watch the lessons at https://example.com/course with the code PIXEL.',
    });
    await createProduct(shop.seller, shop.store.id, {
      name: 'Starship Soundtrack',
      price: 9.5,
      description: 'The game’s music in FLAC.',
      deliveryMethods: ['manualDelivery'],
    });

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    const base = `${server.url}/s/${shop.store.subdomain}`;

    await page.goto(base);
    await shoot(page, 'store', BOTH, () => page.getByRole('heading', { level: 1 }).waitFor());
    await page.goto(`${base}/products/${racer.slug}`);
    await shoot(page, 'product', BOTH, () => page.getByRole('heading', { level: 1 }).waitFor());

    await page.getByRole('button', { name: 'Add to cart' }).click();
    await page.waitForURL(`${base}/cart`);
    await expect.poll(() => page.locator('#cart-total').textContent()).toBe('$56.40');
    await shoot(page, 'cart', BOTH, () => page.locator('#cart-total').waitFor());

    await page.getByRole('button', { name: 'Checkout' }).click();
    await page.waitForURL(/\/checkout\//);
    await page.getByLabel('E-mail').waitFor();
    await shoot(page, 'checkout', BOTH, () => page.getByLabel('E-mail').waitFor());
    const checkoutUrl = page.url();
    await page.getByLabel('E-mail').fill(`buyer-${randomBytes(4).toString('hex')}@example.test`);
    await page.getByLabel('Test payment').check();
    await page.getByRole('button', { name: /^Pay / }).click();
    await page.waitForURL(/\/pay\/test\//);
    await shoot(page, 'pay', BOTH, () => page.getByRole('button', { name: /^Pay / }).waitFor());
    await page.getByRole('button', { name: /^Pay / }).click();
    await page.waitForURL(/\/orders\//);
    await page.locator('code.key').first().waitFor();
    await shoot(page, 'delivery', BOTH, () => page.locator('code.key').first().waitFor());
    expect(checkoutUrl).toContain('token=');

    // A manual payment with no instructions from the seller: the instructions, then the order page waiting.
    await page.goto(`${base}/products/pixel-art-course`);
    await page.getByRole('button', { name: 'Add to cart' }).click();
    await page.waitForURL(`${base}/cart`);
    await page.getByRole('button', { name: 'Checkout' }).click();
    await page.waitForURL(/\/checkout\//);
    await page.getByLabel('E-mail').fill(`buyer-${randomBytes(4).toString('hex')}@example.test`);
    await page.getByLabel('Manual payment').check();
    await page.getByRole('button', { name: /^Pay / }).click();
    await page.getByRole('heading', { name: 'How to pay' }).waitFor();
    await shoot(page, 'manual', LIGHT, () => page.getByRole('heading', { name: 'How to pay' }).waitFor());
    await page.getByRole('link', { name: /go to your order/ }).click();
    await page.waitForURL(/\/orders\//);
    await page.getByText('Waiting for your payment').waitFor();
    await shoot(page, 'order', BOTH, () => page.getByText('Waiting for your payment').waitFor());

    await page.goto(`${server.url}/account/${shop.store.subdomain}`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await shoot(page, 'account', LIGHT, () => page.getByRole('heading', { name: 'Sign in' }).waitFor());
    await context.close();
  }, 120_000);
});
