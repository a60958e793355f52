/**
 * In a real browser: a page on another origin (a theme on theme.test) shows the store's logo and a
 * product image straight from svc, as the starter theme does. Both are public and answer
 * `Cross-Origin-Resource-Policy: cross-origin`; with the default `same-origin` the browser refused
 * them (net::ERR_BLOCKED_BY_RESPONSE.NotSameOrigin) and the theme showed broken images.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createShop, keyProduct, launchChromium, pagePerTest, startPageServer, THEME_HOST } from './support.js';

let server: Awaited<ReturnType<typeof startPageServer>>;
let browser: Browser;
let page: Page;
let theme: Server;
let themePage = '';

beforeAll(async () => {
  [server, browser] = await Promise.all([startPageServer(), launchChromium()]);
  theme = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(themePage);
  });
  await new Promise<void>((resolve) => theme.listen(0, '127.0.0.1', () => resolve()));
});
afterAll(async () => {
  await new Promise((resolve) => theme?.close(resolve));
  await browser?.close();
  await server?.stop();
});
pagePerTest(
  () => ({ browser, serviceUrl: server.url }),
  (opened) => ({ page } = opened),
);

async function upload(path: string, cookie: { cookie: string; csrfToken: string }, name: string, status: number) {
  const picture = await sharp({ create: { width: 600, height: 400, channels: 3, background: '#aa3300' } })
    .png()
    .toBuffer();
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(picture)], { type: 'image/png' }), name);
  const response = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { cookie: cookie.cookie, 'x-csrf-token': cookie.csrfToken },
    body: form,
  });
  expect(response.status, await response.clone().text()).toBe(status);
}

describe("a theme on another origin shows svc's public images", () => {
  it('loads the store logo and a product image', async () => {
    const shop = await createShop(server.url, 'Image Forge');
    const product = await keyProduct(shop, ['IMG-1'], { name: 'Pictured Key' });
    await upload(`/api/dashboard/stores/${shop.store.id}/logo`, shop.seller, 'logo.png', 200);
    await upload(`/api/dashboard/stores/${shop.store.id}/products/${product.id}/images`, shop.seller, 'p.png', 201);
    // The addresses a theme gets from the public catalog (the theme client's store and product).
    const storefront = await (
      await fetch(`${server.url}/api/stores/by-subdomain/${shop.store.subdomain}/storefront`)
    ).json();
    const logoUrl: string = storefront.store.logoUrl;
    const imageUrl: string = storefront.products[0].images[0].url;
    expect(logoUrl).toBeTruthy();
    expect(imageUrl).toBeTruthy();
    const absolute = (url: string) => new URL(url, server.url).toString();
    for (const url of [logoUrl, imageUrl])
      expect((await fetch(absolute(url))).headers.get('cross-origin-resource-policy')).toBe('cross-origin');

    themePage = `<!doctype html><html lang="en"><title>Theme</title>
<img id="logo" alt="Image Forge" src="${absolute(logoUrl)}">
<img id="product" alt="Pictured Key" src="${absolute(imageUrl)}"></html>`;
    const { port } = theme.address() as AddressInfo;
    const refused: string[] = [];
    page.on('requestfailed', (request) => refused.push(`${request.url()}: ${request.failure()?.errorText}`));
    await page.goto(`http://${THEME_HOST}:${port}/`);
    for (const id of ['logo', 'product']) {
      const image = page.locator(`#${id}`);
      await expect
        .poll(() => image.evaluate((img: any) => img.complete && img.naturalWidth), { timeout: 5_000 })
        .toBeGreaterThan(0);
    }
    expect(refused).toEqual([]);
  });
});
