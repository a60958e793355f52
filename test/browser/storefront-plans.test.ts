/**
 * In a real browser, on the hosted storefront: a recurring product with a monthly plan (7-day
 * trial) and a yearly one shows `$9.00 / month`, `$90.00 / year · save 17 %` and `7-day free
 * trial`; the buyer chooses the yearly plan on the product page (a radio group, no script), the
 * cart keeps and offers it, and checking out makes an order whose line carries that plan; the
 * checkout and test pay pages say today's charge and the next one's date, and paying there with the
 * `Succeeds` test card makes the order paid with a subscription on that plan. axe-core finds nothing
 * serious or critical in light and dark, and a very long name scrolls nothing sideways at 360 px.
 * A plan archived while the cart is open: Checkout answers 400 and the page says why.
 */
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboard } from '../support/seller.js';
import { expectAccessible } from './dashboard-support.js';
import { createProduct, createShop, launchChromium, pagePerTest, startPageServer, type Shop } from './support.js';

// Evaluated in the page; tsconfig.test.json has no DOM types.
declare const localStorage: any;
declare const document: any;

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

type Plan = { id: string; interval: string; intervalCount: number; price: number; trialDays: number; active: boolean };

async function recurringProduct(shop: Shop, name: string) {
  const product = await createProduct(shop.seller, shop.store.id, {
    name,
    price: 9,
    deliveryMethods: ['manualDelivery'],
    plans: [
      { interval: 'month', price: 9, trialDays: 7 },
      { interval: 'year', price: 90 },
    ],
  });
  const [monthly, yearly] = product.plans as Plan[];
  return { ...product, monthly: monthly!, yearly: yearly! };
}

/** How far the page scrolls sideways at 360 px (0: not at all). */
async function overflowAt360(): Promise<number> {
  await page.setViewportSize({ width: 360, height: 740 });
  const overflow = await page.evaluate(
    () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
  );
  await page.setViewportSize({ width: 1280, height: 800 });
  return overflow;
}

const DAY = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' });

describe('a recurring product on the hosted storefront', () => {
  it('shows its plans, takes the yearly one to the cart and the checkout, which says what is charged today and next', async () => {
    const shop = await createShop(server.url);
    // A very long name (one unbroken word in it) must wrap on a phone.
    const name = `Editor Pro ${'Unbreakablesubscriptionname'.repeat(4)}`;
    const product = await recurringProduct(shop, name);

    await page.goto(`${server.url}/s/${shop.store.subdomain}/products/${product.slug}`);
    await page.getByRole('heading', { level: 1, name }).waitFor();
    const plans = page.getByRole('group', { name: 'Plan' });
    const monthly = plans.getByRole('radio', { name: '$9.00 / month' });
    const yearly = plans.getByRole('radio', { name: '$90.00 / year · save 17 %' });
    expect(await monthly.isChecked()).toBe(true);
    // The trial is the monthly plan's description.
    expect(await monthly.getAttribute('aria-describedby')).toBe(`plan-${product.monthly.id}-trial`);
    expect(await page.locator(`#plan-${product.monthly.id}-trial`).textContent()).toBe('7-day free trial');
    await expectAccessible(page, 'product page');
    expect(await overflowAt360()).toBeLessThanOrEqual(0);

    await yearly.check();
    await page.getByRole('button', { name: 'Add to cart' }).click();
    await page.waitForURL(`${server.url}/s/${shop.store.subdomain}/cart`);
    const total = page.locator('#cart-total');
    await expect.poll(() => total.textContent()).toBe('$90.00');
    expect(await page.evaluate((key) => localStorage.getItem(key), `svc-cart:${shop.store.id}`)).toBe(
      JSON.stringify([{ productId: product.id, planId: product.yearly.id, quantity: 1 }]),
    );
    // The cart offers the line's plans too: the monthly one prices it again, then back to yearly.
    const cartPlans = page.getByRole('group', { name: `Plan of ${name}` });
    expect(await cartPlans.getByRole('radio', { name: '$90.00 / year · save 17 %' }).isChecked()).toBe(true);
    await cartPlans.getByRole('radio', { name: '$9.00 / month' }).check();
    await expect.poll(() => total.textContent()).toBe('$9.00');
    await page
      .getByRole('group', { name: `Plan of ${name}` })
      .getByRole('radio', { name: '$90.00 / year · save 17 %' })
      .check();
    await expect.poll(() => total.textContent()).toBe('$90.00');
    await expectAccessible(page, 'cart page');
    expect(await overflowAt360()).toBeLessThanOrEqual(0);

    const before = new Date();
    await page.getByRole('button', { name: 'Checkout' }).click();
    await page.waitForURL(new RegExp(`^${server.url}/checkout/[a-z0-9]+\\?token=`));
    const orderId = new URL(page.url()).pathname.split('/')[2]!;
    // The order's line carries the yearly plan.
    const order = await dashboard(shop.seller, 'GET', `/api/dashboard/stores/${shop.store.id}/orders/${orderId}`);
    expect(order.status, await order.clone().text()).toBe(200);
    const { lines } = (await order.json()) as { lines: Array<{ plan: { id: string } | null }> };
    expect(lines.map((line) => line.plan?.id)).toEqual([product.yearly.id]);

    // Paid now, the next charge falls a year later (the date the page computed between these two instants).
    const next = (from: Date) => {
      const date = new Date(from);
      date.setUTCFullYear(date.getUTCFullYear() + 1);
      return DAY.format(date);
    };
    const charges = page.locator('#charges');
    await charges.waitFor();
    expect([
      `Today: $90.00 · then $90.00 on ${next(before)}, yearly`,
      `Today: $90.00 · then $90.00 on ${next(new Date())}, yearly`,
    ]).toContain(await charges.textContent());
    await expectAccessible(page, 'checkout page');
    expect(await overflowAt360()).toBeLessThanOrEqual(0);

    await page.getByLabel('E-mail').fill(`buyer-${randomBytes(4).toString('hex')}@example.test`);
    await page.getByLabel('Test payment').check();
    await page.getByRole('button', { name: 'Pay $90.00' }).click();
    await page.waitForURL(new RegExp(`^${server.url}/pay/test/`));
    expect(await page.locator('#charges').textContent()).toMatch(
      /^Today: \$90\.00 · then \$90\.00 on \d{1,2} \w{3} \d{4}, yearly$/,
    );

    // The buyer pays with the `Succeeds` test card: the order is paid and starts a subscription.
    await page.getByRole('group', { name: 'Test card' }).getByRole('radio', { name: 'Succeeds', exact: true }).check();
    await page.getByRole('button', { name: 'Pay $90.00' }).click();
    await page.waitForURL(new RegExp(`^${server.url}/orders/${orderId}`));
    const readOrder = async () => {
      const response = await dashboard(shop.seller, 'GET', `/api/dashboard/stores/${shop.store.id}/orders/${orderId}`);
      expect(response.status, await response.clone().text()).toBe(200);
      return (await response.json()) as { status: string; subscriptionId: string | null };
    };
    // Paid; a manual delivery is still the seller's to do, so it stays `processing`.
    await expect.poll(async () => (await readOrder()).status, { timeout: 10_000 }).toBe('processing');
    const paid = await readOrder();
    expect(paid.subscriptionId).toMatch(/^[a-z0-9]+$/);
    const subscription = await dashboard(
      shop.seller,
      'GET',
      `/api/dashboard/stores/${shop.store.id}/subscriptions/${paid.subscriptionId}`,
    );
    expect(subscription.status, await subscription.clone().text()).toBe(200);
    expect(await subscription.json()).toMatchObject({ status: 'active', planId: product.yearly.id, amount: 90 });
  });

  it('says today is free and when the trial ends on the monthly plan', async () => {
    const shop = await createShop(server.url);
    const product = await recurringProduct(shop, 'Editor Trial');
    await page.goto(`${server.url}/s/${shop.store.subdomain}/products/${product.slug}`);
    const before = new Date();
    await page.getByRole('button', { name: 'Add to cart' }).click();
    // The cart says the plan's price; the order of a trial totals 0.
    await expect.poll(() => page.locator('#cart-total').textContent()).toBe('$9.00');
    await page.getByRole('button', { name: 'Checkout' }).click();
    await page.waitForURL(new RegExp(`^${server.url}/checkout/`));
    const trialEnd = (from: Date) => DAY.format(new Date(from.getTime() + 7 * 86_400_000));
    const charges = page.locator('#charges');
    await charges.waitFor();
    expect([
      `Today: $0.00 · then $9.00 on ${trialEnd(before)}, monthly`,
      `Today: $0.00 · then $9.00 on ${trialEnd(new Date())}, monthly`,
    ]).toContain(await charges.textContent());
  });

  it('answers Checkout with 400 and says why when the chosen plan was archived while the cart was open', async () => {
    const shop = await createShop(server.url);
    const product = await recurringProduct(shop, 'Editor Archive');
    await page.goto(`${server.url}/s/${shop.store.subdomain}/products/${product.slug}`);
    await page.getByRole('radio', { name: '$90.00 / year · save 17 %' }).check();
    await page.getByRole('button', { name: 'Add to cart' }).click();
    await expect.poll(() => page.locator('#cart-total').textContent()).toBe('$90.00');

    // The seller archives the yearly plan.
    const archived = await dashboard(
      shop.seller,
      'PATCH',
      `/api/dashboard/stores/${shop.store.id}/products/${product.id}`,
      {
        plans: [
          { ...product.monthly, active: true },
          { ...product.yearly, active: false },
        ],
      },
    );
    expect(archived.status, await archived.clone().text()).toBe(200);

    const answer = page.waitForResponse((response) => /checkout\.checkout|\/api\/v1\/checkout/.test(response.url()));
    await page.getByRole('button', { name: 'Checkout' }).click();
    expect((await answer).status()).toBe(400);
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/no longer sold/);
    expect(page.url()).toBe(`${server.url}/s/${shop.store.subdomain}/cart`);
  });
});
