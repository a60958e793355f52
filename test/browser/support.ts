/**
 * Browser tests: playwright-core driving Debian's Chromium (`apt-get install chromium`,
 * /usr/bin/chromium; CHROMIUM_PATH overrides), headless, against the built server started as
 * a black box. A "theme" (another site: theme.test, mapped to loopback) serves a cart page and
 * /embed.js buttons, as a storefront would. Screenshots go to test/.screenshots/ (ignored by git).
 */
import { mkdirSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterEach, beforeEach, expect } from 'vitest';
import { createProduct, importKeys, type ProductSeed } from '../support/catalog.js';
import { TEST_GATEWAY_SECRET } from '../support/payments.js';
import { createStoreFor, dashboard, registerSeller, type Seller } from '../support/seller.js';
import { REPO_ROOT, startServer } from '../support/server.js';

// Evaluated in the page; tsconfig.test.json has no DOM types.
declare const document: any;
declare function getComputedStyle(element: unknown): any;

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOT_DIR = path.join(REPO_ROOT, 'test/.screenshots');
export const THEME_HOST = 'theme.test';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      // The theme is another site on this machine.
      `--host-resolver-rules=MAP ${THEME_HOST} 127.0.0.1`,
    ],
  });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * The built server with the test gateway, its PUBLIC_URL its real address (checkout links point
 * there). A variable given as undefined is left out (TEST_GATEWAY_SECRET, for a plain start).
 */
export async function startPageServer(env: Record<string, string | undefined> = {}) {
  const port = await freePort();
  return startServer({ TEST_GATEWAY_SECRET, PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, ...env });
}

export interface Shop {
  seller: Seller;
  store: { id: string; subdomain: string };
}

/** A seller and a store taking test and manual payments. */
export async function createShop(baseUrl: string, name = 'Pixel Forge'): Promise<Shop> {
  const seller = await registerSeller(baseUrl);
  const store = await createStoreFor(seller, name);
  const response = await dashboard(seller, 'PATCH', `/api/dashboard/stores/${store.id}`, {
    settings: {
      paymentMethods: ['test', 'manual'],
      manualPaymentInstructions: 'Transfer to IBAN DE00 1234 5678 9000.',
    },
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return { seller, store };
}

export async function keyProduct(shop: Shop, keys: string[], seed: ProductSeed = {}) {
  const product = await createProduct(shop.seller, shop.store.id, {
    name: 'Starship Game (Steam key)',
    price: 19.99,
    deliveryMethods: ['licenseKeys'],
    ...seed,
  });
  await importKeys(shop.seller, shop.store.id, product.id, keys);
  return product;
}

export async function fileProduct(shop: Shop, file: { name: string; bytes: Buffer }, seed: ProductSeed = {}) {
  const product = await createProduct(shop.seller, shop.store.id, {
    name: 'Field Guide (PDF)',
    price: 7.5,
    deliveryMethods: ['downloadFiles', 'deliveryInstructions'],
    deliveryInstructions: 'Open the PDF with any reader.',
    ...seed,
  });
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(file.bytes)], { type: 'application/pdf' }), file.name);
  const response = await fetch(
    `${shop.seller.baseUrl}/api/dashboard/stores/${shop.store.id}/products/${product.id}/files`,
    {
      method: 'POST',
      headers: { cookie: shop.seller.cookie, 'x-csrf-token': shop.seller.csrfToken },
      body: form,
    },
  );
  expect(response.status, await response.clone().text()).toBe(201);
  return product;
}

/**
 * What a theme does: a cart page (priced by GET /api/v1/cart) whose Checkout button posts to
 * the theme's own server, which calls POST /api/v1/checkout and sends the buyer to `url`; and
 * a page with /embed.js buy buttons.
 */
export async function startTheme(serviceUrl: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const answer = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? '/', 'http://theme.test');
    const store = url.searchParams.get('store') ?? '';
    const product = url.searchParams.get('product') ?? '';
    try {
      if (request.method === 'GET' && url.pathname === '/cart') {
        const quantity = Number(url.searchParams.get('quantity') ?? '1');
        const cart = JSON.stringify([{ productId: product, quantity }]);
        const priced = await (
          await fetch(`${serviceUrl}/api/v1/cart?storeId=${encodeURIComponent(store)}&cart=${encodeURIComponent(cart)}`)
        ).json();
        const rows = priced.lines
          .map(
            (l: { name: string; quantity: number; lineTotal: number }) =>
              `<li>${l.name} × ${l.quantity}: ${l.lineTotal.toFixed(2)} ${priced.currency}</li>`,
          )
          .join('');
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        response.end(`<!doctype html><html lang="en"><title>Theme cart</title><h1>Your cart</h1><ul>${rows}</ul>
<p>Subtotal: ${priced.subtotal.toFixed(2)} ${priced.currency}</p>
<form method="post" action="/checkout?store=${encodeURIComponent(store)}&product=${encodeURIComponent(product)}&quantity=${quantity}"><button type="submit">Checkout</button></form></html>`);
        return;
      }
      if (request.method === 'POST' && url.pathname === '/checkout') {
        const quantity = Number(url.searchParams.get('quantity') ?? '1');
        const created = await fetch(`${serviceUrl}/api/v1/checkout`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ shopId: store, cart: [{ productId: product, quantity }], email: null }),
        });
        const body = await created.json();
        response.writeHead(
          created.ok ? 303 : 500,
          created.ok ? { location: body.url } : { 'content-type': 'text/plain' },
        );
        response.end(created.ok ? '' : JSON.stringify(body));
        return;
      }
      if (request.method === 'GET' && url.pathname === '/embed') {
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        response.end(`<!doctype html><html lang="en"><head><title>Theme</title><script src="${serviceUrl}/embed.js" async></script></head>
<body><h1>A theme page</h1><p>Field Guide, 7.50 USD</p>
<button type="button" data-svc-store="${store}" data-svc-product="${product}">Buy now</button></body></html>`);
        return;
      }
      response.writeHead(404).end();
    } catch (error) {
      response.writeHead(500, { 'content-type': 'text/plain' }).end(String(error));
    }
  };
  const server: Server = createServer((request, response) => void answer(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${THEME_HOST}:${port}`,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Every request made by a frame of the service's origin, and every CSP violation reported.
 * `foreign()` lists the requests our pages made to another origin (none may exist).
 */
export function watchPage(page: Page, serviceOrigin: string) {
  const requests: Array<{ url: string; frame: string; navigation: boolean }> = [];
  const violations: string[] = [];
  page.on('request', (request) => {
    let frameUrl: string;
    try {
      frameUrl = request.frame().url();
    } catch {
      frameUrl = '';
    }
    requests.push({ url: request.url(), frame: frameUrl, navigation: request.isNavigationRequest() });
  });
  page.on('console', (message) => {
    if (/Content.Security.Policy|Refused to/i.test(message.text())) violations.push(message.text());
  });
  page.on('pageerror', (error) => violations.push(`page error: ${error.message}`));
  return {
    requests,
    violations,
    /** Requests that pages of the service's origin sent to another origin (going to another page, such as Stripe's, is not loading from it). */
    foreign: () =>
      requests.filter((r) => {
        if (!r.frame.startsWith(serviceOrigin) || r.navigation) return false;
        if (r.url.startsWith('data:') || r.url.startsWith('blob:')) return false;
        return new URL(r.url).origin !== serviceOrigin;
      }),
    ours: () => requests.filter((r) => r.url.startsWith(serviceOrigin)),
  };
}

/**
 * Text of ours (frames that use the service's stylesheet) whose contrast with the background
 * behind it is below WCAG AA: 4.5:1, or 3:1 for large text (24 px, or 18.66 px bold).
 */
export async function lowContrastText(page: Page): Promise<string[]> {
  const found: string[] = [];
  for (const frame of page.frames()) {
    const low: string[] = await frame
      .evaluate(() => {
        if (!document.querySelector('link[href="/assets/app.css"]')) return [];
        const parse = (color: string) => (color.match(/[\d.]+/g) ?? []).map(Number);
        const luminance = ([r, g, b]: number[]) => {
          const channel = (v: number) => {
            const c = v / 255;
            return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
          };
          return 0.2126 * channel(r!) + 0.7152 * channel(g!) + 0.0722 * channel(b!);
        };
        const background = (element: any): number[] => {
          for (let node = element; node; node = node.parentElement) {
            const rgba = parse(getComputedStyle(node).backgroundColor);
            if (rgba.length >= 3 && (rgba[3] === undefined || rgba[3] === 1)) return rgba;
          }
          return [255, 255, 255];
        };
        const out: string[] = [];
        for (const element of Array.from(document.querySelectorAll('body *') as ArrayLike<any>)) {
          const ownText = Array.from(element.childNodes as ArrayLike<any>).some(
            (node: any) => node.nodeType === 3 && node.textContent.trim() !== '',
          );
          if (!ownText || element.closest('[disabled]') || element.getClientRects().length === 0) continue;
          const style = getComputedStyle(element);
          if (style.visibility === 'hidden') continue;
          const fg = luminance(parse(style.color));
          const bg = luminance(background(element));
          const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
          const size = parseFloat(style.fontSize);
          const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
          if (ratio < (large ? 3 : 4.5))
            out.push(
              `${element.tagName.toLowerCase()} "${element.textContent.trim().slice(0, 40)}" ${ratio.toFixed(2)}:1`,
            );
        }
        return out;
      })
      .catch(() => [] as string[]);
    found.push(...low);
  }
  return found;
}

/**
 * The page at 360 px and 1280 px wide, full length, as <name>-360.png and <name>-1280.png;
 * at each width no sideways scrolling and no text below AA contrast.
 */
export async function screenshots(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const original = page.viewportSize() ?? { width: 1280, height: 800 };
  for (const width of [360, 1280]) {
    await page.setViewportSize({ width, height: width === 360 ? 740 : 800 });
    // No horizontal scrolling at either width.
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect(overflow, `${name} scrolls sideways at ${width} px`).toBeLessThanOrEqual(0);
    expect(await lowContrastText(page), `${name} at ${width} px`).toEqual([]);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}-${width}.png`), fullPage: true });
  }
  // Setting the size it already has can wait forever for a resize that never comes (seen with an out-of-process frame).
  const now = page.viewportSize();
  if (now?.width !== original.width || now?.height !== original.height) await page.setViewportSize(original);
}

/** Every visible form control has an accessible name (a <label>, aria-label or aria-labelledby). */
export async function unlabelledControls(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    Array.from(document.querySelectorAll('input:not([type=hidden]), select, textarea, button') as ArrayLike<any>)
      .filter((control: any) => {
        const labelled =
          control.labels?.length ||
          control.getAttribute('aria-label') ||
          control.getAttribute('aria-labelledby') ||
          (control.tagName === 'BUTTON' && control.textContent?.trim());
        return !labelled;
      })
      .map((control: any) => control.outerHTML as string),
  );
}

export { createProduct };

export interface PageOfTest {
  context: BrowserContext;
  page: Page;
  watch: ReturnType<typeof watchPage>;
}

/**
 * A fresh context and page (1280 x 800) for every test of the file, handed to `use`. After each
 * test: a screenshot when it failed, no request of our pages to another origin and no CSP
 * report, then the context closed.
 */
export function pagePerTest(
  environment: () => { browser: Browser; serviceUrl: string },
  use: (opened: PageOfTest) => void,
): void {
  let current: PageOfTest | undefined;
  beforeEach(async () => {
    const { browser, serviceUrl } = environment();
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    // A step that hangs fails with Playwright's own account of what it waited for, before the test's timeout.
    page.setDefaultTimeout(10_000);
    current = { context, page, watch: watchPage(page, serviceUrl) };
    use(current);
  });
  afterEach(async (test) => {
    if (!current) return;
    const { context, page, watch } = current;
    current = undefined;
    if (test.task.result?.state === 'fail') {
      await page
        .screenshot({
          path: path.join(SCREENSHOT_DIR, `failed-${test.task.name.slice(0, 40).replace(/\W+/g, '-')}.png`),
          fullPage: true,
        })
        .catch(() => undefined);
    }
    try {
      expect(watch.foreign()).toEqual([]);
      expect(watch.violations).toEqual([]);
    } finally {
      await context.close();
    }
  });
}
