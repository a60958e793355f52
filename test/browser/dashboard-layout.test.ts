/**
 * In a real browser: the dashboard's layout on a laptop and a phone. At 1280 and 390 px, light and
 * dark, no screen of a seeded store scrolls the page sideways (tables scroll inside their own
 * frame); on a phone the `Main` navigation sits behind a `Menu` button whose drawer takes focus,
 * closes on Escape (focus back on the button) and on choosing a link; and a form submitted empty
 * names each missing field at the field (aria-invalid, aria-describedby pointing at the words).
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientIp } from '../support/seller.js';
import { launchChromium } from './support.js';
import {
  MAIN_NAV,
  showcaseStore,
  signInThroughUi,
  startPageServer,
  storeUrl,
  type ShowcaseStore,
} from './dashboard-support.js';

// Evaluated in the page; tsconfig.test.json has no DOM types.
declare const document: any;
declare const window: any;

let server: Awaited<ReturnType<typeof startPageServer>>;
let browser: Browser;
let shop: ShowcaseStore;

beforeAll(async () => {
  [server, browser] = await Promise.all([startPageServer(), launchChromium()]);
  shop = await showcaseStore(server.url);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** A signed-in page of its own at `width`, in `colorScheme`. */
async function signedInPage(width: number, colorScheme: 'light' | 'dark' = 'light'): Promise<Page> {
  const context = await browser.newContext({
    viewport: { width, height: width > 600 ? 800 : 844 },
    colorScheme,
    extraHTTPHeaders: { 'x-forwarded-for': clientIp() },
  });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  await page.goto(storeUrl(server.url, shop.store.id));
  await signInThroughUi(page, shop.seller);
  return page;
}

/** The screen has its heading and no loading status left. */
async function settled(page: Page): Promise<void> {
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
}

/** How far the page scrolls sideways (0 when it does not). */
function sidewaysScroll(page: Page): Promise<number> {
  return page.evaluate(() => document.scrollingElement.scrollWidth - window.innerWidth);
}

describe('dashboard layout', () => {
  for (const width of [1280, 390]) {
    for (const colorScheme of ['light', 'dark'] as const) {
      it(`no screen scrolls sideways at ${width} px (${colorScheme})`, { timeout: 120_000 }, async () => {
        const page = await signedInPage(width, colorScheme);
        try {
          const paths = [
            ...MAIN_NAV.map((link) => link.path),
            `/orders/${shop.orderId}`,
            `/products/${shop.productId}`,
            '/products/new',
          ];
          const found: string[] = [];
          for (const path of paths) {
            await page.goto(storeUrl(server.url, shop.store.id, path));
            await settled(page);
            const overflow = await sidewaysScroll(page);
            if (overflow > 0) found.push(`${path || '/'} scrolls ${overflow} px sideways`);
          }
          await page.goto(`${server.url}/dashboard/stores/new`);
          await settled(page);
          if ((await sidewaysScroll(page)) > 0) found.push('/stores/new scrolls sideways');
          expect(found).toEqual([]);
        } finally {
          await page.context().close();
        }
      });
    }
  }

  it('on a phone, the Menu button opens the navigation; Escape and a link close it', { timeout: 60_000 }, async () => {
    const page = await signedInPage(390);
    try {
      const nav = page.getByRole('navigation', { name: 'Main' });
      const menu = page.getByRole('button', { name: 'Menu' });
      await menu.waitFor();
      // Folded away: the navigation takes no room above the screen.
      expect(await nav.isVisible()).toBe(false);

      await menu.click();
      const drawer = page.getByRole('dialog', { name: 'Navigation' });
      await drawer.waitFor();
      await nav.waitFor();
      // Focus moved into the drawer; the store switcher and Sign out are there too.
      expect(await drawer.evaluate((element: any) => element.contains(element.ownerDocument.activeElement))).toBe(true);
      await drawer.getByRole('combobox', { name: 'Store' }).waitFor();
      await drawer.getByRole('button', { name: 'Sign out' }).waitFor();
      expect(await nav.getByRole('link').allTextContents()).toEqual(MAIN_NAV.map((link) => link.name));

      await page.keyboard.press('Escape');
      await drawer.waitFor({ state: 'detached' });
      expect(await menu.evaluate((element: any) => element === element.ownerDocument.activeElement)).toBe(true);

      await menu.click();
      await nav.getByRole('link', { name: 'Orders' }).click();
      await page.waitForURL(storeUrl(server.url, shop.store.id, '/orders'));
      await drawer.waitFor({ state: 'detached' });
      await page.getByRole('heading', { name: 'Orders', level: 1 }).waitFor();
      // The orders table scrolls inside its frame, not the page.
      await page.getByRole('table', { name: 'Orders' }).getByRole('link', { name: shop.orderId }).waitFor();
      expect(await sidewaysScroll(page)).toBeLessThanOrEqual(0);
    } finally {
      await page.context().close();
    }
  });

  it('a form submitted empty names each missing field at the field', { timeout: 60_000 }, async () => {
    const page = await signedInPage(1280);
    try {
      /** The words tied to a control by aria-describedby, when it is marked invalid. */
      const errorAt = (label: string) =>
        page.getByLabel(label, { exact: true }).evaluate((control: any) => {
          if (control.getAttribute('aria-invalid') !== 'true') return null;
          const ids = (control.getAttribute('aria-describedby') ?? '').split(' ').filter(Boolean);
          return ids.map((id: string) => control.ownerDocument.getElementById(id)?.textContent ?? '').join(' | ');
        });

      await page.goto(storeUrl(server.url, shop.store.id, '/products/new'));
      await page.getByRole('heading', { name: 'New product', level: 1 }).waitFor();
      await page.getByLabel('Name').fill('');
      await page.getByRole('button', { name: 'Create product' }).click();
      await expect.poll(() => errorAt('Name')).toBeTruthy();
      expect(await errorAt('Price')).toBeTruthy();
      // The delivery methods: every box says the group's problem.
      expect(await errorAt('License keys')).toBeTruthy();
      // Each message sits at its field, not in one note at the bottom of the form.
      expect(await page.getByRole('alert').count()).toBe(0);

      await page.goto(`${server.url}/dashboard/stores/new`);
      await page.getByRole('heading', { name: 'Create a store', level: 1 }).waitFor();
      await page.getByRole('button', { name: 'Create store' }).click();
      await expect.poll(() => errorAt('Store name')).toBeTruthy();
      expect(await errorAt('Subdomain')).toBeTruthy();
    } finally {
      await page.context().close();
    }
  });
});
