/**
 * In a real browser, the faces of tax (#42): the dashboard's Settings edit the store's tax (the
 * form's own checks and the server's refusal both shown at their fields), the product form's Tax
 * category; the hosted checkout of a taxed store asks for the billing country and a VAT id and
 * redraws its summary from POST /api/checkout/billing (another country's rate, a reverse charge,
 * prices that include tax), and a store with tax off keeps its checkout as it was; the hosted
 * cart shows the tax line. Screenshots of the changed screens at 1280 and 390 px, light and dark,
 * go to $TAX_SHOTS_DIR (/tmp/shots-tax by default).
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientIp, dashboard } from '../support/seller.js';
import { expectAccessible, signInThroughUi, storeUrl } from './dashboard-support.js';
import {
  createProduct,
  createShop,
  launchChromium,
  pagePerTest,
  startPageServer,
  unlabelledControls,
  type Shop,
} from './support.js';

let server: Awaited<ReturnType<typeof startPageServer>>;
let browser: Browser;
let context: BrowserContext;
let page: Page;

const SHOTS = process.env.TAX_SHOTS_DIR ?? '/tmp/shots-tax';
/** A poll that waits for a screen's queries on a loaded machine (the default is 1 s). */
const SLOW = { timeout: 15_000 };

beforeAll(async () => {
  [server, browser] = await Promise.all([startPageServer(), launchChromium()]);
  mkdirSync(SHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});
pagePerTest(
  () => ({ browser, serviceUrl: server.url }),
  (opened) => ({ context, page } = opened),
);

/** The whole page at 1280 and 390 px wide, light and dark, as `<name>-<width>-<scheme>.png`. */
async function shots(name: string): Promise<void> {
  const original = page.viewportSize() ?? { width: 1280, height: 800 };
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 800 });
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      await page.screenshot({ path: path.join(SHOTS, `${name}-${width}-${colorScheme}.png`), fullPage: true });
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize(original);
}

type TaxSettings = {
  behavior: 'off' | 'exclusive' | 'inclusive';
  originCountry?: string;
  registrations?: string[];
};

/** A shop selling in EUR with `tax` (seller details filled in), and one €10 product. */
async function taxShop(tax: TaxSettings): Promise<{ shop: Shop; productId: string }> {
  const shop = await createShop(server.url, 'Pixel Forge');
  const settings =
    tax.behavior === 'off'
      ? { tax: { behavior: 'off' } }
      : {
          tax: {
            ...tax,
            sellerName: 'Pixel Forge GmbH',
            sellerAddress: 'Hauptstraße 1\n10115 Berlin',
            sellerTaxId: 'DE123456789',
          },
        };
  const updated = await dashboard(shop.seller, 'PATCH', `/api/dashboard/stores/${shop.store.id}`, {
    currency: 'EUR',
    settings,
  });
  expect(updated.status, await updated.clone().text()).toBe(200);
  const product = await createProduct(shop.seller, shop.store.id, {
    name: 'Icon Pack',
    price: 10,
    deliveryMethods: ['manualDelivery'],
  });
  return { shop, productId: product.id };
}

/** An order of the product opened at the hosted checkout, placed from `country` (as its billing country). */
async function openCheckout(shop: Shop, productId: string, country?: string): Promise<void> {
  const response = await fetch(`${server.url}/api/v1/checkout`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp() },
    body: JSON.stringify({
      shopId: shop.store.id,
      cart: [{ productId, quantity: 1 }],
      email: 'ada@example.test',
      ...(country ? { country } : {}),
    }),
  });
  expect(response.status, await response.clone().text()).toBe(200);
  const { url } = (await response.json()) as { url: string };
  await page.goto(new URL(url, server.url).toString());
  await page.getByRole('heading', { name: /^Order ORD-\d+ at Pixel Forge$/ }).waitFor();
}

/** The summary's rows as `label: amount`. */
async function totals(): Promise<string[]> {
  return page
    .locator('.order-summary dl.totals > div')
    .evaluateAll((rows: any[]) =>
      rows.map((row) => `${row.querySelector('dt').textContent}: ${row.querySelector('dd').textContent}`),
    );
}

describe('dashboard: Settings, Tax', () => {
  it("saves the store's tax; missing seller details and a country without rates are refused at their fields", async () => {
    const shop = await createShop(server.url, 'Pixel Forge');
    await page.goto(storeUrl(server.url, shop.store.id, '/settings'));
    await signInThroughUi(page, shop.seller);
    const tax = page.getByRole('region', { name: 'Tax' });
    await tax.waitFor(SLOW);
    expect(await tax.getByRole('radio', { name: 'Off' }).isChecked()).toBe(true);

    // Tax on without the seller's details: the server's schema, in the form, names each field.
    await tax.getByRole('radio', { name: 'Prices exclude tax' }).check();
    await page.getByRole('button', { name: 'Save' }).click();
    const sellerName = tax.getByLabel('Seller name');
    await expect.poll(() => sellerName.getAttribute('aria-invalid'), SLOW).toBe('true');
    expect(await tax.getByLabel('Origin country').getAttribute('aria-invalid')).toBe('true');
    await tax.getByText('Name at least one country (or EU) once tax is on.').waitFor();
    expect(await page.getByRole('status').filter({ hasText: 'Saved.' }).count()).toBe(0);

    await tax.getByLabel('Origin country').selectOption({ label: 'Germany' });
    await tax.getByRole('checkbox', { name: 'EU one-stop shop (every EU country)' }).check();
    // Antarctica is a country code, but svc has no rates for it: the server refuses it, at the registrations.
    await tax.getByLabel('Country to add').selectOption({ label: 'Antarctica' });
    await tax.getByRole('button', { name: 'Add country' }).click();
    await tax.getByRole('button', { name: 'Remove Antarctica' }).waitFor();
    await sellerName.fill('Pixel Forge GmbH');
    await tax.getByLabel('Seller address').fill('Hauptstraße 1\n10115 Berlin');
    await tax.getByLabel('Seller tax ID').fill('DE123456789');
    await page.getByRole('button', { name: 'Save' }).click();
    await tax.getByText('svc has no tax rates for AQ.').waitFor(SLOW);
    expect(await tax.getByRole('checkbox', { name: /^EU one-stop shop/ }).getAttribute('aria-invalid')).toBe('true');
    expect(await unlabelledControls(page)).toEqual([]);
    await shots('settings-tax-refused');

    await tax.getByRole('button', { name: 'Remove Antarctica' }).click();
    await tax.getByLabel('Country to add').selectOption({ label: 'Norway' });
    await tax.getByRole('button', { name: 'Add country' }).click();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor(SLOW);
    expect(await tax.getByText('svc has no tax rates for AQ.').count()).toBe(0);

    await page.reload();
    await expect.poll(() => tax.getByRole('radio', { name: 'Prices exclude tax' }).isChecked(), SLOW).toBe(true);
    expect(await tax.getByLabel('Origin country').inputValue()).toBe('DE');
    expect(await tax.getByRole('checkbox', { name: /^EU one-stop shop/ }).isChecked()).toBe(true);
    await tax.getByRole('button', { name: 'Remove Norway' }).waitFor();
    expect(await sellerName.inputValue()).toBe('Pixel Forge GmbH');
    const stored = await (await dashboard(shop.seller, 'GET', `/api/dashboard/stores/${shop.store.id}`)).json();
    expect(stored.settings.tax).toEqual({
      behavior: 'exclusive',
      originCountry: 'DE',
      registrations: ['EU', 'NO'],
      sellerName: 'Pixel Forge GmbH',
      sellerAddress: 'Hauptstraße 1\n10115 Berlin',
      sellerTaxId: 'DE123456789',
    });

    await expectAccessible(page, 'settings with tax');
    await shots('settings-tax');
  });

  it("saves a product's tax category", async () => {
    const shop = await createShop(server.url, 'Pixel Forge');
    const product = await createProduct(shop.seller, shop.store.id, {
      name: 'Field Guide',
      price: 7.5,
      deliveryMethods: ['manualDelivery'],
    });
    await page.goto(storeUrl(server.url, shop.store.id, `/products/${product.id}`));
    await signInThroughUi(page, shop.seller);
    const edit = page.getByRole('region', { name: 'Edit product' });
    const category = edit.getByLabel('Tax category');
    await expect.poll(() => category.inputValue(), SLOW).toBe('standard');
    await category.selectOption({ label: 'E-book' });
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor(SLOW);
    const stored = await (
      await dashboard(shop.seller, 'GET', `/api/dashboard/stores/${shop.store.id}/products/${product.id}`)
    ).json();
    expect(stored.taxCategory).toBe('ebook');
    await page.reload();
    await expect.poll(() => edit.getByLabel('Tax category').inputValue(), SLOW).toBe('ebook');
    await page.getByRole('region', { name: 'Summary' }).getByText('E-book').waitFor();
  });
});

describe('hosted checkout with tax', () => {
  it("shows the VAT line, another country's rate, and a reverse charge for another EU country's VAT ID", async () => {
    const { shop, productId } = await taxShop({ behavior: 'exclusive', originCountry: 'DE', registrations: ['EU'] });
    await openCheckout(shop, productId, 'DE');
    const country = page.getByLabel('Billing country');
    expect(await country.inputValue()).toBe('DE');
    expect(await totals()).toEqual(['Subtotal: €10.00', 'VAT 19% (DE): €1.90', 'Total: €11.90']);
    await page.getByRole('button', { name: 'Pay €11.90' }).waitFor();
    expect(await unlabelledControls(page)).toEqual([]);
    await page.getByLabel('E-mail').fill('ada@example.test');
    await shots('checkout-tax-de');

    // Another country, another rate: the summary is redrawn in place and the status line says it.
    // Nothing moves: the summary keeps its place and height, and so does the form (the new tax is said by a live region).
    const boxes = () =>
      Promise.all([page.locator('.order-summary').boundingBox(), page.getByLabel('VAT ID (business)').boundingBox()]);
    const before = await boxes();
    await country.selectOption('FR');
    await expect.poll(totals, SLOW).toEqual(['Subtotal: €10.00', 'VAT 20% (FR): €2.00', 'Total: €12.00']);
    await page.getByRole('button', { name: 'Pay €12.00' }).waitFor();
    await page.getByRole('status').filter({ hasText: 'VAT 20% (FR) €2.00. Total €12.00.' }).waitFor();
    expect(await boxes()).toEqual(before);

    // A VAT ID that is not one: refused at its field, the summary as it was.
    const vatId = page.getByLabel('VAT ID (business)');
    await vatId.fill('FR123');
    await vatId.press('Tab');
    await expect.poll(() => vatId.getAttribute('aria-invalid'), SLOW).toBe('true');
    // Under the field (tied to it by aria-describedby), and said by the live region, the focus left where it went.
    await page.locator('.field-error', { hasText: 'Not a valid VAT id (such as FR40303265045).' }).waitFor();
    await page.getByRole('status').filter({ hasText: 'Not a valid VAT id' }).waitFor();
    expect(await vatId.evaluate((input: any) => input.ownerDocument.activeElement !== input)).toBe(true);
    expect(await totals()).toEqual(['Subtotal: €10.00', 'VAT 20% (FR): €2.00', 'Total: €12.00']);

    // A French business's valid VAT ID, bought from a German seller: a reverse charge, no VAT.
    await vatId.fill('FR40303265045');
    await vatId.press('Tab');
    await expect.poll(totals, SLOW).toEqual(['Subtotal: €10.00', 'VAT reverse charge: €0.00', 'Total: €10.00']);
    expect(await vatId.getAttribute('aria-invalid')).toBeNull();
    await page.getByRole('button', { name: 'Pay €10.00' }).waitFor();
    expect(await boxes()).toEqual(before);
    await expectAccessible(page, 'checkout with a reverse charge');
    await shots('checkout-tax-reverse-charge');

    // Paying keeps what the page showed.
    await page.getByLabel('Test payment').check();
    await page.getByRole('button', { name: 'Pay €10.00' }).click();
    await page.waitForURL(new RegExp(`^${server.url}/pay/test/`));
  });

  it('takes a coupon off before the VAT, and the payment is the taxed total', async () => {
    const { shop, productId } = await taxShop({ behavior: 'exclusive', originCountry: 'DE', registrations: ['EU'] });
    const coupon = await dashboard(shop.seller, 'POST', `/api/dashboard/stores/${shop.store.id}/coupons`, {
      code: 'LAUNCH20',
      discountType: 'percent',
      discountValue: 20,
    });
    expect(coupon.status, await coupon.clone().text()).toBe(201);
    await openCheckout(shop, productId, 'DE');
    await page.getByLabel('Coupon code').fill('launch20');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('LAUNCH20 takes €2.00 off before VAT; the VAT on the rest is added when you pay.').waitFor();
    await page.getByLabel('Test payment').check();
    await page.getByRole('button', { name: 'Pay', exact: true }).click();
    await page.waitForURL(new RegExp(`^${server.url}/pay/test/`));
    // €10 less 20%, plus 19% German VAT.
    await page.getByRole('button', { name: 'Pay €9.52' }).waitFor(SLOW);
  });

  it('says the VAT included in prices that include tax', async () => {
    const { shop, productId } = await taxShop({ behavior: 'inclusive', originCountry: 'DE', registrations: ['EU'] });
    await openCheckout(shop, productId, 'DE');
    expect(await totals()).toEqual(['Subtotal: €10.00', 'Total: €10.00', 'incl. VAT 19% (DE): €1.60']);
    await page.getByLabel('Billing country').selectOption('AT');
    await expect.poll(totals, SLOW).toEqual(['Subtotal: €10.00', 'Total: €10.00', 'incl. VAT 20% (AT): €1.67']);
    await expectAccessible(page, 'checkout with prices that include tax');
    await shots('checkout-tax-inclusive');
  });

  it('keeps the checkout as it was while the store charges no tax', async () => {
    const { shop, productId } = await taxShop({ behavior: 'off' });
    await openCheckout(shop, productId);
    expect(await totals()).toEqual(['Total: €10.00']);
    expect(await page.getByLabel('Billing country').count()).toBe(0);
    expect(await page.getByLabel('VAT ID (business)').count()).toBe(0);
  });
});

describe('hosted cart with tax', () => {
  it("shows the tax line for the request's country and the total with it", async () => {
    const { shop, productId } = await taxShop({ behavior: 'exclusive', originCountry: 'DE', registrations: ['EU'] });
    // The test server trusts its proxy's country header (cf-ipcountry).
    await context.setExtraHTTPHeaders({ 'cf-ipcountry': 'NL' });
    await page.goto(`${server.url}/s/${shop.store.subdomain}/cart?add=${productId}`);
    const total = page.locator('#cart-total');
    await expect.poll(() => total.textContent(), SLOW).toBe('€12.10');
    const rows = await page
      .locator('dl.totals > div:not([hidden])')
      .evaluateAll((found: any[]) =>
        found.map((row) => `${row.querySelector('dt').textContent}: ${row.querySelector('dd').textContent}`),
      );
    expect(rows).toEqual(['Subtotal: €10.00', 'VAT 21% (NL): €2.10', 'Total: €12.10']);
    await expectAccessible(page, 'cart with tax');
    await shots('cart-tax');
  });
});
