/**
 * In a real browser: a theme with no bundler, on a site of its own, loads the SDK's theme client
 * from the service (`import { createThemeClient } from '<service>/sdk/v1/theme.js'` in a
 * `<script type="module">`), lists the store's products, prices a cart, checks out and sends the
 * buyer to the checkout page, which shows the order.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createShop,
  keyProduct,
  launchChromium,
  pagePerTest,
  startPageServer,
  THEME_HOST,
  watchPage,
} from './support.js';

let server: Awaited<ReturnType<typeof startPageServer>>;
let theme: { url: string; stop: () => Promise<void> };
let browser: Browser;
let page: Page;
let watch: ReturnType<typeof watchPage>;

/** The theme's one page: no build step, the SDK imported from the service by URL. */
function themePage(serviceUrl: string, subdomain: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>A theme without a bundler</title></head>
<body>
<h1 id="store">…</h1>
<ul id="products"></ul>
<p id="cart"></p>
<button type="button" id="checkout" disabled>Check out</button>
<p id="error" role="alert"></p>
<script type="module">
import { createThemeClient, SvcApiError } from '${serviceUrl}/sdk/v1/theme.js';

const shop = createThemeClient({ baseUrl: '${serviceUrl}', subdomain: ${JSON.stringify(subdomain)} });
const show = (error) => {
  document.getElementById('error').textContent = error instanceof SvcApiError ? 'svc: ' + error.code : String(error);
};
try {
  const { store, products } = await shop.storefront();
  document.getElementById('store').textContent = store.name;
  for (const product of products) {
    const item = document.createElement('li');
    item.textContent = product.name + ': ' + product.price.toFixed(2) + ' ' + product.currency;
    document.getElementById('products').append(item);
  }
  const cart = await shop.cart.get([{ productId: products[0].id, quantity: 1 }]);
  document.getElementById('cart').textContent = 'Subtotal: ' + cart.subtotal.toFixed(2) + ' ' + cart.currency;
  const button = document.getElementById('checkout');
  button.addEventListener('click', async () => {
    try {
      const { url, orderId } = await shop.checkout({ cart: cart.lines, email: 'no-bundler@example.test' });
      console.log('svc-order ' + orderId);
      location.assign(url);
    } catch (error) {
      show(error);
    }
  });
  button.disabled = false;
} catch (error) {
  show(error);
}
</script>
</body>
</html>
`;
}

/** The theme's site: another origin (theme.test, mapped to loopback), serving the page above. */
async function startNoBundlerTheme(serviceUrl: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const answer = (request: IncomingMessage, response: ServerResponse): void => {
    const url = new URL(request.url ?? '/', `http://${THEME_HOST}`);
    if (request.method === 'GET' && url.pathname === '/shop') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(themePage(serviceUrl, url.searchParams.get('store') ?? ''));
      return;
    }
    response.writeHead(404).end();
  };
  const site: Server = createServer(answer);
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', () => resolve()));
  const { port } = site.address() as AddressInfo;
  return {
    url: `http://${THEME_HOST}:${port}`,
    stop: () => new Promise<void>((resolve) => site.close(() => resolve())),
  };
}

beforeAll(async () => {
  [server, browser] = await Promise.all([startPageServer(), launchChromium()]);
  theme = await startNoBundlerTheme(server.url);
});
afterAll(async () => {
  await browser?.close();
  await theme?.stop();
  await server?.stop();
});
pagePerTest(
  () => ({ browser, serviceUrl: server.url }),
  (opened: { context: BrowserContext; page: Page; watch: ReturnType<typeof watchPage> }) => ({ page, watch } = opened),
);

describe('/sdk/v1/theme.js on a theme page without a bundler', () => {
  it('loads cross-origin as an ES module, reads the products, checks out and opens the checkout page', async () => {
    const shop = await createShop(server.url);
    await keyProduct(shop, ['NOBU-NDLR-0001'], { name: 'Starship Game (Steam key)', price: 19.99 });
    const ordered = new Promise<string>((resolve) =>
      page.on('console', (message) => {
        const match = /^svc-order (\S+)$/.exec(message.text());
        if (match) resolve(match[1]!);
      }),
    );

    await page.goto(`${theme.url}/shop?store=${shop.store.subdomain}`);
    await page.getByRole('heading', { name: 'Pixel Forge' }).waitFor();
    await page.getByText('Starship Game (Steam key): 19.99 USD').waitFor();
    await page.getByText('Subtotal: 19.99 USD').waitFor();
    expect(await page.getByRole('alert').textContent()).toBe('');
    // The module came from the service, across origins.
    const script = watch.requests.find((r) => r.url === `${server.url}/sdk/v1/theme.js`);
    expect(script?.frame).toBe(`${theme.url}/shop?store=${shop.store.subdomain}`);

    await page.getByRole('button', { name: 'Check out' }).click();
    const orderId = await ordered;
    await page.waitForURL(new RegExp(`^${server.url}/checkout/${orderId}\\?token=`));
    await page.getByRole('heading', { name: /^Order ORD-\d+ at Pixel Forge$/ }).waitFor();
    expect(await page.locator('#order-total').textContent()).toBe('$19.99');
  });
});
