/**
 * In a real browser: the buyer's order page of a paid order of a store that charges tax links its
 * invoice ("Invoice (PDF) INV-…"), through the page's own access (the token in its address), and
 * the link answers the PDF; after a refund the credit note is linked too. An order of a store
 * without tax links none. The dashboard's order page shows the tax (rate, country, the reverse
 * charge badge) and downloads the invoice.
 */
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pay } from '../support/payments.js';
import { dashboard, type Seller } from '../support/seller.js';
import { createProduct, createShop, launchChromium, pagePerTest, startPageServer, type Shop } from './support.js';

let server: Awaited<ReturnType<typeof startPageServer>>;
let browser: Browser;
let page: Page;
let taxed: Shop;
let plain: Shop;

beforeAll(async () => {
  [server, browser] = await Promise.all([startPageServer(), launchChromium()]);
  [taxed, plain] = await Promise.all([createShop(server.url), createShop(server.url, 'Plain Shop')]);
  const response = await dashboard(taxed.seller, 'PATCH', `/api/dashboard/stores/${taxed.store.id}`, {
    settings: {
      tax: {
        behavior: 'inclusive',
        originCountry: 'DE',
        registrations: ['DE'],
        sellerName: 'Pixel Forge GmbH',
        sellerAddress: 'Hauptstr. 1\n10115 Berlin',
        sellerTaxId: 'DE123456789',
      },
    },
  });
  expect(response.status, await response.clone().text()).toBe(200);
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});
pagePerTest(
  () => ({ browser, serviceUrl: server.url }),
  (opened) => ({ page } = opened),
);

/** A paid order of the shop, bought over HTTP with a billing country; its id and token. */
async function paidOrder(shop: Shop, billing: Record<string, string>) {
  const product = await createProduct(shop.seller, shop.store.id, {
    name: 'Font Pack',
    price: 11.9,
    deliveryMethods: ['deliveryInstructions'],
    deliveryInstructions: 'Install the fonts.',
  });
  const headers = { 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.9' };
  const checkout = await fetch(`${server.url}/api/v1/checkout`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      shopId: shop.store.id,
      cart: [{ productId: product.id, quantity: 1 }],
      email: `buyer-${randomBytes(4).toString('hex')}@example.test`,
      ...billing,
    }),
  });
  expect(checkout.status, await checkout.clone().text()).toBe(200);
  const { url, orderId: id } = (await checkout.json()) as { url: string; orderId: string };
  const token = new URL(url).searchParams.get('token')!;
  const entered = await fetch(`${server.url}/api/checkout/enter`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ orderId: id, token }),
  });
  const { order } = (await entered.json()) as { order: { price: number; currency: string } };
  expect(await (await pay(server.url, { orderId: id, amount: order.price, currency: order.currency })).json()).toEqual({
    outcome: 'settled',
  });
  return { id, token };
}

describe("the buyer's order page", () => {
  it('links the invoice of a taxed order, and the credit note once refunded', async () => {
    const order = await paidOrder(taxed, { country: 'DE', billingName: 'Erika Muster' });
    await page.goto(`${server.url}/orders/${order.id}?token=${encodeURIComponent(order.token)}`);
    const invoice = page.getByRole('link', { name: /^Invoice \(PDF\) INV-\d{4}-\d+$/ });
    await invoice.waitFor();
    const href = await invoice.getAttribute('href');
    expect(href).toBe(`/api/orders/${order.id}/invoice?token=${encodeURIComponent(order.token)}`);
    const pdf = await page.request.get(`${server.url}${href}`);
    expect(pdf.status()).toBe(200);
    expect(pdf.headers()['content-type']).toBe('application/pdf');
    expect((await pdf.body()).subarray(0, 5).toString('latin1')).toBe('%PDF-');
    await expect(page.getByRole('link', { name: /Credit note/ }).count()).resolves.toBe(0);

    const refund = await dashboard(
      taxed.seller,
      'POST',
      `/api/dashboard/stores/${taxed.store.id}/orders/${order.id}/refund`,
      {},
    );
    expect(refund.status, await refund.clone().text()).toBe(200);
    await page.reload();
    const credit = page.getByRole('link', { name: /^Credit note \(PDF\) CN-\d{4}-\d+$/ });
    await credit.waitFor();
    const creditPdf = await page.request.get(`${server.url}${await credit.getAttribute('href')}`);
    expect(creditPdf.status()).toBe(200);
    expect(creditPdf.headers()['content-type']).toBe('application/pdf');
  });

  it('links no invoice for an order of a store without tax', async () => {
    const order = await paidOrder(plain, {});
    await page.goto(`${server.url}/orders/${order.id}?token=${encodeURIComponent(order.token)}`);
    await page.getByRole('heading', { name: 'Your order' }).waitFor();
    await page.getByText('Install the fonts.').waitFor();
    await expect(page.getByRole('link', { name: /Invoice/ }).count()).resolves.toBe(0);
  });
});

async function signIn(seller: Seller): Promise<void> {
  await page.goto(`${server.url}/dashboard/sign-in`);
  await page.getByLabel('Email').fill(seller.email);
  await page.getByLabel('Password').fill(seller.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => !url.pathname.startsWith('/dashboard/sign-in'));
}

describe("the dashboard's order page", () => {
  it('shows the tax with its rate and country, the reverse charge, and downloads the invoice', async () => {
    const order = await paidOrder(taxed, { country: 'DE' });
    const read = await (
      await dashboard(taxed.seller, 'GET', `/api/dashboard/stores/${taxed.store.id}/orders/${order.id}`)
    ).json();
    await signIn(taxed.seller);
    await page.goto(`${server.url}/dashboard/stores/${taxed.store.id}/orders/${read.orderId}`);
    // 11.90 with 19 % inside: 1.90 of it is tax.
    await page.getByText('Tax 19% (DE), included').waitFor();
    await page.getByText(/^\D?1\.90$/).waitFor();
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: `Download invoice ${read.invoiceNumber}` }).click();
    expect((await download).suggestedFilename()).toBe(`${read.invoiceNumber}.pdf`);

    const b2b = await paidOrder(taxed, { country: 'FR', taxId: 'FR40303265045' });
    const b2bRead = await (
      await dashboard(taxed.seller, 'GET', `/api/dashboard/stores/${taxed.store.id}/orders/${b2b.id}`)
    ).json();
    await page.goto(`${server.url}/dashboard/stores/${taxed.store.id}/orders/${b2bRead.orderId}`);
    expect(b2bRead.reverseCharge).toBe(true);
    await page.getByText('Tax 0% (FR)').waitFor();
    await page.getByText('Reverse charge', { exact: true }).waitFor();
  });
});
