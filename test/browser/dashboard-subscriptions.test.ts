/**
 * In a real browser: the dashboard's Subscriptions screens (issue 40, item 1). A seller's recurring
 * product (monthly and yearly plans, license keys) is bought in test mode over HTTP by two buyers
 * paying with the test card; in the dashboard (test mode) the seller finds one subscription by the
 * buyer's e-mail, opens it, advances its test clock a month and sees the renewal order in the
 * timeline, changes the plan with the server's preview shown before confirming (and the order then
 * charges exactly that), cancels at the period end in a dialog by keyboard alone and resumes it,
 * pauses it from the period end (still shown after a reload) and undoes that.
 * axe-core finds no serious or critical violation on the list, the page and the dialogs, light and
 * dark. A viewOrders member sees the page and no action; another store's subscription is 404.
 * Change plan is driven by keyboard alone, the Pause and Resume dialogs are axe-checked open, and
 * after the renewal Home's MRR is the two monthly subscriptions' amounts. A staff member with
 * editOrders cancels one. The list's status and product filters live in the URL and filter its
 * rows; past a page (50), Next page shows the rest and puts its cursor in the URL.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct, importKeys } from '../support/catalog.js';
import { previewToken, subscribeOnTestPage } from '../support/preview.js';
import { addStaff, clientIp, dashboardInMode, registerSeller, type Seller } from '../support/seller.js';
import { expectAccessible, signInThroughUi, storeUrl } from './dashboard-support.js';
import { REPO_ROOT } from '../support/server.js';
import { insertSubscriptions } from '../support/subscriptions.js';
import { createShop, launchChromium, pagePerTest, SCREENSHOT_DIR, startPageServer, type Shop } from './support.js';

// Evaluated in the page; tsconfig.test.json has no DOM types.
declare const document: any;
declare const localStorage: any;

let server: Awaited<ReturnType<typeof startPageServer>>;
let browser: Browser;
let page: Page;
let context: BrowserContext;

beforeAll(async () => {
  [server, browser] = await Promise.all([startPageServer(), launchChromium()]);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});
pagePerTest(
  () => ({ browser, serviceUrl: server.url }),
  (opened) => ({ page, context } = opened),
);

const unique = () => randomBytes(4).toString('hex');

async function json(response: Response, status: number) {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  return text ? JSON.parse(text) : undefined;
}

interface RecurringShop extends Shop {
  product: { id: string; plans: Array<{ id: string; interval: string; price: number }> };
  preview: string;
}

/** A store with a test-mode product on a monthly (9.00) and a yearly (90.00) plan, delivering license keys. */
/** The subscription as the owner reads it over the dashboard API, in test mode. */
async function subscriptionOf(shop: RecurringShop, subscriptionId: string) {
  return json(
    await dashboardInMode(
      shop.seller,
      'test',
      'GET',
      `/api/dashboard/stores/${shop.store.id}/subscriptions/${subscriptionId}`,
    ),
    200,
  );
}

async function recurringShop(name: string, productName = 'Editor Pro'): Promise<RecurringShop> {
  const shop = await createShop(server.url, name);
  const product = (await createProduct(
    shop.seller,
    shop.store.id,
    {
      name: productName,
      price: 9,
      deliveryMethods: ['licenseKeys'],
      plans: [
        { interval: 'month', intervalCount: 1, price: 9, trialDays: 0 },
        { interval: 'year', intervalCount: 1, price: 90, trialDays: 0 },
      ],
    },
    'test',
  )) as unknown as RecurringShop['product'];
  const keys = Array.from({ length: 4 }, () => `EDIT-${randomBytes(8).toString('hex').toUpperCase()}`);
  await importKeys(shop.seller, shop.store.id, product.id, keys, 'test');
  return { ...shop, product, preview: await previewToken(shop.seller, shop.store.id) };
}

/** A buyer checks out the monthly plan in test mode and pays on the test gateway's page with the `Succeeds` card. */
async function subscribe(
  shop: RecurringShop,
  card = 'succeeds',
): Promise<{ email: string; subscriptionId: string; key: string }> {
  const email = `buyer-${unique()}@example.test`;
  const monthly = shop.product.plans.find((plan) => plan.interval === 'month')!;
  const checkout = await subscribeOnTestPage(
    server.url,
    { storeId: shop.store.id, productId: shop.product.id, planId: monthly.id, email, preview: shop.preview, card },
    clientIp,
  );
  const token = checkout.token;
  const delivered = await json(await fetch(`${server.url}/api/orders/${checkout.orderId}/keys?token=${token}`), 200);
  const order = await json(
    await dashboardInMode(
      shop.seller,
      'test',
      'GET',
      `/api/dashboard/stores/${shop.store.id}/orders/${checkout.orderId}`,
    ),
    200,
  );
  expect(order).toMatchObject({ billingReason: 'subscription_create', status: 'completed' });
  return { email, subscriptionId: order.subscriptionId as string, key: delivered.keys[0].key as string };
}

/** The seller signed in with the dashboard in test mode (its mode lives in localStorage), on `url`. */
async function signInInTestMode(seller: Seller, url: string): Promise<void> {
  await context.addInitScript(() => localStorage.setItem('svc.dashboard.mode', 'test'));
  await page.goto(url);
  await signInThroughUi(page, seller);
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
}

/** The entries of the page's orders timeline, as text. */
const timeline = () => page.getByRole('list', { name: 'Orders of this subscription' }).getByRole('listitem');

const isFocused = (locator: Locator) =>
  locator.evaluate((element: any) => element === element.ownerDocument.activeElement);

/** Presses Tab until `locator` has the focus (at most `steps` times), and expects it to. */
async function tabTo(locator: Locator, steps = 60): Promise<void> {
  for (let step = 0; step < steps && !(await isFocused(locator)); step++) await page.keyboard.press('Tab');
  expect(await isFocused(locator)).toBe(true);
}

describe('dashboard: subscriptions', () => {
  it('finds a subscription by e-mail, advances its clock to a renewal, changes its plan at the previewed amount, cancels by keyboard', async () => {
    const shop = await recurringShop('Editor Works');
    const buyer = await subscribe(shop);
    const other = await subscribe(shop);
    const listUrl = storeUrl(server.url, shop.store.id, '/subscriptions');
    await signInInTestMode(shop.seller, listUrl);
    await page.getByRole('heading', { level: 1, name: 'Subscriptions' }).waitFor();

    // `Subscriptions` sits in Main right after `Orders`.
    const nav = await page.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents();
    expect(nav.indexOf('Subscriptions')).toBe(nav.indexOf('Orders') + 1);

    const table = page.getByRole('table', { name: 'Subscriptions' });
    await table.getByRole('link', { name: buyer.email }).waitFor();
    await table.getByRole('link', { name: other.email }).waitFor();
    for (const header of ['Customer', 'Plan', 'Status', 'Amount', 'Next charge'])
      await expect(table.getByRole('columnheader', { name: header }).count()).resolves.toBe(1);
    await expectAccessible(page, 'Subscriptions list');

    // The e-mail filter goes into the URL and leaves one row.
    await page.getByLabel('Customer e-mail').fill(buyer.email.toUpperCase());
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL((url) => url.searchParams.get('email') === buyer.email);
    await expect.poll(() => table.getByRole('link', { name: other.email }).count()).toBe(0);
    const row = table.getByRole('row').filter({ has: page.getByRole('link', { name: buyer.email }) });
    await expect(row.getByRole('cell').nth(2).textContent()).resolves.toBe('Active');
    await expect(row.getByRole('cell').nth(3).textContent()).resolves.toBe('$9.00 / month');

    // The page: terms, the license (masked), the first payment in the timeline.
    await table.getByRole('link', { name: buyer.email }).click();
    await page.getByRole('heading', { level: 1, name: 'Editor Pro' }).waitFor();
    const summary = page.getByRole('region', { name: 'Summary' });
    await summary
      .getByRole('definition')
      .filter({ hasText: /^Monthly$/ })
      .waitFor();
    await page.getByRole('region', { name: 'Payment method' }).getByText('Test', { exact: true }).waitFor();
    await page.getByRole('region', { name: 'Licenses' }).getByRole('link').first().waitFor();
    expect(await page.content()).not.toContain(buyer.key);
    await expect.poll(() => timeline().allTextContents()).toEqual([expect.stringContaining('First payment')]);
    await expectAccessible(page, 'subscription page');

    // Advance the test clock a month (the field's suggestion: a day past the period's end): a renewal.
    const before = await subscriptionOf(shop, buyer.subscriptionId);
    await page.getByRole('button', { name: 'Advance', exact: true }).click();
    await page.getByText('1 order created').waitFor();
    await page.getByRole('table', { name: 'Orders the clock created' }).getByText('Renewal').waitFor();
    await expect.poll(() => timeline().count()).toBe(2);
    expect(await timeline().first().textContent()).toContain('Renewal');
    const renewed = await subscriptionOf(shop, buyer.subscriptionId);
    expect(renewed.currentPeriodStart).toBe(before.currentPeriodEnd);

    // Home, in the same (test) mode: the MRR is what the two monthly subscriptions charge a month.
    const second = await subscriptionOf(shop, other.subscriptionId);
    expect([renewed, second]).toMatchObject([
      { interval: 'month', intervalCount: 1, amount: 9 },
      { interval: 'month', intervalCount: 1, amount: 9 },
    ]);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Home', exact: true }).click();
    const mrr = page
      .getByRole('region', { name: 'Subscriptions' })
      .locator('dt', { hasText: /^MRR$/ })
      .locator('xpath=following-sibling::dd[1]');
    await expect.poll(() => mrr.textContent(), { timeout: 15_000 }).toBe('$18.00');
    await page.goBack();
    await page.getByRole('heading', { level: 1, name: 'Editor Pro' }).waitFor();
    await expect.poll(() => timeline().count()).toBe(2);

    // Change plan: the preview (the server's) is shown before confirming; the change then charges it.
    const yearly = shop.product.plans.find((plan) => plan.interval === 'year')!;
    const preview = await json(
      await dashboardInMode(
        shop.seller,
        'test',
        'GET',
        `/api/dashboard/stores/${shop.store.id}/subscriptions/${buyer.subscriptionId}/preview-update?planId=${yearly.id}`,
      ),
      200,
    );
    expect(preview.amountDue).toBeGreaterThan(0);
    const amountDue = `$${preview.amountDue.toFixed(2)}`;
    // By keyboard alone: Tab to the trigger, Enter; Tab to the plan, ArrowDown to the yearly one;
    // Tab to the confirming button, Space.
    await tabTo(page.getByRole('button', { name: 'Change plan' }));
    await page.keyboard.press('Enter');
    const change = page.getByRole('dialog', { name: 'Change plan' });
    await change.waitFor();
    expect(await change.evaluate((element: any) => element.contains(element.ownerDocument.activeElement))).toBe(true);
    const planField = change.getByLabel('Plan');
    await planField.locator(`option[value="${yearly.id}"]`).waitFor({ state: 'attached' });
    await tabTo(planField, 10);
    await page.keyboard.press('ArrowDown');
    expect(await planField.inputValue()).toBe(yearly.id);
    const charged = change.getByRole('definition').filter({ hasText: amountDue });
    await charged.waitFor();
    await expectAccessible(page, 'change plan dialog');
    const confirmChange = change.getByRole('button', { name: 'Change plan' });
    await expect.poll(() => confirmChange.isEnabled()).toBe(true);
    await tabTo(confirmChange, 10);
    await page.keyboard.press('Space');
    await change.waitFor({ state: 'detached' });
    await expect.poll(() => timeline().count()).toBe(3);
    expect(await timeline().first().textContent()).toContain('Plan change');
    expect(await timeline().first().textContent()).toContain(amountDue);
    await summary
      .getByRole('definition')
      .filter({ hasText: /^Yearly$/ })
      .waitFor();

    // Cancel at the period end, by keyboard alone: the trigger, then Tab to the confirming button.
    await page.getByRole('button', { name: 'Cancel subscription' }).focus();
    await page.keyboard.press('Enter');
    const cancel = page.getByRole('dialog', { name: 'Cancel this subscription?' });
    await cancel.waitFor();
    expect(await cancel.evaluate((element: any) => element.contains(element.ownerDocument.activeElement))).toBe(true);
    await expectAccessible(page, 'cancel dialog');
    expect(await cancel.getByRole('radio', { name: /At period end/ }).isChecked()).toBe(true);
    const focused = () => page.evaluate(() => document.activeElement?.textContent?.trim() ?? '');
    for (let step = 0; step < 10 && (await focused()) !== 'Cancel subscription'; step++)
      await page.keyboard.press('Tab');
    expect(await focused()).toBe('Cancel subscription');
    await page.keyboard.press('Enter');
    await cancel.waitFor({ state: 'detached' });
    await summary
      .getByRole('definition')
      .filter({ hasText: /^Active \(ends on / })
      .waitFor();
    const canceled = await subscriptionOf(shop, buyer.subscriptionId);
    expect(canceled).toMatchObject({
      status: 'active',
      cancelAtPeriodEnd: true,
      cancellationReason: 'requested_by_merchant',
    });

    // Resume undoes it.
    await page.getByRole('button', { name: 'Resume subscription' }).click();
    const resume = page.getByRole('alertdialog', { name: 'Resume this subscription?' });
    await resume.waitFor();
    await expectAccessible(page, 'resume dialog');
    await resume.getByRole('button', { name: 'Resume subscription' }).click();
    await resume.waitFor({ state: 'detached' });
    await summary
      .getByRole('definition')
      .filter({ hasText: /^Active$/ })
      .waitFor();
    await page.getByRole('button', { name: 'Cancel subscription' }).waitFor();

    // Pause from the period end: said on the page, and still said after a reload, which reads only
    // the stored schedule (issue 40). Resume then undoes the scheduled pause.
    await page.getByRole('button', { name: 'Pause subscription' }).click();
    const pause = page.getByRole('alertdialog', { name: 'Pause this subscription?' });
    await pause.waitFor();
    await expectAccessible(page, 'pause dialog');
    await pause.getByRole('button', { name: 'Pause subscription' }).click();
    await pause.waitFor({ state: 'detached' });
    const pausesOn = summary.getByRole('definition').filter({ hasText: /^Active \(pauses on / });
    await pausesOn.waitFor();
    await page.reload();
    await pausesOn.waitFor();
    await summary
      .getByRole('definition')
      .filter({ hasText: /^Pauses on / })
      .waitFor();
    expect(await page.getByRole('button', { name: 'Pause subscription' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Resume subscription' }).click();
    const unpause = page.getByRole('alertdialog', { name: 'Resume this subscription?' });
    expect(await unpause.textContent()).toContain('The scheduled pause is undone');
    await unpause.getByRole('button', { name: 'Resume subscription' }).click();
    await unpause.waitFor({ state: 'detached' });
    await summary
      .getByRole('definition')
      .filter({ hasText: /^Active$/ })
      .waitFor();
    await page.getByRole('button', { name: 'Pause subscription' }).waitFor();
  }, 150_000);

  it("shows a viewOrders member the subscription and no action; another store's subscription is 404", async () => {
    const shop = await recurringShop('Viewer Works');
    const buyer = await subscribe(shop);
    const elsewhere = await recurringShop('Other Works');
    const foreign = await subscribe(elsewhere);
    const viewer = await registerSeller(server.url);
    await addStaff(shop.seller, shop.store.id, viewer, ['viewOrders']);

    await signInInTestMode(viewer, storeUrl(server.url, shop.store.id, `/subscriptions/${buyer.subscriptionId}`));
    await page.getByRole('heading', { level: 1, name: 'Editor Pro' }).waitFor();
    await expect.poll(() => timeline().count()).toBe(1);
    for (const name of ['Cancel subscription', 'Resume subscription', 'Pause subscription', 'Change plan', 'Advance'])
      await expect(page.getByRole('button', { name }).count(), name).resolves.toBe(0);
    await expect(page.getByRole('region', { name: 'Test clock' }).count()).resolves.toBe(0);
    const forced = await dashboardInMode(
      viewer,
      'test',
      'POST',
      `/api/dashboard/stores/${shop.store.id}/subscriptions/${buyer.subscriptionId}/cancel`,
      {},
    );
    expect(forced.status).toBe(403);

    // Another store's subscription under this store's address: not found, in the page and the API.
    await page.goto(storeUrl(server.url, shop.store.id, `/subscriptions/${foreign.subscriptionId}`));
    await page.getByRole('alert').filter({ hasText: 'No such subscription.' }).waitFor();
    const missing = await dashboardInMode(
      shop.seller,
      'test',
      'GET',
      `/api/dashboard/stores/${shop.store.id}/subscriptions/${foreign.subscriptionId}`,
    );
    expect(missing.status).toBe(404);
    const preview = await dashboardInMode(
      shop.seller,
      'test',
      'GET',
      `/api/dashboard/stores/${shop.store.id}/subscriptions/${foreign.subscriptionId}/preview-update?quantity=2`,
    );
    expect(preview.status).toBe(404);
  }, 120_000);

  it('lets a staff member with editOrders (not the owner) cancel a subscription from its page', async () => {
    const shop = await recurringShop('Staff Works');
    const buyer = await subscribe(shop);
    const editor = await registerSeller(server.url);
    await addStaff(shop.seller, shop.store.id, editor, ['viewOrders', 'editOrders']);

    await signInInTestMode(editor, storeUrl(server.url, shop.store.id, `/subscriptions/${buyer.subscriptionId}`));
    await page.getByRole('heading', { level: 1, name: 'Editor Pro' }).waitFor();
    await page.getByRole('button', { name: 'Cancel subscription' }).click();
    const cancel = page.getByRole('dialog', { name: 'Cancel this subscription?' });
    await cancel.waitFor();
    expect(await cancel.getByRole('radio', { name: /At period end/ }).isChecked()).toBe(true);
    await cancel.getByLabel('Reason (optional)').selectOption('requested_by_customer');
    await cancel.getByRole('button', { name: 'Cancel subscription' }).click();
    await cancel.waitFor({ state: 'detached' });
    await page
      .getByRole('region', { name: 'Summary' })
      .getByRole('definition')
      .filter({ hasText: /^Active \(ends on / })
      .waitFor();
    await page.getByRole('button', { name: 'Resume subscription' }).waitFor();
    // The owner reads it back: canceled at the period end, for the reason the member gave.
    const canceled = await subscriptionOf(shop, buyer.subscriptionId);
    expect(canceled).toMatchObject({
      status: 'active',
      cancelAtPeriodEnd: true,
      cancellationReason: 'requested_by_customer',
    });
  }, 90_000);

  it('keeps the status and product filters in the URL, and pages on with Next page and a cursor', async () => {
    const shop = await recurringShop('Many Works');
    const tag = unique();
    const lite = (await createProduct(
      shop.seller,
      shop.store.id,
      {
        name: 'Editor Lite',
        price: 4,
        deliveryMethods: ['licenseKeys'],
        plans: [{ interval: 'month', intervalCount: 1, price: 4, trialDays: 0 }],
      },
      'test',
    )) as unknown as RecurringShop['product'];
    const monthly = shop.product.plans.find((plan) => plan.interval === 'month')!;
    // More Editor Pro subscriptions than one page holds (the API's default page, 50: the screen
    // sends no limit and its URL carries none), and Editor Lite ones, one of them incomplete.
    const PAGE = 50;
    const proEmails = Array.from({ length: PAGE + 1 }, (_, i) => `pro-${i}-${tag}@example.test`);
    const liteEmails = [`lite-0-${tag}@example.test`, `lite-1-${tag}@example.test`];
    const incompleteEmail = `lite-incomplete-${tag}@example.test`;
    const pro = { livemode: false, productId: shop.product.id, planId: monthly.id, productName: 'Editor Pro' };
    const litePlan = {
      livemode: false,
      productId: lite.id,
      planId: lite.plans[0]!.id,
      productName: 'Editor Lite',
      unitPriceMinor: 400,
    };
    await insertSubscriptions(server.db.url, shop.store.id, [
      ...proEmails.map((customerEmail) => ({ ...pro, customerEmail })),
      ...liteEmails.map((customerEmail) => ({ ...litePlan, customerEmail })),
      { ...litePlan, customerEmail: incompleteEmail, activate: false },
    ]);

    await signInInTestMode(shop.seller, storeUrl(server.url, shop.store.id, '/subscriptions'));
    await page.getByRole('heading', { level: 1, name: 'Subscriptions' }).waitFor();
    const table = page.getByRole('table', { name: 'Subscriptions' });
    const emails = async () => (await table.getByRole('link').allTextContents()).sort();
    const filters = page.getByRole('search', { name: 'Filter subscriptions' });

    // Active Editor Lite: both filters in the URL, the two active Lite rows and nothing else.
    await filters.getByLabel('Status').selectOption('active');
    await filters.getByLabel('Product').selectOption(lite.id);
    await filters.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(
      (url) => url.searchParams.get('status') === 'active' && url.searchParams.get('productId') === lite.id,
    );
    await expect.poll(emails).toEqual([...liteEmails].sort());

    // Incomplete: only the incomplete one.
    await filters.getByLabel('Status').selectOption('incomplete');
    await filters.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL((url) => url.searchParams.get('status') === 'incomplete');
    expect(new URL(page.url()).searchParams.get('productId')).toBe(lite.id);
    await expect.poll(emails).toEqual([incompleteEmail]);

    // Active Editor Pro: a full first page, then Next page carries the cursor (and the filters) and
    // shows the one row left, on no earlier page.
    await filters.getByLabel('Status').selectOption('active');
    await filters.getByLabel('Product').selectOption(shop.product.id);
    await filters.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(
      (url) => url.searchParams.get('status') === 'active' && url.searchParams.get('productId') === shop.product.id,
    );
    await expect.poll(async () => (await emails()).length).toBe(PAGE);
    const first = await emails();
    expect(first.every((email) => proEmails.includes(email))).toBe(true);
    expect(new URL(page.url()).searchParams.has('cursor')).toBe(false);
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Next page' }).click();
    await page.waitForURL((url) => !!url.searchParams.get('cursor'));
    const url = new URL(page.url());
    expect([url.searchParams.get('status'), url.searchParams.get('productId')]).toEqual(['active', shop.product.id]);
    await expect.poll(async () => (await emails()).length).toBe(1);
    const second = await emails();
    expect(first).not.toContain(second[0]);
    expect([...first, ...second].sort()).toEqual([...proEmails].sort());
    expect(await page.getByRole('link', { name: 'Next page' }).count()).toBe(0);
    await page.getByRole('link', { name: 'First page' }).waitFor();
  }, 120_000);

  it("shows a declined change's 402 in the dialog, in the server's words, and changes nothing", async () => {
    const shop = await recurringShop('Declined Works');
    const buyer = await subscribe(shop, 'declines_renewals');
    await signInInTestMode(shop.seller, storeUrl(server.url, shop.store.id, `/subscriptions/${buyer.subscriptionId}`));
    await page.getByRole('heading', { level: 1, name: 'Editor Pro' }).waitFor();
    await page.getByRole('button', { name: 'Change plan' }).click();
    const change = page.getByRole('dialog', { name: 'Change plan' });
    await change.getByLabel('Seats').fill('3');
    await change.getByRole('definition').filter({ hasText: '$27.00 / month' }).waitFor();
    await change.getByRole('button', { name: 'Change plan' }).click();
    await change
      .getByRole('alert')
      .filter({ hasText: 'The saved payment method was declined for the difference; nothing was changed.' })
      .waitFor();
    const after = await subscriptionOf(shop, buyer.subscriptionId);
    expect(after).toMatchObject({ quantity: 1, amount: 9 });
  }, 90_000);

  it('fits a phone and a desktop, light and dark: no sideways scroll at 390 and 360 px, even with a long unbroken product name', async () => {
    const shop = await recurringShop(
      'Shop',
      `Editor Pro Ultimate Collaboration Suite for Distributed Documentation Teams ${'Unbreakablesubscriptionname'.repeat(3)}`,
    );
    const buyer = await subscribe(shop);
    await subscribe(shop);
    await signInInTestMode(shop.seller, storeUrl(server.url, shop.store.id, '/subscriptions'));
    await page.getByRole('heading', { level: 1, name: 'Subscriptions' }).waitFor();
    // SVC_SCREENSHOTS=after keeps them in docs/screenshots; otherwise they go where failed runs' go.
    const out = process.env.SVC_SCREENSHOTS ? path.join(REPO_ROOT, 'docs/screenshots') : SCREENSHOT_DIR;
    mkdirSync(out, { recursive: true });
    const screens = [
      { name: 'list', url: storeUrl(server.url, shop.store.id, '/subscriptions') },
      { name: 'page', url: storeUrl(server.url, shop.store.id, `/subscriptions/${buyer.subscriptionId}`) },
    ];
    for (const screen of screens) {
      await page.goto(screen.url);
      await page.locator('main h1').first().waitFor();
      await expect
        .poll(
          () =>
            page
              .getByRole('status')
              .filter({ hasText: /Loading/ })
              .count(),
          { timeout: 15_000 },
        )
        .toBe(0);
      for (const width of [1280, 390, 360]) {
        await page.setViewportSize({ width, height: width > 600 ? 800 : 844 });
        for (const colorScheme of ['light', 'dark'] as const) {
          await page.emulateMedia({ colorScheme });
          const overflow = await page.evaluate(
            () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
          );
          expect(overflow, `${screen.name} scrolls sideways at ${width} px (${colorScheme})`).toBeLessThanOrEqual(0);
          await page.screenshot({
            path: path.join(out, `dashboard-subscriptions-${screen.name}-${width}-${colorScheme}.png`),
          });
        }
      }
      await page.emulateMedia({ colorScheme: 'light' });
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  }, 120_000);
});
