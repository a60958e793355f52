/**
 * In a real browser: the customer area. A buyer signs in with the code e-mailed to them,
 * sees their orders in that store (and no one else's), and opens one to its goods; an order
 * page opened with no credential says how to get in.
 */
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buy } from '../support/payments.js';
import {
  createShop,
  keyProduct,
  launchChromium,
  screenshots,
  startPageServer,
  unlabelledControls,
  pagePerTest,
  watchPage,
} from './support.js';

// Evaluated in the page; tsconfig.test.json has no DOM types.
declare const document: any;
declare const window: any;

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

/** The code from the newest sign-in e-mail to `email` in the development mailbox. */
async function codeFor(email: string): Promise<string> {
  for (let i = 0; i < 50; i++) {
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

describe('customer area', () => {
  it('signs in with the e-mailed code, lists only this buyer’s orders and opens one to its key', async () => {
    const shop = await createShop(server.url, 'Night Owl Games');
    const product = await keyProduct(shop, ['OWL-1111-AAAA', 'OWL-2222-BBBB']);
    const email = `owl-${randomBytes(4).toString('hex')}@example.test`;
    const mine = await buy(server.url, {
      storeId: shop.store.id,
      productId: product.id,
      email,
      ip: '198.51.100.21',
    });
    const theirs = await buy(server.url, {
      storeId: shop.store.id,
      productId: product.id,
      email: `other-${randomBytes(4).toString('hex')}@example.test`,
      ip: '198.51.100.22',
    });

    await page.goto(`${server.url}/account/${shop.store.subdomain}`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await unlabelledControls(page)).toEqual([]);
    await screenshots(page, 'account-sign-in');
    await page.getByLabel('E-mail').fill(email);
    await page.getByRole('button', { name: 'Send me a code' }).click();

    const codeInput = page.getByLabel(/^Code/);
    await codeInput.waitFor();
    const code = await codeFor(email);
    // A wrong code is shown at the code field.
    await codeInput.fill(code === '000000' ? '111111' : '000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => codeInput.getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByText('The code is wrong or has expired.').count()).toBe(1);
    await screenshots(page, 'account-code-error');

    await codeInput.fill(code);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const link = page.getByRole('link', { name: `${mine.orderId}: Starship Game (Steam key)` });
    await link.waitFor();
    expect(await page.getByRole('link', { name: new RegExp(theirs.orderId) }).count()).toBe(0);
    expect(await page.getByText(`Signed in as ${email}.`).count()).toBe(1);
    await screenshots(page, 'account-orders');

    await link.click();
    await page.waitForURL(`${server.url}/orders/${mine.id}`);
    const key = page.locator('code.key');
    await key.waitFor();
    expect(['OWL-1111-AAAA', 'OWL-2222-BBBB']).toContain(await key.textContent());
    await screenshots(page, 'delivery-from-account');

    // The other buyer's order does not open with this session.
    await page.goto(`${server.url}/orders/${theirs.id}`);
    await page.getByRole('alert').waitFor();
    expect(await page.locator('code.key').count()).toBe(0);
  });

  it('runs under a policy Chromium enforces: an injected inline script, a foreign image and a foreign fetch are refused', async () => {
    const shop = await createShop(server.url);
    await page.goto(`${server.url}/account/${shop.store.subdomain}`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    const refused = await page.evaluate(async () => {
      const directives: string[] = [];
      document.addEventListener('securitypolicyviolation', (event: any) => directives.push(event.effectiveDirective));
      const script = document.createElement('script');
      script.textContent = 'window.injected = true';
      document.body.append(script);
      const image = document.createElement('img');
      image.src = 'http://theme.test/pixel.png';
      document.body.append(image);
      const fetched = await fetch('http://theme.test/data.json').then(
        () => 'fetched',
        () => 'refused',
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      return { directives: directives.sort(), injected: window.injected === true, fetched };
    });
    expect(refused).toEqual({
      directives: ['connect-src', 'img-src', 'script-src-elem'],
      injected: false,
      fetched: 'refused',
    });
    // These refusals were the point here; the check after each test looks for unexpected ones.
    expect(watch.violations.length).toBeGreaterThan(0);
    watch.violations.length = 0;
    watch.requests.length = 0;
  });

  it('an order page opened with no credential says how to get in', async () => {
    const shop = await createShop(server.url);
    const product = await keyProduct(shop, ['LOCK-1']);
    const order = await buy(server.url, {
      storeId: shop.store.id,
      productId: product.id,
      email: `locked-${randomBytes(4).toString('hex')}@example.test`,
      ip: '198.51.100.23',
    });
    await page.goto(`${server.url}/orders/${order.id}`);
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('link from your checkout');
    expect(await page.locator('code.key').count()).toBe(0);
    await screenshots(page, 'delivery-no-access');
  });
});
