/**
 * In a real browser: the Home's `Set up your store` checklist (docs/decisions.md, "Onboarding
 * checklist"). A new seller sees five steps, each `To do` in words with its link, and `0 of 5
 * done`; opening the storefront from the checklist (a new tab, signed in) marks `View your store`
 * done once Home is shown again; a seller who has done every step sees no checklist. axe-clean,
 * at 1280 and 390 px without sideways scrolling. With SVC_SCREENSHOTS set, it also takes the
 * screenshots of docs/screenshots/ (dashboard-home-checklist-*.png): a store with two steps done.
 */
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct } from '../support/catalog.js';
import { buy } from '../support/payments.js';
import { bearer, previewToken } from '../support/preview.js';
import { clientIp, createKeyFor, dashboard } from '../support/seller.js';
import { REPO_ROOT } from '../support/server.js';
import { launchChromium } from './support.js';
import { expectAccessible, sellerWithStore, signInThroughUi, startPageServer, storeUrl } from './dashboard-support.js';

// Evaluated in the page; tsconfig.test.json has no DOM types.
declare const document: any;
declare const window: any;

let server: Awaited<ReturnType<typeof startPageServer>>;
let browser: Browser;

beforeAll(async () => {
  [server, browser] = await Promise.all([startPageServer(), launchChromium()]);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const STEPS = [
  { title: 'Add a product', link: 'Go to Products' },
  { title: 'Choose payment methods', link: 'Go to Settings' },
  { title: 'View your store', link: 'Open your storefront' },
  { title: 'Make a test purchase', link: 'Open test storefront' },
  { title: 'Create an API key', link: 'Go to API keys' },
];

async function signedInHome(width: number, storeId: string, seller: { email: string; password: string }) {
  const context = await browser.newContext({
    viewport: { width, height: width > 600 ? 800 : 844 },
    extraHTTPHeaders: { 'x-forwarded-for': clientIp() },
  });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  await page.goto(storeUrl(server.url, storeId));
  await signInThroughUi(page, seller);
  return page;
}

const checklist = (page: Page) => page.getByRole('region', { name: 'Set up your store' });
const step = (page: Page, title: string) => checklist(page).getByRole('listitem').filter({ hasText: title });

describe('the setup checklist on Home', () => {
  for (const width of [1280, 390]) {
    it(`shows a new store's five steps to do, and marks the storefront viewed (${width} px)`, async () => {
      const { seller, store } = await sellerWithStore(server.url);
      const page = await signedInHome(width, store.id, seller);
      try {
        await checklist(page).waitFor();
        await checklist(page).getByText('0 of 5 done').waitFor();
        for (const { title, link } of STEPS) {
          await expect.poll(() => step(page, title).textContent()).toContain('To do');
          expect(await step(page, title).getByRole('link', { name: link, exact: true }).count()).toBe(1);
        }
        expect(await page.evaluate(() => document.scrollingElement.scrollWidth - window.innerWidth)).toBe(0);
        await expectAccessible(page, `Home with the checklist (${width} px)`);

        // The storefront opens in a new tab, signed in as the seller: the step is done back on Home.
        const [storefront] = await Promise.all([
          page.context().waitForEvent('page'),
          step(page, 'View your store').getByRole('link', { name: 'Open your storefront' }).click(),
        ]);
        await storefront.waitForLoadState();
        expect(new URL(storefront.url()).pathname).toBe(`/s/${store.subdomain}`);
        await storefront.close();
        await page.reload();
        await expect.poll(() => step(page, 'View your store').textContent(), { timeout: 15_000 }).toContain('Done');
        expect(await step(page, 'View your store').getByRole('link').count()).toBe(0);
        await checklist(page).getByText('1 of 5 done').waitFor();
        expect(await step(page, 'Add a product').textContent()).toContain('To do');
        await expectAccessible(page, `Home with a step done (${width} px)`);
      } finally {
        await page.context().close();
      }
    });
  }

  it('is gone once every step is done', async () => {
    const { seller, store } = await sellerWithStore(server.url);
    const product = await createProduct(seller, store.id, { name: 'Test guide', price: 3 }, 'test');
    const saved = await dashboard(seller, 'PATCH', `/api/dashboard/stores/${store.id}`, {
      settings: { paymentMethods: ['manual', 'test'] },
    });
    expect(saved.status).toBe(200);
    const token = await previewToken(seller, store.id);
    expect(
      (await fetch(`${server.url}/s/${store.subdomain}?mode=test&preview=${token}`, { redirect: 'manual' })).status,
    ).toBe(303);
    await buy(server.url, { storeId: store.id, productId: product.id, headers: bearer(token), ip: clientIp() });
    await createKeyFor(seller, { scopes: ['order:read'], storeIds: [store.id], mode: 'test' });

    const page = await signedInHome(1280, store.id, seller);
    try {
      await page.getByRole('region', { name: 'Revenue per day' }).waitFor();
      // Both of Home's reads have answered (no skeleton left): the checklist is not merely late.
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
      expect(await checklist(page).count()).toBe(0);
      expect(await page.getByText('Make a test purchase').count()).toBe(0);
    } finally {
      await page.context().close();
    }
  });
});

describe.runIf(process.env.SVC_SCREENSHOTS)('setup checklist screenshots', () => {
  it('shoots Home with two of five steps done at 1280 and 390 px, light and dark', { timeout: 120_000 }, async () => {
    const { seller, store } = await sellerWithStore(server.url);
    await createProduct(seller, store.id, { name: 'Field guide', price: 9 });
    const token = await previewToken(seller, store.id);
    await fetch(`${server.url}/s/${store.subdomain}?mode=test&preview=${token}`, { redirect: 'manual' });
    for (const width of [1280, 390]) {
      const page = await signedInHome(width, store.id, seller);
      try {
        await checklist(page).getByText('2 of 5 done').waitFor();
        for (const colorScheme of ['light', 'dark'] as const) {
          await page.emulateMedia({ colorScheme });
          await page.waitForTimeout(200);
          await page.screenshot({
            path: path.join(REPO_ROOT, `docs/screenshots/dashboard-home-checklist-${width}-${colorScheme}.png`),
          });
        }
      } finally {
        await page.context().close();
      }
    }
  });
});
