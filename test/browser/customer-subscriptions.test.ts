/**
 * In a real browser: the buyer's subscriptions in their customer area (issue 40, item 4). A buyer
 * subscribes with a test card, signs in to the test-mode area with the e-mailed code, cancels at
 * the period end in the dialog (by keyboard), sees "Ends on <date>", resumes; saves a new card on
 * the test gateway's page (axe-clean, light and dark); after a reload sees a pause the seller scheduled ("Pauses on <date>").
 * With `Declines renewals`, after the seller advances the test clock the page shows `Pay now`; its
 * link is the payment_failed mail's, which still opens the checkout after the press, and paying
 * there with `Succeeds` brings it back to active. A subscription the seller ended while the page
 * was open refuses a new card, said on the page. axe-clean light and dark; no sideways scrolling at
 * 360 px with a very long product name; screenshots at 1280 and 390 px in both schemes.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { previewToken, subscribeOnTestPage } from '../support/preview.js';
import { createKeyFor } from '../support/seller.js';
import { expectAccessible } from './dashboard-support.js';
import {
  createShop,
  launchChromium,
  pagePerTest,
  SCREENSHOT_DIR,
  startPageServer,
  unlabelledControls,
  watchPage,
  type Shop,
} from './support.js';

// Evaluated in the page; tsconfig.test.json has no DOM types.
declare const document: any;

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

const LONG_NAME =
  'Editor Pro Ultimate Studio Edition with Extended Cloud Synchronisation, Priority Support and Unlimited Workspaces';
const DAY = 86_400_000;

async function json(response: Response, status: number) {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  return text ? JSON.parse(text) : undefined;
}

const ip = () => `198.51.100.${1 + (randomBytes(1)[0]! % 250)}`;

interface Seller {
  shop: Shop;
  key: string;
  preview: string;
  product: { id: string; plans: Array<{ id: string }> };
}

function merchant(seller: Seller, method: string, route: string, body?: unknown): Promise<Response> {
  return fetch(`${server.url}/api/merchant/v1/stores/${seller.shop.store.id}${route}`, {
    method,
    headers: {
      accept: 'application/json',
      authorization: `Bearer ${seller.key}`,
      'x-forwarded-for': ip(),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/** A store with a monthly test product at $9.00 (no trial) and a test key to steer its subscriptions. */
async function seller(): Promise<Seller> {
  const shop = await createShop(server.url, 'Night Owl Software');
  const key = (
    await createKeyFor(shop.seller, {
      scopes: ['product:read', 'product:write', 'order:read', 'subscription:read', 'subscription:write'],
      storeIds: [shop.store.id],
      mode: 'test',
    })
  ).key;
  const partial = { shop, key, preview: await previewToken(shop.seller, shop.store.id) } as Seller;
  partial.product = await json(
    await merchant(partial, 'POST', '/products', {
      name: LONG_NAME,
      price: 9,
      deliveryMethods: ['deliveryInstructions'],
      deliveryInstructions: 'Sign in to the editor with your e-mail.',
      plans: [{ interval: 'month', intervalCount: 1, price: 9, trialDays: 0 }],
    }),
    201,
  );
  return partial;
}

/** The buyer checks out the plan with the test gateway and pays on its page with `card`, over HTTP. */
async function subscribe(s: Seller, email: string, card: string): Promise<string> {
  const checkout = await subscribeOnTestPage(
    server.url,
    {
      storeId: s.shop.store.id,
      productId: s.product.id,
      planId: s.product.plans[0]!.id,
      email,
      preview: s.preview,
      card,
    },
    ip,
  );
  const order = await json(await merchant(s, 'GET', `/orders/${checkout.orderId}`), 200);
  return order.subscriptionId as string;
}

/** The code from the newest sign-in e-mail to `email` in the development mailbox. */
async function codeFor(email: string): Promise<string> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const { emails } = await (await fetch(`${server.url}/dev/mailbox.json`)).json();
    const mail = emails.find(
      (m: { to: string; subject: string }) => m.to === email && m.subject.startsWith('Your sign-in code'),
    );
    const code = mail && /\b(\d{6})\b/.exec(mail.text)?.[1];
    if (code) return code;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no code e-mailed to ${email}`);
}

/** The pay link of the payment_failed mail to `email` in the development mailbox. */
async function payLinkFor(email: string): Promise<string> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const { emails } = await (await fetch(`${server.url}/dev/mailbox.json`)).json();
    const mail = emails.find(
      (m: { to: string; subject: string }) => m.to === email && m.subject.startsWith('Payment failed'),
    );
    const link = mail && new RegExp(`${server.url}/checkout/[a-z0-9]+\\?token=[0-9a-f]+`).exec(mail.text)?.[0];
    if (link) return link;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no payment_failed link e-mailed to ${email}`);
}

/** The status `POST /api/checkout/enter` answers for a checkout link's order and token. */
async function opensCheckout(link: string): Promise<number> {
  const url = new URL(link);
  const response = await fetch(`${server.url}/api/checkout/enter`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': ip() },
    body: JSON.stringify({ orderId: url.pathname.split('/').pop(), token: url.searchParams.get('token') }),
  });
  await response.arrayBuffer();
  return response.status;
}

async function signIn(s: Seller, email: string): Promise<void> {
  await page.goto(`${server.url}/account/${s.shop.store.subdomain}?mode=test`);
  await page.getByLabel('E-mail').fill(email);
  await page.getByRole('button', { name: 'Send me a code' }).click();
  await page.getByLabel(/^Code/).waitFor();
  await page.getByLabel(/^Code/).fill(await codeFor(email));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Subscriptions' }).waitFor();
}

/** "March 5, 2027", as the page writes a day (the browser runs in this machine's time zone). */
const day = (iso: string) => new Date(iso).toLocaleDateString('en', { dateStyle: 'long' });

const card = (name = LONG_NAME) => page.getByRole('listitem').filter({ has: page.getByRole('heading', { name }) });

/** The page at 1280 and 390 px in both schemes, and no sideways scrolling at 360 px. */
async function shots(name: string): Promise<void> {
  for (const width of [360, 390, 1280]) {
    await page.setViewportSize({ width, height: 900 });
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect(overflow, `${name} scrolls sideways at ${width} px`).toBeLessThanOrEqual(0);
    if (width === 360) continue;
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}-${width}-${colorScheme}.png`), fullPage: true });
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1280, height: 800 });
}

describe("the buyer's subscriptions in the customer area", () => {
  it('cancels at the period end by keyboard, shows the end date, resumes, and saves a new card', async () => {
    const s = await seller();
    const email = `owl-${randomBytes(4).toString('hex')}@example.test`;
    const subscriptionId = await subscribe(s, email, 'succeeds');
    const subscription = await json(await merchant(s, 'GET', `/subscriptions/${subscriptionId}`), 200);

    await signIn(s, email);
    expect(await page.getByText('Test mode: your test orders and subscriptions.').count()).toBe(1);
    const mine = card();
    await expect.poll(() => mine.getByText('Active', { exact: true }).count()).toBe(1);
    expect(await mine.getByText(`Next charge $9.00 on ${day(subscription.currentPeriodEnd)}`).count()).toBe(1);
    expect(await mine.getByText('$9.00 / month').count()).toBe(1);
    expect(await unlabelledControls(page)).toEqual([]);
    await expectAccessible(page, 'customer subscriptions');
    await shots('customer-subscriptions-active');

    // The first payment's order opens from the subscription (its receipt and goods).
    await mine.getByText(/^Receipts and orders/).click();
    const first = mine.getByRole('link', { name: /^ORD-\d+: First payment$/ });
    expect(await first.getAttribute('href')).toMatch(/^\/orders\/[a-z0-9]+$/);

    // Cancel by keyboard: the dialog takes the focus, Escape closes it and gives the focus back.
    const cancel = mine.getByRole('button', { name: 'Cancel subscription' });
    await cancel.focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    expect(await page.evaluate(() => document.activeElement?.tagName)).toBe('TEXTAREA');
    await expectAccessible(page, 'cancel dialog');
    await page.keyboard.press('Escape');
    await expect.poll(() => dialog.count()).toBe(0);
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel subscription');
    await page.keyboard.press('Enter');
    await dialog.waitFor();
    await page.keyboard.type('Switching to another editor.');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    const ends = `Ends on ${day(subscription.currentPeriodEnd)}`;
    await mine.getByText(ends).waitFor();
    expect(await mine.getByText('Canceling', { exact: true }).count()).toBe(1);
    expect(await page.getByRole('status').textContent()).toContain('is canceled: it ends on');
    expect(await mine.getByRole('button', { name: 'Cancel subscription' }).count()).toBe(0);
    const canceled = await json(await merchant(s, 'GET', `/subscriptions/${subscriptionId}`), 200);
    expect(canceled).toMatchObject({
      cancelAtPeriodEnd: true,
      cancellationReason: 'requested_by_customer',
      cancellationComment: 'Switching to another editor.',
    });
    await expectAccessible(page, 'customer subscriptions, canceling');
    await shots('customer-subscriptions-canceling');

    await mine.getByRole('button', { name: 'Resume subscription' }).click();
    await mine.getByText(`Next charge $9.00 on ${day(subscription.currentPeriodEnd)}`).waitFor();
    expect(await mine.getByText(ends).count()).toBe(0);
    expect((await json(await merchant(s, 'GET', `/subscriptions/${subscriptionId}`), 200)).cancelAtPeriodEnd).toBe(
      false,
    );

    // A new card on the test gateway's own page, then back on the account page.
    await mine.getByRole('button', { name: 'Update payment method' }).click();
    await page.waitForURL(new RegExp(`/pay/test/method/${subscriptionId}\\?token=`));
    await page.getByRole('heading', { name: 'Update payment method' }).waitFor();
    await expectAccessible(page, 'test gateway: update payment method');
    await page
      .getByRole('group', { name: 'Test card' })
      .getByRole('radio', { name: 'Declines renewals', exact: true })
      .check();
    await page.getByRole('button', { name: 'Save card' }).click();
    await page.waitForURL(new RegExp(`/account/${s.shop.store.subdomain}\\?mode=test$`));
    await page.getByText('Your new payment method is saved: it pays the next renewals.').waitFor();

    // The seller schedules a pause from the period end: the page, loaded again, says when it pauses
    // and when it charges again (issue 40: the buyer's view did not carry the schedule).
    const resumesAt = new Date(Date.parse(subscription.currentPeriodEnd) + 14 * DAY).toISOString();
    await json(await merchant(s, 'POST', `/subscriptions/${subscriptionId}/pause`, { resumesAt }), 200);
    await page.reload();
    await card()
      .getByText(`Pauses on ${day(subscription.currentPeriodEnd)}; next charge $9.00 on ${day(resumesAt)}`)
      .waitFor();

    // The seller ends it while the page is open: a new card is refused, and the page says why.
    await json(await merchant(s, 'POST', `/subscriptions/${subscriptionId}/cancel`, { atPeriodEnd: false }), 200);
    await card().getByRole('button', { name: 'Update payment method' }).click();
    const refused = card().getByRole('alert');
    await refused.waitFor();
    expect(await refused.textContent()).toContain('This subscription is canceled');
  });

  it('shows Pay now on a past-due subscription after the clock moves; paying with Succeeds makes it active', async () => {
    const s = await seller();
    const email = `late-${randomBytes(4).toString('hex')}@example.test`;
    const subscriptionId = await subscribe(s, email, 'declines_renewals');
    const subscription = await json(await merchant(s, 'GET', `/subscriptions/${subscriptionId}`), 200);
    const advanced = await json(
      await merchant(s, 'POST', `/subscriptions/${subscriptionId}/advance`, {
        to: new Date(Date.parse(subscription.currentPeriodEnd) + DAY / 2).toISOString(),
      }),
      200,
    );
    expect(advanced.subscription.status).toBe('past_due');

    await signIn(s, email);
    const mine = card();
    await mine.getByText('Past due', { exact: true }).waitFor();
    expect(await mine.getByText(/^The last payment failed/).count()).toBe(1);
    await expectAccessible(page, 'customer subscriptions, past due');
    await shots('customer-subscriptions-past-due');

    // The payment_failed mail's link opens the renewal's checkout before and after Pay now: pressing
    // it gives that same link and revokes nothing (issue 40). The buyer then pays by the mail.
    const mailed = await payLinkFor(email);
    expect(await opensCheckout(mailed)).toBe(200);
    await mine.getByRole('button', { name: 'Pay now' }).click();
    let pressed = '';
    await page.waitForURL((url) => {
      if (url.pathname.startsWith('/checkout/') && url.searchParams.has('token')) pressed = url.href;
      return pressed !== '';
    });
    expect(pressed).toBe(mailed);
    expect(await opensCheckout(mailed)).toBe(200);
    expect(await opensCheckout(`${mailed.slice(0, -1)}${mailed.endsWith('0') ? '1' : '0'}`)).toBe(403);
    await page.goto(mailed);
    await page.getByLabel('Test payment').check();
    await page.getByRole('button', { name: 'Pay $9.00' }).click();
    await page.waitForURL(new RegExp(`^${server.url}/pay/test/`));
    await page.getByRole('group', { name: 'Test card' }).getByRole('radio', { name: 'Succeeds', exact: true }).check();
    await page.getByRole('button', { name: 'Pay $9.00' }).click();
    await page.waitForURL(new RegExp(`^${server.url}/orders/`));

    await page.goto(`${server.url}/account/${s.shop.store.subdomain}?mode=test`);
    await card().getByText('Active', { exact: true }).waitFor();
    expect(await card().getByRole('button', { name: 'Pay now' }).count()).toBe(0);
    expect((await json(await merchant(s, 'GET', `/subscriptions/${subscriptionId}`), 200)).status).toBe('active');
    expect(watch.violations).toEqual([]);
  });
});
