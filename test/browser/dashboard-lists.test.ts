/**
 * In a real browser: the dashboard's Coupons, Blacklist, Tickets and Customers screens (issue 28,
 * items 6 and 7). A seller creates, edits and deletes a coupon; adds and removes a blacklist entry;
 * answers a ticket a buyer opened over HTTP, the reply reaching the buyer's side of the API; and
 * finds signed-in buyers with what they spent, searching by e-mail with the search in the URL.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct } from '../support/catalog.js';
import { buy } from '../support/payments.js';
import { clientIp, dashboard, uniqueEmail } from '../support/seller.js';
import { expectAccessible } from './dashboard-support.js';
import { createShop, launchChromium, pagePerTest, startPageServer, unlabelledControls, type Shop } from './support.js';

let server: Awaited<ReturnType<typeof startPageServer>>;
let browser: Browser;
let page: Page;
let shop: Shop;

beforeAll(async () => {
  [server, browser] = await Promise.all([startPageServer(), launchChromium()]);
  shop = await createShop(server.url, 'List Shop');
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});
pagePerTest(
  () => ({ browser, serviceUrl: server.url }),
  (opened) => ({ page } = opened),
);

/** Opens a dashboard screen of a shop as its owner (the session cookie registration gave). */
async function openScreen(screen: string, of: Shop = shop): Promise<void> {
  const [name, value] = of.seller.cookie.split('=') as [string, string];
  await page.context().addCookies([{ name, value, url: server.url }]);
  await page.goto(`${server.url}/dashboard/stores/${of.store.id}/${screen}`);
}

/** A buyer's call over HTTP, from their own address. */
function buyerCall(ip: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${server.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** A buyer signs in to the store's customer area with the code from the development mailbox. */
async function signInCustomer(storeId: string, email: string): Promise<void> {
  const ip = clientIp();
  expect((await buyerCall(ip, '/api/customer/auth/start', { storeId, email })).status).toBe(204);
  let code: string | undefined;
  const deadline = Date.now() + 5_000;
  while (!code && Date.now() < deadline) {
    const { emails } = await (await fetch(`${server.url}/dev/mailbox.json`)).json();
    const mail = emails.find(
      (m: { to: string; subject: string }) => m.to === email && m.subject.startsWith('Your sign-in code'),
    );
    code = mail && /\b(\d{6})\b/.exec(mail.text)?.[1];
    if (!code) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(code, `a code e-mailed to ${email}`).toBeDefined();
  expect((await buyerCall(ip, '/api/customer/auth/verify', { storeId, email, code })).status).toBe(200);
}

/** A screen's state once it shows (vitest's own poll gives up after 1 s; a loaded machine needs longer). */
function poll<T>(read: () => T | Promise<T>) {
  return expect.poll(read, { timeout: 10_000 });
}

async function apiList<T>(path: string, field: string): Promise<T[]> {
  const response = await dashboard(shop.seller, 'GET', `/api/dashboard/stores/${shop.store.id}/${path}`);
  expect(response.status).toBe(200);
  return (await response.json())[field];
}

// Each test drives several screens; a loaded machine (2 cores, other suites running) needs more than 30 s.
describe('dashboard lists', { timeout: 60_000 }, () => {
  it('creates a coupon, edits it and deletes it after confirming `Delete`', async () => {
    await openScreen('coupons');
    await poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Coupons');
    await page.getByText('No coupons yet.').waitFor();

    await page.getByRole('button', { name: 'New coupon' }).click();
    const dialog = page.getByRole('dialog', { name: 'New coupon' });
    await dialog.getByLabel('Code').fill('SPRING25');
    await dialog.getByLabel('Discount type').selectOption('percent');
    await dialog.getByLabel('Discount', { exact: true }).fill('150');
    await dialog.getByLabel('Maximum uses').fill('10');
    await dialog.getByRole('button', { name: 'Create coupon' }).click();
    // The server's own schema refuses it in the form, under the field, before any request.
    await dialog.getByText('a percent discount is a whole number from 1 to 100').waitFor();
    expect(await dialog.getByLabel('Discount', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    expect(await apiList('coupons', 'coupons')).toEqual([]);

    await dialog.getByLabel('Discount', { exact: true }).fill('25');
    await dialog.getByRole('button', { name: 'Create coupon' }).click();
    await dialog.waitFor({ state: 'detached' });
    const row = page.getByRole('row').filter({ hasText: 'SPRING25' });
    await poll(() => row.getByRole('cell').allTextContents()).toEqual([
      'SPRING25',
      '25%',
      '0 of 10',
      'Never',
      'Active',
      'EditDelete',
    ]);
    expect(await page.getByRole('columnheader').allTextContents()).toEqual([
      'Code',
      'Discount',
      'Uses',
      'Expires',
      'Status',
      'Actions',
    ]);
    const [created] = await apiList<{ code: string; discountValue: number; maxUses: number }>('coupons', 'coupons');
    expect(created).toMatchObject({ code: 'SPRING25', discountType: 'percent', discountValue: 25, maxUses: 10 });

    await page.getByRole('button', { name: 'Edit SPRING25' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit coupon SPRING25' });
    expect(await edit.getByLabel('Discount', { exact: true }).inputValue()).toBe('25');
    await edit.getByLabel('Discount', { exact: true }).fill('30');
    await edit.getByLabel('Maximum uses').fill('');
    await edit.getByLabel('Active').uncheck();
    await edit.getByRole('button', { name: 'Save coupon' }).click();
    await edit.waitFor({ state: 'detached' });
    await poll(() => row.getByRole('cell').allTextContents()).toEqual([
      'SPRING25',
      '30%',
      '0',
      'Never',
      'Inactive',
      'EditDelete',
    ]);
    expect(await apiList('coupons', 'coupons')).toMatchObject([{ discountValue: 30, maxUses: null, active: false }]);
    expect(await unlabelledControls(page)).toEqual([]);

    await page.getByRole('button', { name: 'Delete SPRING25' }).click();
    const confirm = page.getByRole('alertdialog', { name: 'Delete coupon SPRING25?' });
    await confirm.getByRole('button', { name: 'Delete' }).click();
    await confirm.waitFor({ state: 'detached' });
    await page.getByText('No coupons yet.').waitFor();
    expect(await row.count()).toBe(0);
    expect(await apiList('coupons', 'coupons')).toEqual([]);
  });

  it('adds a blacklist entry, shows the API refusing a bad one, and removes it after `Delete`', async () => {
    await openScreen('blacklist');
    await page.getByText('Nobody is blacklisted.').waitFor();

    await page.getByLabel('Type').selectOption('country');
    await page.getByLabel('Value').fill('Narnia');
    await page.getByRole('button', { name: 'Add to blacklist' }).click();
    // Normalised and checked per kind by the server: its message shows where the seller added it.
    await page.getByRole('alert').filter({ hasText: 'Not a two-letter country code.' }).waitFor();

    await page.getByLabel('Type').selectOption('email');
    await page.getByLabel('Value').fill('Fraud@Example.test');
    await page.getByLabel('Note').fill('chargeback in May');
    await page.getByRole('button', { name: 'Add to blacklist' }).click();
    const row = page.getByRole('row').filter({ hasText: 'fraud@example.test' });
    await poll(() => row.getByRole('cell').allTextContents()).toEqual([
      'E-mail address',
      'fraud@example.test',
      'chargeback in May',
      expect.any(String),
      'Delete',
    ]);
    expect(await page.getByLabel('Value').inputValue()).toBe('');
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(await apiList('blacklist', 'entries')).toMatchObject([
      { kind: 'email', value: 'fraud@example.test', note: 'chargeback in May' },
    ]);

    await page.getByRole('button', { name: 'Delete fraud@example.test' }).click();
    const confirm = page.getByRole('alertdialog', { name: 'Remove fraud@example.test from the blacklist?' });
    await confirm.getByRole('button', { name: 'Delete' }).click();
    await confirm.waitFor({ state: 'detached' });
    await page.getByText('Nobody is blacklisted.').waitFor();
    expect(await apiList('blacklist', 'entries')).toEqual([]);
  });

  it("lists a buyer's ticket; the seller's reply in the thread reaches the buyer's side of the API", async () => {
    const product = await createProduct(shop.seller, shop.store.id, { name: 'Font Pack' });
    const ip = clientIp();
    const buyer = uniqueEmail('buyer');
    const call = (path: string, body?: unknown) => buyerCall(ip, path, body);
    const placed = await call('/api/orders/create', {
      storeId: shop.store.id,
      cart: [{ productId: product.id, quantity: 1 }],
      email: buyer,
    });
    expect(placed.status).toBe(201);
    const { order, checkoutToken } = await placed.json();
    const opened = await call('/api/tickets', {
      orderId: order.id,
      token: checkoutToken,
      subject: 'Where is my key?',
      message: 'I paid but got nothing.\nOrder placed this morning.',
    });
    expect(opened.status).toBe(201);
    const ticket = await opened.json();

    await openScreen('tickets');
    const row = page.getByRole('row').filter({ hasText: 'Where is my key?' });
    await poll(() => row.getByRole('cell').allTextContents()).toEqual([
      'Where is my key?',
      'Open',
      buyer,
      order.orderId,
      '1',
      expect.any(String),
    ]);

    await row.getByRole('link', { name: 'Where is my key?' }).click();
    await poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Where is my key?');
    await page.getByText(buyer).waitFor();
    const thread = page.getByRole('list').filter({ hasText: 'I paid but got nothing.' });
    await poll(() => thread.getByRole('listitem').count()).toBe(1);
    expect(await thread.getByRole('listitem').first().textContent()).toContain('Buyer');
    await expectAccessible(page, 'ticket page');

    await page.getByRole('textbox', { name: 'Message' }).fill('Here it is: check your inbox.');
    await page.getByRole('button', { name: 'Send reply' }).click();
    await poll(() => thread.getByRole('listitem').count()).toBe(2);
    const reply = thread.getByRole('listitem').nth(1);
    expect(await reply.textContent()).toContain('Staff');
    expect(await reply.textContent()).toContain('Here it is: check your inbox.');
    expect(await page.getByRole('textbox', { name: 'Message' }).inputValue()).toBe('');
    await page.getByText('Answered', { exact: true }).waitFor();

    const buyerView = await (await call(`/api/tickets/${ticket.id}?token=${checkoutToken}`)).json();
    expect(buyerView.status).toBe('answered');
    expect(buyerView.messages.map((m: { author: string; body: string }) => [m.author, m.body])).toEqual([
      ['buyer', 'I paid but got nothing.\nOrder placed this morning.'],
      ['staff', 'Here it is: check your inbox.'],
    ]);

    await page.getByRole('button', { name: 'Close ticket' }).click();
    await page.getByRole('button', { name: 'Reopen ticket' }).waitFor();
    await page.getByText('Closed', { exact: true }).waitFor();
    expect((await (await call(`/api/tickets/${ticket.id}?token=${checkoutToken}`)).json()).status).toBe('closed');
    expect(await unlabelledControls(page)).toEqual([]);
  });

  it('lists every buyer by e-mail, signed in or not, with orders, spend and last order, and searches with the search in the URL', async () => {
    const own = await createShop(server.url, 'Customer Shop');
    const product = await createProduct(own.seller, own.store.id, { name: 'Poster', price: 12.5 });
    const alice = uniqueEmail('alice');
    const bob = uniqueEmail('bob');
    // Carol buys without ever signing in to the customer area: she is a customer all the same.
    const carol = uniqueEmail('carol');
    await buy(server.url, { storeId: own.store.id, productId: product.id, quantity: 2, email: alice, ip: clientIp() });
    await buy(server.url, { storeId: own.store.id, productId: product.id, email: carol, ip: clientIp() });
    await signInCustomer(own.store.id, alice);
    await signInCustomer(own.store.id, bob);

    await openScreen('customers', own);
    const rows = page.getByRole('row');
    // By address: alice, bob, carol.
    await poll(() => rows.count()).toBe(4);
    expect(await rows.nth(0).getByRole('columnheader').allTextContents()).toEqual([
      'Email',
      'Orders',
      'Spent',
      'Last order',
      'Since',
      'Customer area',
    ]);
    expect(await rows.nth(1).getByRole('cell').allTextContents()).toEqual([
      alice,
      '1',
      '$25.00',
      expect.any(String),
      expect.any(String),
      'Signed in',
    ]);
    expect(await rows.nth(2).getByRole('cell').allTextContents()).toEqual([
      bob,
      '0',
      '$0.00',
      'None',
      expect.any(String),
      'Signed in',
    ]);
    expect(await rows.nth(3).getByRole('cell').allTextContents()).toEqual([
      carol,
      '1',
      '$12.50',
      expect.any(String),
      expect.any(String),
      'Never signed in',
    ]);

    await page.getByRole('searchbox', { name: 'Search' }).fill(alice.slice(0, 12).toUpperCase());
    await page.getByRole('button', { name: 'Search' }).click();
    await poll(() => new URL(page.url()).searchParams.get('q')).toBe(alice.slice(0, 12).toUpperCase());
    await poll(() => rows.count()).toBe(2);
    expect(await rows.nth(1).getByRole('cell').first().textContent()).toBe(alice);

    // The search is the URL's: a reload lands on the same filtered page, its field filled in.
    await page.reload();
    await poll(() => rows.count()).toBe(2);
    expect(await rows.nth(1).getByRole('cell').first().textContent()).toBe(alice);
    expect(await page.getByRole('searchbox', { name: 'Search' }).inputValue()).toBe(alice.slice(0, 12).toUpperCase());
    expect(await page.getByRole('navigation', { name: 'Pages' }).count()).toBe(0);
    expect(await unlabelledControls(page)).toEqual([]);
  });
});
