/**
 * In a real browser: the dashboard's Orders screens (issue 28, item 4). A buyer checks out over
 * HTTP and pays with the test gateway while the seller has the Orders page open: the order shows
 * up without a reload. A deep link with a status filter opens on that filter. The seller opens
 * the order, adds a note and refunds it in the dialog: the page says refunded and the key
 * disabled (and the API agrees). A member with only viewOrders sees no action, and the refund
 * forced over HTTP with their session is 403.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buy } from '../support/payments.js';
import { addStaff, clientIp, dashboard, registerSeller, uniqueEmail, type Seller } from '../support/seller.js';
import { expectAccessible } from './dashboard-support.js';
import { createShop, keyProduct, launchChromium, pagePerTest, startPageServer } from './support.js';

// Evaluated in the page; tsconfig.test.json has no DOM types.
declare const window: any;

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

async function signIn(seller: Seller): Promise<void> {
  await page.goto(`${server.url}/dashboard/sign-in`);
  await page.getByLabel('Email').fill(seller.email);
  await page.getByLabel('Password').fill(seller.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => !url.pathname.startsWith('/dashboard/sign-in'));
}

async function apiOrder(seller: Seller, storeId: string, orderId: string) {
  const response = await dashboard(seller, 'GET', `/api/dashboard/stores/${storeId}/orders/${orderId}`);
  expect(response.status).toBe(200);
  return response.json();
}

describe('dashboard: orders', () => {
  it('shows a new order without a reload, filters from the URL, notes and refunds it', async () => {
    const shop = await createShop(server.url, 'Orbit Keys');
    const product = await keyProduct(shop, ['ORBIT-1111-AAAA-2222']);
    const ordersUrl = `${server.url}/dashboard/stores/${shop.store.id}/orders`;
    await signIn(shop.seller);
    await page.goto(ordersUrl);
    await page.getByRole('heading', { level: 1, name: 'Orders' }).waitFor();
    const table = page.getByRole('table', { name: 'Orders' });
    await table.getByText('No orders yet.').waitFor();
    for (const header of ['Status', 'Order', 'Product', 'Buyer', 'Total', 'Date'])
      await expect(table.getByRole('columnheader', { name: header }).count()).resolves.toBe(1);

    // The buyer pays while the page is open; the row arrives without a reload (the marker survives).
    await page.evaluate(() => {
      window.stillThisPage = true;
    });
    const order = await buy(server.url, {
      storeId: shop.store.id,
      productId: product.id,
      email: uniqueEmail('buyer'),
      ip: clientIp(),
    });
    await table.getByRole('link', { name: order.orderId }).waitFor({ timeout: 20_000 });
    await expect(page.evaluate(() => window.stillThisPage === true)).resolves.toBe(true);
    const row = table.getByRole('row').filter({ has: page.getByRole('link', { name: order.orderId }) });
    // The status is a badge in words, not colour alone.
    await expect(row.getByRole('cell').first().textContent()).resolves.toBe('Completed');

    // A deep link with a status opens on that filter: the key was delivered, so it is completed, not paid.
    await page.goto(`${ordersUrl}?status=paid`);
    await table.getByText('No orders match these filters.').waitFor();
    await expect(page.getByLabel('Status').inputValue()).resolves.toBe('paid');
    await page.goto(`${ordersUrl}?status=completed`);
    await table.getByRole('link', { name: order.orderId }).waitFor();
    await expect(page.getByLabel('Status').inputValue()).resolves.toBe('completed');
    // The filter form writes the URL, here with the order's number as `q`.
    await page.getByLabel('Order or e-mail').fill(order.orderId);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL((url) => url.searchParams.get('q') === order.orderId);
    await table.getByRole('link', { name: order.orderId }).waitFor();

    // The order: a note, then a refund in the dialog that repeats the verb.
    await table.getByRole('link', { name: order.orderId }).click();
    await page.getByRole('heading', { level: 1, name: `Order ${order.orderId}` }).waitFor();
    await page.getByRole('cell', { name: 'Active' }).waitFor();
    // The key is shown masked, never whole.
    expect(await page.content()).not.toContain('ORBIT-1111-AAAA-2222');
    await page.getByLabel('Seller note').fill('Buyer asked for a refund by e-mail.');
    await page.getByRole('button', { name: 'Save note' }).click();
    await page.getByText('Note saved.').waitFor();
    expect((await apiOrder(shop.seller, shop.store.id, order.id)).note).toBe('Buyer asked for a refund by e-mail.');
    await expectAccessible(page, 'order page');

    await page.getByRole('button', { name: 'Refund' }).click();
    const dialog = page.getByRole('alertdialog', { name: `Refund ${order.orderId}?` });
    await dialog.waitFor();
    // Focus moves into the dialog (and the page behind it is not reachable).
    expect(await dialog.evaluate((element: any) => element.contains(element.ownerDocument.activeElement))).toBe(true);
    await expectAccessible(page, 'refund dialog');
    await dialog.getByRole('button', { name: 'Refund' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page
      .getByRole('definition')
      .filter({ hasText: /^Refunded$/ })
      .waitFor();
    await page.getByRole('cell', { name: 'Disabled' }).waitFor();
    await expect(page.getByRole('button', { name: 'Refund' }).count()).resolves.toBe(0);
    const refunded = await apiOrder(shop.seller, shop.store.id, order.id);
    expect(refunded.status).toBe('refunded');
    expect(refunded.lines[0].delivered.licenseKeys.map((k: { status: string }) => k.status)).toEqual(['revoked']);
  }, 90_000);

  it("shows the order's discount and the coupon code that made it, from the order itself", async () => {
    const shop = await createShop(server.url, 'Coupon Corner');
    const product = await keyProduct(shop, ['CPN-1111-AAAA-1', 'CPN-1111-AAAA-2', 'CPN-1111-AAAA-3'], { price: 23.5 });
    const coupon = await dashboard(shop.seller, 'POST', `/api/dashboard/stores/${shop.store.id}/coupons`, {
      code: 'Launch20',
      discountType: 'percent',
      discountValue: 20,
    });
    expect(coupon.status, await coupon.clone().text()).toBe(201);
    const order = await buy(server.url, {
      storeId: shop.store.id,
      productId: product.id,
      quantity: 3,
      coupon: 'LAUNCH20',
      ip: clientIp(),
    });

    await signIn(shop.seller);
    await page.goto(`${server.url}/dashboard/stores/${shop.store.id}/orders/${order.orderId}`);
    await page.getByRole('heading', { level: 1, name: `Order ${order.orderId}` }).waitFor();
    const summary = page.getByRole('region', { name: 'Summary' });
    // The lines sum to $70.50, the buyer paid $56.40: the summary says why, and with which code.
    await summary.getByRole('term').filter({ hasText: 'Discount (coupon Launch20)' }).waitFor();
    const texts = await summary.getByRole('definition').allTextContents();
    expect(texts).toEqual(expect.arrayContaining(['$70.50', '−$14.10', '$56.40']));
  }, 60_000);

  it('shows a viewOrders-only member no action, and the API refuses their forced refund', async () => {
    const shop = await createShop(server.url, 'Viewer Goods');
    const product = await keyProduct(shop, ['VIEW-3333-BBBB-4444']);
    const order = await buy(server.url, {
      storeId: shop.store.id,
      productId: product.id,
      email: uniqueEmail('buyer'),
      ip: clientIp(),
    });
    const viewer = await registerSeller(server.url);
    await addStaff(shop.seller, shop.store.id, viewer, ['viewOrders']);

    await signIn(viewer);
    await page.goto(`${server.url}/dashboard/stores/${shop.store.id}/orders/${order.orderId}`);
    await page.getByRole('heading', { level: 1, name: `Order ${order.orderId}` }).waitFor();
    await page.getByRole('heading', { name: 'Timeline' }).waitFor();
    for (const name of ['Refund', 'Mark paid', 'Cancel order', 'Mark delivered', 'Save note', 'More actions'])
      await expect(page.getByRole('button', { name }).count(), name).resolves.toBe(0);
    await expect(page.getByLabel('Seller note').count()).resolves.toBe(0);

    const forced = await dashboard(viewer, 'POST', `/api/dashboard/stores/${shop.store.id}/orders/${order.id}/refund`);
    expect(forced.status).toBe(403);
    expect((await apiOrder(shop.seller, shop.store.id, order.id)).status).toBe('completed');
  }, 60_000);
});
