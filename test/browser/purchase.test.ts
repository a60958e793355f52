/**
 * In a real browser: a buyer goes from a theme's cart (or an /embed.js button, or a link from
 * orders/create) through the checkout page and a payment to the goods on the order page, for
 * a key product, a file product and a manual product; wrong input shows next to its field. The
 * test pay page offers its four test cards by name (axe-clean) and pays with the one chosen.
 * Every page checked for requests to other origins and CSP violations; screenshots at 360 and
 * 1280 px go to test/.screenshots/.
 */
import { randomBytes } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createProduct,
  createShop,
  fileProduct,
  keyProduct,
  launchChromium,
  screenshots,
  startPageServer,
  startTheme,
  unlabelledControls,
  pagePerTest,
  watchPage,
} from './support.js';
import { dashboard } from '../support/seller.js';
import { expectAccessible } from './dashboard-support.js';

let server: Awaited<ReturnType<typeof startPageServer>>;
let theme: Awaited<ReturnType<typeof startTheme>>;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let watch: ReturnType<typeof watchPage>;

// Evaluated in the page; tsconfig.test.json has no DOM types.
declare const document: any;
declare const navigator: any;
declare const window: any;

const buyerEmail = () => `buyer-${randomBytes(4).toString('hex')}@example.test`;

beforeAll(async () => {
  [server, browser] = await Promise.all([startPageServer(), launchChromium()]);
  theme = await startTheme(server.url);
});
afterAll(async () => {
  await browser?.close();
  await theme?.stop();
  await server?.stop();
});
pagePerTest(
  () => ({ browser, serviceUrl: server.url }),
  (opened) => ({ context, page, watch } = opened),
);

/** The main frame's navigations from now on (a reload would be one). */
function countNavigations(target: Page): () => number {
  let count = 0;
  target.on('framenavigated', (frame) => {
    if (frame === target.mainFrame()) count += 1;
  });
  return () => count;
}

describe('a key product, from the theme cart', () => {
  it('checks out, pays on the test pay page and shows the key with a copy button', async () => {
    const shop = await createShop(server.url);
    const product = await keyProduct(shop, ['STAR-7H2K-Q9XW-11']);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });

    await page.goto(`${theme.url}/cart?store=${shop.store.subdomain}&product=${product.id}`);
    await page.getByText('Subtotal: 19.99 USD').waitFor();
    await page.getByRole('button', { name: 'Checkout' }).click();
    await page.waitForURL(new RegExp(`^${server.url}/checkout/[a-z0-9]+\\?token=`));

    await page.getByRole('heading', { name: /^Order ORD-\d+ at Pixel Forge$/ }).waitFor();
    expect(await page.locator('#order-total').textContent()).toBe('$19.99');
    expect(await unlabelledControls(page)).toEqual([]);
    await page.getByLabel('E-mail').fill(buyerEmail());
    await screenshots(page, 'checkout');

    await page.getByLabel('Test payment').check();
    await page.getByRole('button', { name: 'Pay $19.99' }).click();
    await page.waitForURL(new RegExp(`^${server.url}/pay/test/`));
    await page.getByText('no money moves').waitFor();
    // The four test cards, by their accessible names, in a group named Test card; Succeeds checked.
    const cards = page.getByRole('group', { name: 'Test card' });
    const names = ['Succeeds', 'Declines', 'Declines renewals', 'Requires authentication'];
    for (const name of names) await cards.getByRole('radio', { name, exact: true }).waitFor();
    expect(await cards.getByRole('radio').count()).toBe(4);
    expect(await Promise.all(names.map((name) => cards.getByRole('radio', { name, exact: true }).isChecked()))).toEqual(
      [true, false, false, false],
    );
    expect(await unlabelledControls(page)).toEqual([]);
    await expectAccessible(page, 'test pay page');
    await screenshots(page, 'test-pay');
    await cards.getByRole('radio', { name: 'Declines renewals', exact: true }).check();
    await page.getByRole('button', { name: 'Pay $19.99' }).click();

    await page.waitForURL(new RegExp(`^${server.url}/orders/`));
    const key = page.locator('code.key');
    await key.waitFor();
    expect(await key.textContent()).toBe('STAR-7H2K-Q9XW-11');
    expect(await page.getByRole('status').first().textContent()).toBe('Paid and delivered.');
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByText('Copied.').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe('STAR-7H2K-Q9XW-11');
    await screenshots(page, 'delivery-key');
    expect(await page.getByRole('link', { name: 'All your orders at Pixel Forge' }).getAttribute('href')).toBe(
      `/account/${shop.store.subdomain}`,
    );

    // Coming back later with the same link shows the goods again, not the checkout.
    await page.goto(page.url().replace('/orders/', '/checkout/'));
    await page.waitForURL(new RegExp(`^${server.url}/orders/`));
    await key.waitFor();
    expect(watch.ours().some((r) => r.url.includes('/assets/app.css'))).toBe(true);
  });
});

describe('a file product, from an /embed.js button on a theme page', () => {
  it('opens the checkout in an overlay, pays, offers the download and closes back to the button', async () => {
    const shop = await createShop(server.url);
    const bytes = randomBytes(2048);
    const product = await fileProduct(shop, { name: 'field-guide.pdf', bytes });

    await page.goto(`${theme.url}/embed?store=${shop.store.id}&product=${product.id}`);
    const buy = page.getByRole('button', { name: 'Buy now' });
    await page.waitForFunction(() => 'SvcEmbed' in window);
    await buy.click();
    const dialog = page.getByRole('dialog', { name: 'Checkout' });
    await dialog.waitFor();
    const frame = page.frameLocator('iframe[title="Checkout"]');
    await frame.getByLabel('E-mail').fill(buyerEmail());
    await screenshots(page, 'embed-overlay');

    await frame.getByLabel('Test payment').check();
    await frame.getByRole('button', { name: 'Pay $7.50' }).click();
    await frame.getByRole('button', { name: 'Pay $7.50' }).click();
    const link = frame.getByRole('link', { name: 'field-guide.pdf' });
    await link.waitFor();
    await frame.getByText('Open the PDF with any reader.').waitFor();
    const href = await link.getAttribute('href');
    expect(href).toMatch(new RegExp(`^${server.url}/api/orders/[a-z0-9]+/files/`));
    const download = await fetch(href!);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer())).toEqual(bytes);
    await screenshots(page, 'embed-overlay-delivery');
    // The customer area cannot be framed: from the overlay it opens as its own tab.
    expect(await frame.getByRole('link', { name: 'All your orders at Pixel Forge' }).getAttribute('target')).toBe(
      '_blank',
    );

    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expect(await buy.evaluate((button: any) => button === document.activeElement)).toBe(true);
  });
});

describe('a manual product, from a link of orders/create', () => {
  it('shows the instructions, takes the proof, and follows payment and delivery without a reload', async () => {
    const shop = await createShop(server.url);
    const product = await createProduct(shop.seller, shop.store.id, {
      name: 'Logo design',
      price: 120,
      deliveryMethods: ['manualDelivery'],
    });
    const created = await fetch(`${server.url}/api/orders/create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.7' },
      body: JSON.stringify({
        storeId: shop.store.id,
        cart: [{ productId: product.id, quantity: 1 }],
        email: buyerEmail(),
      }),
    });
    expect(created.status).toBe(201);
    const { order, checkoutToken } = await created.json();

    await page.goto(`${server.url}/checkout/${order.id}?token=${encodeURIComponent(checkoutToken)}`);
    await page.getByLabel('Manual payment').check();
    await page.getByRole('button', { name: 'Pay $120.00' }).click();
    await page.getByText('Transfer to IBAN DE00 1234 5678 9000.', { exact: false }).waitFor();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('instructions-heading');
    await screenshots(page, 'checkout-manual');
    await page
      .getByLabel(/^Proof of payment/)
      .setInputFiles({ name: 'transfer.png', mimeType: 'image/png', buffer: randomBytes(512) });
    await page.getByRole('button', { name: 'Send proof' }).click();

    await page.waitForURL(new RegExp(`^${server.url}/orders/`));
    await page.getByText('Waiting for your payment.', { exact: false }).waitFor();
    await page.getByText('the seller has your proof of payment', { exact: false }).waitFor();
    expect(await page.getByRole('button', { name: 'Send proof' }).count()).toBe(0);
    await screenshots(page, 'delivery-waiting');
    const navigations = countNavigations(page);

    const paid = await dashboard(
      shop.seller,
      'POST',
      `/api/dashboard/stores/${shop.store.id}/orders/${order.id}/mark-paid`,
      {},
    );
    expect(paid.status, await paid.clone().text()).toBe(200);
    await page.getByText('The seller delivers this by hand.', { exact: false }).waitFor({ timeout: 15_000 });
    await screenshots(page, 'delivery-manual-pending');

    const delivered = await dashboard(
      shop.seller,
      'POST',
      `/api/dashboard/stores/${shop.store.id}/orders/${order.id}/mark-delivered`,
      { content: 'Your logo files: see the shared folder LOGO-4471.' },
    );
    expect(delivered.status, await delivered.clone().text()).toBe(200);
    await page.getByText('Your logo files: see the shared folder LOGO-4471.').waitFor({ timeout: 15_000 });
    expect(navigations()).toBe(0);
    await screenshots(page, 'delivery-manual-done');
  });
});

describe('a manual payment’s proof sent later', () => {
  it('takes the proof on the order page while the payment is awaited', async () => {
    const shop = await createShop(server.url);
    const product = await createProduct(shop.seller, shop.store.id, {
      name: 'Icon set',
      price: 30,
      deliveryMethods: ['manualDelivery'],
    });
    const created = await fetch(`${server.url}/api/v1/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.8' },
      body: JSON.stringify({
        shopId: shop.store.id,
        cart: [{ productId: product.id, quantity: 1 }],
        email: buyerEmail(),
      }),
    });
    const { url, orderId } = await created.json();
    const token = new URL(url).searchParams.get('token')!;
    const started = await fetch(`${server.url}/api/checkout/start`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.8' },
      body: JSON.stringify({ orderId, token, paymentMethod: 'manual' }),
    });
    expect(started.status).toBe(200);

    await page.goto(`${server.url}/orders/${orderId}?token=${encodeURIComponent(token)}`);
    await page.getByRole('heading', { name: 'Send your proof of payment' }).waitFor();
    await page.getByRole('button', { name: 'Send proof' }).click();
    await expect.poll(() => page.getByLabel(/^Proof of payment/).getAttribute('aria-invalid')).toBe('true');
    await page
      .getByLabel(/^Proof of payment/)
      .setInputFiles({ name: 'receipt.pdf', mimeType: 'application/pdf', buffer: randomBytes(256) });
    await page.getByRole('button', { name: 'Send proof' }).click();
    await page.getByText('the seller has your proof of payment', { exact: false }).waitFor();
    const proof = await dashboard(
      shop.seller,
      'GET',
      `/api/dashboard/stores/${shop.store.id}/orders/${orderId}/payment-proof`,
    );
    expect(proof.status).toBe(200);
    expect((await proof.arrayBuffer()).byteLength).toBe(256);
  });
});

describe('errors next to their field', () => {
  it('shows a missing required custom field and a wrong coupon where they belong, and moves the focus there', async () => {
    const shop = await createShop(server.url);
    const product = await keyProduct(shop, ['ERR-KEY-1'], {
      customFields: [{ name: 'Steam username', type: 'text', required: true }],
    });
    const created = await dashboard(shop.seller, 'POST', `/api/dashboard/stores/${shop.store.id}/coupons`, {
      code: 'SAVE5',
      discountType: 'fixed',
      discountValue: 5,
    });
    expect(created.status, await created.clone().text()).toBe(201);
    await page.goto(`${theme.url}/cart?store=${shop.store.id}&product=${product.id}`);
    await page.getByRole('button', { name: 'Checkout' }).click();
    await page.waitForURL(new RegExp(`^${server.url}/checkout/`));

    // Focus order follows the form: e-mail, custom field, coupon, payment methods, pay.
    const email = page.getByLabel('E-mail');
    await email.focus();
    const order: string[] = [];
    for (let i = 0; i < 5; i++) {
      await page.keyboard.press('Tab');
      order.push(await page.evaluate(() => document.activeElement?.name || document.activeElement?.textContent || ''));
    }
    expect(order).toEqual(['custom-Steam username', 'coupon', 'Apply', 'paymentMethod', 'Pay $19.99']);

    // Apply shows a good code's discount before paying, and a wrong one's reason at the field.
    const coupon = page.getByLabel('Coupon code');
    await coupon.fill('save5');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('SAVE5 takes $5.00 off: you pay $14.99.').waitFor();
    await page.getByRole('button', { name: 'Pay $14.99' }).waitFor();
    await coupon.fill('NOSUCHCODE');
    expect(await page.getByRole('button', { name: 'Pay $19.99' }).count()).toBe(1);
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => coupon.getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByText('This coupon does not exist.').count()).toBe(1);

    // Paying with the wrong code and a required field left empty: the field's error comes first.
    await email.fill(buyerEmail());
    await page.getByRole('button', { name: 'Pay $19.99' }).click();
    const custom = page.getByLabel('Steam username');
    await expect.poll(() => custom.getAttribute('aria-invalid')).toBe('true');
    const customError = await custom.evaluate((input: any) => {
      const ids = (input.getAttribute('aria-describedby') ?? '').split(' ');
      return ids.map((id: string) => document.getElementById(id)?.textContent ?? '').join('|');
    });
    expect(customError).toContain('Required.');
    expect(await custom.evaluate((input: any) => input === document.activeElement)).toBe(true);
    expect(await page.getByLabel('Coupon code').getAttribute('aria-invalid')).toBeNull();
    await screenshots(page, 'checkout-field-error');

    await custom.fill('gamer_42');
    await page.getByRole('button', { name: 'Pay $19.99' }).click();
    await expect.poll(() => coupon.getAttribute('aria-invalid')).toBe('true');
    expect(await custom.getAttribute('aria-invalid')).toBeNull();
    const couponError = await coupon.evaluate(
      (input: any) => document.getElementById(input.getAttribute('aria-describedby')!.split(' ').pop())?.textContent,
    );
    expect(couponError).toBe('This coupon does not exist.');
    expect(await coupon.evaluate((input: any) => input === document.activeElement)).toBe(true);
    await screenshots(page, 'checkout-coupon-error');

    // Corrected, the same form goes through.
    await coupon.fill('');
    await page.getByRole('button', { name: 'Pay $19.99' }).click();
    await page.waitForURL(new RegExp(`^${server.url}/pay/test/`));
  });
});
