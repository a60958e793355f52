/**
 * In a real browser: the dashboard's Settings, Staff and Home screens. The owner renames the store
 * and changes its payment methods (a reload shows them saved); invites a registered user with only
 * View orders, who then sees no Save and no invite form, and whose forced update is refused; Home
 * shows a paid order in today's figures and the chart's table.
 */
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buy } from '../support/payments.js';
import { dashboard, registerSeller, type Seller } from '../support/seller.js';
import {
  createShop,
  keyProduct,
  launchChromium,
  pagePerTest,
  screenshots,
  startPageServer,
  unlabelledControls,
  watchPage,
} from './support.js';
import { expectAccessible } from './dashboard-support.js';

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

/** Signs `seller` in through the form and lands on `path` (under /dashboard). */
async function signIn(on: Page, seller: Seller, path: string): Promise<void> {
  await on.goto(`${server.url}/dashboard/sign-in?redirect=${encodeURIComponent(path)}`);
  await on.getByLabel('Email').fill(seller.email);
  await on.getByLabel('Password').fill(seller.password);
  await on.getByRole('button', { name: 'Sign in' }).click();
  await on.waitForURL(`${server.url}/dashboard${path}`);
}

describe('dashboard settings', () => {
  it('saves the store name and payment methods, and a reload shows them', async () => {
    const shop = await createShop(server.url, 'Pixel Forge');
    await signIn(page, shop.seller, `/stores/${shop.store.id}/settings`);
    const name = page.getByLabel('Store name');
    await expect.poll(() => name.inputValue()).toBe('Pixel Forge');
    expect(await unlabelledControls(page)).toEqual([]);
    // The subdomain is shown but cannot be changed.
    expect(await page.getByLabel('Subdomain').inputValue()).toBe(shop.store.subdomain);
    expect(await page.getByLabel('Subdomain').getAttribute('readonly')).not.toBeNull();
    await screenshots(page, 'dashboard-settings');

    // The form checks with the server's schema: no payment method, or a bad origin, is not sent.
    await page.getByRole('checkbox', { name: /^Manual payment/ }).uncheck();
    await page.getByRole('checkbox', { name: /^Test gateway/ }).uncheck();
    await page.getByLabel('Allowed origins').fill('shop.example.com');
    // Offline license leases last 1 to 90 days (issue 41).
    expect(await page.getByLabel('Offline lease days').inputValue()).toBe('7');
    await page.getByLabel('Offline lease days').fill('91');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Choose at least one payment method.').waitFor();
    expect(await page.getByLabel('Offline lease days').getAttribute('aria-invalid')).toBe('true');
    await page.getByText('shop.example.com: an origin such as https://shop.example.com').waitFor();
    expect(await page.getByLabel('Allowed origins').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByRole('status').filter({ hasText: 'Saved.' }).count()).toBe(0);

    await name.fill('Pixel Forge Outlet');
    await page.getByRole('checkbox', { name: 'Stripe' }).check();
    await page.getByRole('checkbox', { name: /^Test gateway/ }).check();
    await page.getByLabel('Allowed origins').fill('https://shop.example.com');
    await page.getByLabel('Offline lease days').fill('30');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    // The store switcher shows the new name.
    await expect
      .poll(() => page.getByLabel('Store', { exact: true }).locator('option:checked').textContent())
      .toBe('Pixel Forge Outlet');

    await page.reload();
    await expect.poll(() => name.inputValue()).toBe('Pixel Forge Outlet');
    expect(await page.getByRole('checkbox', { name: 'Stripe' }).isChecked()).toBe(true);
    expect(await page.getByRole('checkbox', { name: /^Test gateway/ }).isChecked()).toBe(true);
    expect(await page.getByRole('checkbox', { name: /^Manual payment/ }).isChecked()).toBe(false);
    expect(await page.getByLabel('Allowed origins').inputValue()).toBe('https://shop.example.com');
    expect(await page.getByLabel('Offline lease days').inputValue()).toBe('30');

    const stored = await (await dashboard(shop.seller, 'GET', `/api/dashboard/stores/${shop.store.id}`)).json();
    expect(stored.name).toBe('Pixel Forge Outlet');
    expect([...stored.settings.paymentMethods].sort()).toEqual(['stripe', 'test']);
    expect(stored.settings.licenseLeaseDays).toBe(30);
  });

  it("edits the store's look (description, accent colour, logo) and links to the storefront", async () => {
    const shop = await createShop(server.url, 'Look Forge');
    await signIn(page, shop.seller, `/stores/${shop.store.id}/settings`);
    const view = page.getByRole('link', { name: 'View store' });
    await view.waitFor();
    expect(await view.getAttribute('href')).toBe(`/s/${shop.store.subdomain}`);

    const colour = page.getByLabel('Accent colour', { exact: true });
    await colour.fill('blue');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('a colour as #rrggbb').waitFor();
    expect(await colour.getAttribute('aria-invalid')).toBe('true');
    // The picker sets the same field.
    await page.getByLabel('Pick the accent colour').fill('#aa3300');
    expect(await colour.inputValue()).toBe('#aa3300');
    await page.getByLabel('Store description').fill('Hand-made pixel art packs.');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();

    const logo = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#aa3300' } })
      .png()
      .toBuffer();
    await page.getByLabel('Logo image').setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: logo });
    await page.getByRole('button', { name: 'Upload logo' }).click();
    await page.getByRole('status').filter({ hasText: 'Logo uploaded.' }).waitFor();
    const preview = page.getByRole('img', { name: 'Look Forge logo' });
    await expect.poll(() => preview.evaluate((img: any) => img.complete && img.naturalWidth)).toBe(64);
    await expectAccessible(page, 'settings with a logo');

    const stored = await (await dashboard(shop.seller, 'GET', `/api/dashboard/stores/${shop.store.id}`)).json();
    expect(stored).toMatchObject({ description: 'Hand-made pixel art packs.', accentColor: '#aa3300' });
    expect(stored.logoUrl).toMatch(/^\/s\/.+\/logo\/\w+$/);
    const storefront = await (await fetch(`${server.url}/s/${shop.store.subdomain}`)).text();
    expect(storefront).toContain('Hand-made pixel art packs.');
    // #aa3300 is AA on the light scheme's backgrounds only: the light accent (the dark scheme keeps the token's).
    expect(storefront).toContain(
      '@media (prefers-color-scheme:light){:root{--svc-accent:#aa3300;--svc-accent-hover:#912b00;--svc-accent-soft:#f5e7e0;--svc-focus:#aa3300}}',
    );

    await page.getByRole('button', { name: 'Remove logo' }).click();
    await page.getByRole('status').filter({ hasText: 'Logo removed.' }).waitFor();
    await page.getByText("No logo: the storefront shows the store's name alone.").waitFor();
    expect((await (await dashboard(shop.seller, 'GET', `/api/dashboard/stores/${shop.store.id}`)).json()).logoUrl).toBe(
      null,
    );
  });

  it('invites a member with only View orders, who sees no Save and no invite form and is refused a forced update', async () => {
    const shop = await createShop(server.url, 'Night Owl Games');
    const member = await registerSeller(server.url, `clerk-${randomBytes(4).toString('hex')}@example.test`);

    await signIn(page, shop.seller, `/stores/${shop.store.id}/staff`);
    await page.getByRole('heading', { name: 'Invite a member' }).waitFor();
    // Someone without an account cannot be invited; the API's answer shows at the form.
    await page.getByLabel('Email').fill(`nobody-${randomBytes(4).toString('hex')}@example.test`);
    await page.getByRole('button', { name: 'Invite' }).click();
    await page.getByRole('alert').filter({ hasText: 'ask them to register first' }).waitFor();

    await page.getByLabel('Email').fill(member.email);
    for (const permission of ['View orders', 'Edit orders', 'Manage products', 'Manage settings']) {
      await page.getByRole('checkbox', { name: permission }).setChecked(permission === 'View orders');
    }
    await page.getByRole('button', { name: 'Invite' }).click();
    const row = page.getByRole('row').filter({ has: page.getByRole('cell', { name: member.email, exact: true }) });
    await row.waitFor();
    expect(await row.getByRole('cell', { name: 'View orders', exact: true }).count()).toBe(1);
    expect(await unlabelledControls(page)).toEqual([]);
    await screenshots(page, 'dashboard-staff');

    // The member, in a browser of their own.
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      const theirs = await context.newPage();
      const theirWatch = watchPage(theirs, server.url);
      await signIn(theirs, member, `/stores/${shop.store.id}/settings`);
      await theirs.getByText('You can read these settings').waitFor();
      expect(await theirs.getByRole('definition').first().textContent()).toBe('Night Owl Games');
      expect(await theirs.getByRole('button', { name: 'Save' }).count()).toBe(0);
      expect(await theirs.getByRole('textbox').count()).toBe(0);

      await theirs.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Staff' }).click();
      await theirs.getByText('Only the store’s owner can see').waitFor();
      expect(await theirs.getByRole('button', { name: 'Invite' }).count()).toBe(0);
      expect(await theirs.getByRole('heading', { name: 'Invite a member' }).count()).toBe(0);
      expect(await theirs.getByRole('button', { name: /^Remove/ }).count()).toBe(0);
      expect(theirWatch.violations).toEqual([]);
    } finally {
      await context.close();
    }

    // Forcing the update with the member's session is refused.
    const forced = await dashboard(member, 'PATCH', `/api/dashboard/stores/${shop.store.id}`, { name: 'Mine now' });
    expect(forced.status).toBe(403);
    const stored = await (await dashboard(shop.seller, 'GET', `/api/dashboard/stores/${shop.store.id}`)).json();
    expect(stored.name).toBe('Night Owl Games');

    // The owner takes View orders away, then removes the member (the dialog's button repeats the verb).
    await page.getByRole('button', { name: `Change permissions of ${member.email}` }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('checkbox', { name: 'View orders' }).uncheck();
    await dialog.getByRole('button', { name: 'Save' }).click();
    await row.getByRole('cell', { name: 'None', exact: true }).waitFor();
    await page.getByRole('button', { name: `Remove ${member.email}` }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Remove' }).click();
    await row.waitFor({ state: 'detached' });
    const members = await (
      await dashboard(shop.seller, 'GET', `/api/dashboard/stores/${shop.store.id}/members`)
    ).json();
    expect(members.members.map((m: { email: string }) => m.email)).toEqual([shop.seller.email]);
  });

  it('Home shows a paid order in today’s and the 30 days’ figures, and the chart’s table', async () => {
    const shop = await createShop(server.url, 'Field Notes');
    const product = await keyProduct(shop, ['FN-1111', 'FN-2222'], { price: 12.5 });
    await buy(server.url, { storeId: shop.store.id, productId: product.id, email: 'buyer@example.test' });

    await signIn(page, shop.seller, `/stores/${shop.store.id}`);
    await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
    const today = page.locator('.card').filter({ has: page.getByRole('heading', { name: /^Today/ }) });
    await today.getByText('12.50').waitFor();
    expect(await today.locator('dd').nth(1).textContent()).toBe('1');
    const month = page.locator('.card').filter({ has: page.getByRole('heading', { name: 'Last 30 days' }) });
    expect(await month.locator('dd').first().textContent()).toContain('12.50');
    expect(await month.locator('dd').nth(1).textContent()).toBe('1');

    // The chart is an image with a summary, and its numbers are in a table a screen reader reaches.
    const chart = page.getByRole('img', { name: /^Revenue per day/ });
    expect(await chart.count()).toBe(1);
    expect(await chart.getAttribute('aria-labelledby')).toBeTruthy();
    const table = page.getByRole('table', { name: 'Revenue and orders per day' });
    expect(await table.getByRole('row').count()).toBe(31);
    const last = table.getByRole('row').last();
    expect(await last.getByRole('cell').first().textContent()).toContain('12.50');
    expect(await last.getByRole('cell').nth(1).textContent()).toBe('1');
    await screenshots(page, 'dashboard-home');
    expect(watch.violations).toEqual([]);
  });
});
