/**
 * Not a check: the screenshots of docs/screenshots/ (dashboard-*.png), taken when SVC_SCREENSHOTS
 * names the phase (`before` or `after`), e.g.
 *   SVC_SCREENSHOTS=after npx vitest run test/browser/dashboard-screenshots.test.ts --maxWorkers=1
 * Every main screen of a seeded store (showcaseStore) at 1280 and 390 px in the light scheme, and
 * the busiest ones in the dark scheme too; viewport-sized PNGs, so each stays small.
 */
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/server.js';
import { launchChromium } from './support.js';
import { showcaseStore, signInThroughUi, startPageServer, storeUrl, type ShowcaseStore } from './dashboard-support.js';

const PHASE = process.env.SVC_SCREENSHOTS;
const OUT = path.join(REPO_ROOT, 'docs/screenshots');

/** The screens shot, by name: the path under the store, and whether the dark scheme is shot too. */
function screens(shop: ShowcaseStore): Array<{ name: string; path: string; dark?: boolean }> {
  return [
    { name: 'home', path: '', dark: true },
    { name: 'orders', path: '/orders', dark: true },
    { name: 'order', path: `/orders/${shop.orderId}`, dark: true },
    { name: 'products', path: '/products' },
    { name: 'product', path: `/products/${shop.productId}`, dark: true },
    { name: 'coupons', path: '/coupons' },
    { name: 'customers', path: '/customers' },
    { name: 'tax', path: '/tax', dark: true },
    { name: 'tickets', path: '/tickets' },
    { name: 'licenses', path: '/licenses' },
    { name: 'webhooks', path: '/webhooks' },
    { name: 'events', path: '/events' },
    { name: 'api-keys', path: '/api-keys' },
    { name: 'staff', path: '/staff' },
    { name: 'settings', path: '/settings', dark: true },
  ];
}

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
  await page.waitForTimeout(300);
}

describe.runIf(PHASE)('dashboard screenshots', () => {
  let server: Awaited<ReturnType<typeof startPageServer>>;
  let browser: Browser;
  beforeAll(async () => {
    [server, browser] = await Promise.all([startPageServer(), launchChromium()]);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('shoots every main screen at 1280 and 390, light and (where it matters) dark', async () => {
    const shop = await showcaseStore(server.url);
    for (const width of [1280, 390]) {
      for (const colorScheme of ['light', 'dark'] as const) {
        const context = await browser.newContext({
          viewport: { width, height: width > 600 ? 800 : 844 },
          colorScheme,
          extraHTTPHeaders: {
            'x-forwarded-for': `203.0.113.${width > 600 ? 10 : 20}${colorScheme === 'dark' ? 1 : 2}`,
          },
        });
        const page = await context.newPage();
        page.setDefaultTimeout(15_000);
        const file = (name: string) => path.join(OUT, `dashboard-${name}-${width}-${colorScheme}-${PHASE}.png`);
        if (colorScheme === 'light') {
          await page.goto(`${server.url}/dashboard/sign-in`);
          await page.getByRole('heading', { name: 'Sign in to svc' }).waitFor();
          await page.screenshot({ path: file('sign-in') });
        } else await page.goto(storeUrl(server.url, shop.store.id));
        await signInThroughUi(page, shop.seller);
        for (const screen of screens(shop)) {
          if (colorScheme === 'dark' && !screen.dark) continue;
          await page.goto(storeUrl(server.url, shop.store.id, screen.path));
          await settled(page);
          await page.screenshot({ path: file(screen.name) });
        }
        await context.close();
      }
    }
  }, 600_000);
});
