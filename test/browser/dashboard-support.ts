/**
 * Shared helpers for the dashboard's browser tests (apps/dashboard served by the built server at
 * /dashboard/): a seller and store made over HTTP, signing in through the sign-in page, a page per
 * test whose requests come from an address of its own (so the auth rate limits of one test do not
 * spend another's), and axe-core run in the page in the light and the dark scheme.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { beforeEach, expect } from 'vitest';
import { createProduct } from '../support/catalog.js';
import { buy } from '../support/payments.js';
import { clientIp, createStoreFor, dashboard, registerSeller, type Seller } from '../support/seller.js';
import { REPO_ROOT } from '../support/server.js';
import {
  createShop,
  fileProduct,
  keyProduct,
  pagePerTest,
  startPageServer,
  type PageOfTest,
  type Shop,
} from './support.js';

// Evaluated in the page; tsconfig.test.json has no DOM types.
declare const document: any;
declare const axe: any;

export { startPageServer };

/** The links of the `Main` navigation (docs/architecture.md, The faces), in order, and the path under the store of each. */
export const MAIN_NAV: ReadonlyArray<{ name: string; path: string }> = [
  { name: 'Home', path: '' },
  { name: 'Orders', path: '/orders' },
  { name: 'Subscriptions', path: '/subscriptions' },
  { name: 'Products', path: '/products' },
  { name: 'Coupons', path: '/coupons' },
  { name: 'Blacklist', path: '/blacklist' },
  { name: 'Customers', path: '/customers' },
  { name: 'Tax', path: '/tax' },
  { name: 'Tickets', path: '/tickets' },
  { name: 'Licenses', path: '/licenses' },
  { name: 'Webhooks', path: '/webhooks' },
  { name: 'Events', path: '/events' },
  { name: 'Developers', path: '/developers' },
  { name: 'API keys', path: '/api-keys' },
  { name: 'Staff', path: '/staff' },
  { name: 'Settings', path: '/settings' },
];

export interface SellerWithStore {
  seller: Seller;
  store: { id: string; subdomain: string };
}

/** A seller registered over HTTP, with one store. */
export async function sellerWithStore(baseUrl: string, name = 'Pixel Forge'): Promise<SellerWithStore> {
  const seller = await registerSeller(baseUrl);
  const store = await createStoreFor(seller, name);
  return { seller, store };
}

/** `/dashboard/stores/{id}{rest}` on `baseUrl`. */
export function storeUrl(baseUrl: string, storeId: string, rest = ''): string {
  return `${baseUrl}/dashboard/stores/${storeId}${rest}`;
}

/**
 * Signs in on the sign-in page the browser is on or is being sent to (open a page first: a store's
 * page signed out goes there and comes back after): `Email`, `Password`, `Sign in`. Resolves once
 * the page has left sign-in.
 */
export async function signInThroughUi(page: Page, credentials: { email: string; password: string }): Promise<void> {
  await page.getByRole('heading', { name: 'Sign in to svc' }).waitFor();
  await page.getByLabel('Email').fill(credentials.email);
  await page.getByLabel('Password').fill(credentials.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => !url.pathname.startsWith('/dashboard/sign-in'));
}

/**
 * pagePerTest (test/browser/support.ts: a fresh context per test, no foreign request and no CSP
 * report allowed), with every request of the context sent with an X-Forwarded-For of its own
 * (the test server trusts 127.0.0.1 as its proxy), so registrations and sign-ins through the UI
 * each get their own rate-limit window.
 */
export function dashboardPagePerTest(
  environment: () => { browser: Browser; serviceUrl: string },
  use: (opened: PageOfTest) => void,
): void {
  let current: PageOfTest | undefined;
  pagePerTest(environment, (opened) => {
    current = opened;
    use(opened);
  });
  beforeEach(async () => {
    await current?.context.setExtraHTTPHeaders({ 'x-forwarded-for': clientIp() });
  });
}

let axeSource: string | undefined;
/** axe-core's browser build, the version apps/dashboard pins. */
function axeScript(): string {
  if (!axeSource) {
    const require = createRequire(path.join(REPO_ROOT, 'apps/dashboard/package.json'));
    axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  }
  return axeSource;
}

interface AxeViolation {
  id: string;
  impact: string;
  help: string;
  nodes: string[];
}

/**
 * Runs axe-core on the page as it is, in the light and then the dark colour scheme, and fails on
 * any `serious` or `critical` violation, listing each with the elements it found. axe is put into
 * the page with page.evaluate (DevTools' Runtime.evaluate, which the page's CSP does not govern);
 * a <script> with the same text would be inline and refused by `script-src 'self'`, so the CSP
 * stays whole and the watcher of CSP reports keeps meaning something. The page is left in the
 * light scheme.
 */
export async function expectAccessible(page: Page, screenName: string): Promise<void> {
  const found: string[] = [];
  try {
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      if (!(await page.evaluate(() => typeof axe !== 'undefined'))) await page.evaluate(axeScript());
      const { passed, violations } = await page.evaluate(async () => {
        const result = await axe.run(document, { resultTypes: ['violations'] });
        return {
          passed: result.passes.length as number,
          violations: result.violations.map((violation: any) => ({
            id: violation.id,
            impact: violation.impact,
            help: violation.help,
            nodes: violation.nodes.map((node: any) => `${node.target.join(' ')}: ${node.failureSummary ?? ''}`),
          })) as AxeViolation[],
        };
      });
      // The rules ran on something (a blank page would pass them all vacuously).
      expect(passed, `axe checked ${screenName} (${colorScheme})`).toBeGreaterThan(5);
      for (const violation of violations) {
        if (violation.impact !== 'serious' && violation.impact !== 'critical') continue;
        found.push(
          `${screenName} (${colorScheme}): ${violation.impact} ${violation.id}: ${violation.help}\n    ${violation.nodes.join('\n    ')}`,
        );
      }
    }
  } finally {
    await page.emulateMedia({ colorScheme: 'light' });
  }
  expect(found, `axe on ${screenName}`).toEqual([]);
}

/** A store as a seller would show it off: a few products (keys, a file, a plain one), a coupon, paid orders (one with the coupon) and a buyer. */
export interface ShowcaseStore extends Shop {
  orderId: string;
  productId: string;
}

/**
 * The seeded store the layout test and the screenshots use: three products (one with keys in
 * stock, one with a file, one delivered by hand), a 20% coupon, three paid orders (one of two
 * lines with the coupon) and a pending one.
 */
export async function showcaseStore(baseUrl: string): Promise<ShowcaseStore> {
  const shop = await createShop(baseUrl, 'Pixel Forge');
  const game = await keyProduct(shop, ['STAR-1111-AAAA', 'STAR-2222-BBBB', 'STAR-3333-CCCC', 'STAR-4444-DDDD'], {
    description: 'A space trading game. **Lifetime updates.**',
  });
  const guide = await fileProduct(shop, { name: 'field-guide.pdf', bytes: Buffer.from('%PDF-1.4\n%%EOF\n') });
  const icons = await createProduct(shop.seller, shop.store.id, { name: 'Icon Pack', price: 12 });
  const coupon = await dashboard(shop.seller, 'POST', `/api/dashboard/stores/${shop.store.id}/coupons`, {
    code: 'LAUNCH20',
    discountType: 'percent',
    discountValue: 20,
  });
  expect(coupon.status, await coupon.clone().text()).toBe(201);
  const first = await buy(baseUrl, {
    storeId: shop.store.id,
    productId: game.id,
    email: 'ada@example.test',
    ip: clientIp(),
  });
  await buy(baseUrl, {
    storeId: shop.store.id,
    cart: [
      { productId: game.id, quantity: 1 },
      { productId: guide.id, quantity: 2 },
    ],
    coupon: 'LAUNCH20',
    email: 'grace@example.test',
    ip: clientIp(),
  });
  await buy(baseUrl, { storeId: shop.store.id, productId: guide.id, email: 'linus@example.test', ip: clientIp() });
  const pending = await fetch(`${baseUrl}/api/v1/checkout`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp() },
    body: JSON.stringify({
      shopId: shop.store.id,
      cart: [{ productId: icons.id, quantity: 1 }],
      email: 'ken@example.test',
    }),
  });
  expect(pending.status, await pending.clone().text()).toBe(200);
  return { ...shop, orderId: first.orderId, productId: game.id };
}
