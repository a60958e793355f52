/**
 * In a real browser: the developer's corner of the dashboard (issue 29). A seller creates an API
 * key with order:read only and copies it from the dialog; the test uses it over HTTP (orders:
 * yes; webhooks: 403), revokes it on the page (401 from then on). A license disabled on its page
 * answers `disabled` to the License API. An endpoint at a local receiver that fails twice shows
 * both failures in its delivery log with the receiver's status and body; `Retry` delivers the
 * event (the receiver checks the signature with @svc/sdk), and a replay of the range sends it
 * again with the same event id; each attempt's row shows the headers it went out with, the same
 * signatures the receiver got. A whole key typed in the Licenses screen's `Key` field finds its
 * sale, shown masked, and is left in no URL. axe-core finds nothing serious or critical on these screens.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { constructEvent, createMerchantClient } from '@svc/sdk';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buy } from '../support/payments.js';
import { dashboard, type Seller } from '../support/seller.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { createShop, keyProduct, launchChromium, pagePerTest, startPageServer, unlabelledControls } from './support.js';

// Evaluated in the page; tsconfig.test.json has no DOM types.
declare const window: any;

const require = createRequire(import.meta.url);
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js', { paths: ['apps/dashboard'] }), 'utf8');

let server: Awaited<ReturnType<typeof startPageServer>>;
let browser: Browser;
let page: Page;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  [server, browser] = await Promise.all([startPageServer(), launchChromium()]);
});
afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await browser?.close();
  await server?.stop();
});
pagePerTest(
  () => ({ browser, serviceUrl: server.url }),
  (opened) => ({ page } = opened),
);

async function signIn(seller: Seller, path: string): Promise<void> {
  await page.goto(`${server.url}/dashboard/sign-in?redirect=${encodeURIComponent(path)}`);
  await page.getByLabel('Email').fill(seller.email);
  await page.getByLabel('Password').fill(seller.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`**/dashboard${path.split('?')[0]}*`);
}

/** axe-core in the page (evaluated over the debugging protocol: the CSP allows no injected script tag). */
async function seriousViolations(): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const found: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }> = await page.evaluate(
    async () => (await window.axe.run(window.document, { resultTypes: ['violations'] })).violations,
  );
  return found
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`);
}

async function checkScreen(): Promise<void> {
  expect(await page.getByRole('heading', { level: 1 }).count()).toBe(1);
  expect(await unlabelledControls(page)).toEqual([]);
  expect(await seriousViolations()).toEqual([]);
}

describe('API keys', () => {
  it('creates a key with order:read only, shows it once; it lists orders, is refused on webhooks, and answers 401 once revoked', async () => {
    const shop = await createShop(server.url, 'Key Works');
    await signIn(shop.seller, `/stores/${shop.store.id}/api-keys`);
    await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();

    await page.getByRole('button', { name: 'Create API key' }).click();
    const form = page.getByRole('dialog', { name: 'Create an API key' });
    await form.getByLabel('Name', { exact: true }).fill('Reporting');
    await form.getByRole('checkbox', { name: /^order:read\b/ }).check();
    await expect
      .poll(() => form.getByRole('checkbox', { name: 'Key Works' }).isChecked(), { timeout: 10_000 })
      .toBe(true);
    await checkScreen();
    await form.getByRole('button', { name: 'Create key' }).click();

    const shown = page.getByRole('dialog', { name: 'Your new API key' });
    await shown.getByRole('button', { name: 'Copy' }).waitFor();
    const key = (await shown.getByLabel('Secret').textContent())?.trim() ?? '';
    expect(key).toMatch(/^sk_live_[0-9A-Za-z]{40}$/);
    await shown.getByRole('button', { name: 'Done' }).click();

    const row = page.getByRole('row', { name: /Reporting/ });
    await expect.poll(() => row.textContent(), { timeout: 10_000 }).toContain(`${key.slice(0, 14)}…`);
    expect(await row.textContent()).toContain('order:read');
    expect(await row.textContent()).not.toContain(key);
    await checkScreen();

    const merchant = (path: string) =>
      fetch(`${server.url}/api/merchant/v1/stores/${shop.store.id}${path}`, {
        headers: { authorization: `Bearer ${key}` },
      });
    const orders = await merchant('/orders');
    expect(orders.status, await orders.clone().text()).toBe(200);
    expect(await orders.json()).toMatchObject({ orders: [] });
    expect((await merchant('/webhooks')).status).toBe(403);

    await page.getByRole('button', { name: 'Revoke Reporting' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Revoke' }).click();
    await expect.poll(() => row.textContent(), { timeout: 10_000 }).toContain('Revoked');
    expect((await merchant('/orders')).status).toBe(401);

    // The Developers home offers the key's prefix as the placeholder of its snippets (a revoked key is not offered).
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Developers' }).click();
    await page.getByRole('heading', { level: 1, name: 'Developers' }).waitFor();
    expect(await page.getByText('No key of yours reaches this store').isVisible()).toBe(true);
    expect(await page.getByText(shop.store.id).first().isVisible()).toBe(true);
    await checkScreen();
  }, 120_000);
});

describe('the Developers screen', () => {
  it("shows the origin as the SDK's base URL, and a curl that a shell refusing unmatched globs (zsh) runs as written", async () => {
    const shop = await createShop(server.url, 'Snippet Works');
    const created = await dashboard(shop.seller, 'POST', '/api/dashboard/api-keys', {
      name: 'Snippets',
      scopes: ['order:read'],
      storeIds: [shop.store.id],
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const { key } = (await created.json()) as { key: string };
    await signIn(shop.seller, `/stores/${shop.store.id}/developers`);
    await page.getByRole('heading', { level: 1, name: 'Developers' }).waitFor();

    // The base URL is the origin, and the SDK given exactly that lists the orders.
    const baseUrl = (await page.locator('dt', { hasText: 'Base URL' }).locator('+ dd code').textContent())?.trim();
    expect(baseUrl).toBe(server.url);
    const listed = await createMerchantClient({ baseUrl: baseUrl!, apiKey: key }).orders.list({
      storeId: shop.store.id,
      limit: 10,
    });
    expect(listed.orders).toEqual([]);
    const sdk = await page.getByRole('region', { name: '@svc/sdk' }).locator('pre').textContent();
    expect(sdk).toContain(`baseUrl: '${server.url}',`);

    // The curl snippet, with the whole key in place of its prefix, run by bash with failglob (an
    // unquoted `?` that matches no file is then an error, as in zsh): it lists the orders.
    const curl = (await page.getByRole('region', { name: 'curl' }).locator('pre').textContent()) ?? '';
    expect(curl).toContain(`curl '${server.url}/api/merchant/v1/stores/${shop.store.id}/orders?limit=10'`);
    const command = curl.replace(/sk_live_[0-9A-Za-z]*\.\.\./, key);
    const run = spawnSync('bash', ['-O', 'failglob', '-c', `${command} --silent --show-error --fail`], {
      encoding: 'utf8',
      cwd: mkdtempSync(path.join(tmpdir(), 'svc-curl-')),
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ orders: [] });
    await checkScreen();
  });
});

describe('license signing keys', () => {
  it('rotates the signing key behind a dialog: the table shows the old key retired and still published, the JWKS holds both', async () => {
    const shop = await createShop(server.url, 'Lease Works');
    const jwksUrl = `${server.url}/api/v1/licenses/jwks/${shop.store.id}`;
    await signIn(shop.seller, `/stores/${shop.store.id}/developers`);
    const section = page.getByRole('region', { name: 'License signing keys' });
    await section.getByRole('table', { name: 'License signing keys' }).getByText('Current').waitFor();
    expect(await section.locator('code').first().textContent()).toBe(jwksUrl);
    const before = (await (await fetch(jwksUrl)).json()) as { keys: Array<{ kid: string }> };
    await section.getByRole('button', { name: 'Rotate signing key' }).click();
    const dialog = page.getByRole('alertdialog', { name: 'Rotate the license signing key?' });
    await dialog.getByRole('button', { name: 'Rotate' }).click();
    await dialog.waitFor({ state: 'detached' });
    await section.getByText(/^Retired .*; in the JWKS until /).waitFor();
    const rows = section.getByRole('table', { name: 'License signing keys' }).locator('tbody tr');
    expect(await rows.count()).toBe(2);
    const after = (await (await fetch(jwksUrl)).json()) as { keys: Array<{ kid: string }> };
    expect(after.keys.length).toBe(before.keys.length + 1);
    expect(after.keys.map((k) => k.kid)).toEqual(expect.arrayContaining(before.keys.map((k) => k.kid)));
    await checkScreen();
  });
});

describe('licenses', () => {
  it('disables a license on its page; the License API then answers disabled, and valid again once enabled', async () => {
    const shop = await createShop(server.url, 'License Works');
    const licenseKey = `LIC-${randomBytes(6).toString('hex').toUpperCase()}`;
    const product = await keyProduct(shop, [licenseKey]);
    const order = await buy(server.url, { storeId: shop.store.id, productId: product.id });
    const validate = async () => {
      const response = await fetch(`${server.url}/api/v1/licenses/validate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.200' },
        body: JSON.stringify({ productId: product.id, key: licenseKey }),
      });
      expect(response.status, await response.clone().text()).toBe(200);
      return (await response.json()) as { valid: boolean; reason: string | null };
    };
    expect(await validate()).toMatchObject({ valid: true, reason: null });

    await signIn(shop.seller, `/stores/${shop.store.id}/licenses?status=active`);
    const link = page.getByRole('link', { name: new RegExp(`of ${order.orderId}$`) });
    await link.waitFor();
    expect(await page.getByLabel('Status').inputValue()).toBe('active');
    await checkScreen();

    // Found by its whole key: the sale shows, masked; the key is in no URL and left in no field.
    const keyRequests: string[] = [];
    page.on('request', (request) => keyRequests.push(request.url()));
    await page.getByLabel('Key', { exact: true }).fill(licenseKey);
    await page.getByRole('button', { name: 'Find' }).click();
    const matches = page.getByRole('table', { name: 'Licenses with this key' });
    await matches.getByRole('link', { name: new RegExp(`of ${order.orderId}$`) }).waitFor();
    expect(await matches.textContent()).toContain(`••••••••${licenseKey.slice(-4)}`);
    expect(await matches.textContent()).not.toContain(licenseKey);
    expect(await page.getByLabel('Key', { exact: true }).inputValue()).toBe('');
    expect(page.url()).not.toContain(licenseKey);
    expect(keyRequests.filter((url) => url.includes(licenseKey))).toEqual([]);
    await checkScreen();
    await page.getByLabel('Key', { exact: true }).fill(`${licenseKey}-WRONG`);
    await page.getByRole('button', { name: 'Find' }).click();
    await page.getByText('No sold license of this store has this key.').waitFor();
    await page.getByRole('button', { name: 'Clear' }).click();
    await matches.waitFor({ state: 'detached' });

    await link.click();

    await expect
      .poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 10_000 })
      // The license's own heading ("License ••••"), not the list's "Licenses" still on screen.
      .toMatch(/^License\s/);
    await checkScreen();
    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('button', { name: 'Enable' }).waitFor();
    expect(await validate()).toMatchObject({ valid: false, reason: 'disabled' });

    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('button', { name: 'Disable' }).waitFor();
    expect(await validate()).toMatchObject({ valid: true, reason: null });
  }, 120_000);
});

describe('webhooks', () => {
  it('logs two failures with the receiver’s answers, delivers on Retry (signature checked with @svc/sdk), and replays a range with the same event id', async () => {
    const shop = await createShop(server.url, 'Hook Works');
    const product = await keyProduct(shop, [`HOOK-${randomBytes(6).toString('hex')}`]);
    let secret = '';
    const receiver = await startWebhookReceiver({
      secretFor: () => secret,
      answer: (_hit, index) =>
        index < 2 ? { status: 503, body: `not ready ${index + 1}` } : { status: 200, body: 'ok' },
    });
    receivers.push(receiver);

    await signIn(shop.seller, `/stores/${shop.store.id}/webhooks`);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const form = page.getByRole('dialog', { name: 'Add a webhook endpoint' });
    await form.getByLabel('Name').fill('Fulfilment');
    await form.getByLabel('URL').fill(`${receiver.url}/svc`);
    await form.getByRole('checkbox', { name: 'order.paid' }).check();
    await form.getByRole('button', { name: 'Add endpoint' }).click();
    const shown = page.getByRole('dialog', { name: 'Signing secret' });
    secret = (await shown.getByLabel('Secret').textContent())?.trim() ?? '';
    expect(secret).toMatch(/^whsec_/);
    await shown.getByRole('button', { name: 'Done' }).click();
    await checkScreen();

    const from = new Date(Date.now() - 1_000);
    await buy(server.url, { storeId: shop.store.id, productId: product.id });
    // Attempt 1 at once, attempt 2 five seconds later (the retry schedule); both answered 503.
    const failures = await receiver.waitFor(2, { timeoutMs: 30_000 });
    const eventId = failures[0]!.eventId!;
    expect(failures[1]!.eventId).toBe(eventId);

    await page.getByRole('link', { name: 'Fulfilment' }).click();
    await page.getByRole('heading', { level: 1, name: 'Fulfilment' }).waitFor();
    await page.getByLabel('Status', { exact: true }).selectOption('failed');
    await page.waitForURL(/status=failed/);
    const failedRows = page
      .getByRole('table', { name: 'Deliveries' })
      .getByRole('row')
      .filter({ hasText: 'order.paid' });
    await expect.poll(() => failedRows.count(), { timeout: 10_000 }).toBe(2);
    for (const index of [0, 1]) {
      const row = failedRows.nth(index);
      expect(await row.textContent()).toContain('503');
      await row.getByText('Details').click();
      expect(await row.textContent()).toContain(`not ready ${2 - index}`);
      // The headers that attempt went out with: the same signatures the receiver got (newest row first).
      const got = failures[1 - index]!.headers;
      const sent =
        (await row.getByRole('region', { name: /^Request headers of order\.paid attempt/ }).textContent()) ?? '';
      for (const name of ['x-service-signature', 'webhook-signature', 'webhook-timestamp', 'x-service-delivery-id']) {
        expect(got[name]).toBeTruthy();
        expect(sent).toContain(`${name}: ${String(got[name])}`);
      }
    }
    await checkScreen();

    await failedRows
      .first()
      .getByRole('button', { name: /^Retry/ })
      .click();
    const delivered = await receiver.waitFor(3, { timeoutMs: 15_000 });
    const third = delivered[2]!;
    expect(third.eventId).toBe(eventId);
    const event = await constructEvent(third.rawBody, third.headers, secret);
    expect(event).toMatchObject({ id: eventId, event: 'order.paid' });

    // The log shows the success (the status filter off).
    await page.getByLabel('Status', { exact: true }).selectOption('');
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Refresh' }).click();
          return page
            .getByRole('table', { name: 'Deliveries' })
            .getByRole('row', { name: /Success/ })
            .count();
        },
        // The receiver answered; the dispatcher records the success when it has the answer (a busy CI machine: later).
        { timeout: 30_000, interval: 500 },
      )
      .toBeGreaterThanOrEqual(1);
    await page.getByRole('img', { name: 'Last 24 hours: 1 successful and 2 failed attempts' }).waitFor();

    // Replay the range: the same event, with the same id, arrives again.
    const local = (date: Date) =>
      new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 19);
    await page.getByLabel('From', { exact: true }).fill(local(from));
    await page.getByLabel('To', { exact: true }).fill(local(new Date(Date.now() + 60_000)));
    await page.getByRole('button', { name: 'Replay' }).click();
    await page.getByText(/Queued 1 event again/).waitFor();
    const replayed = await receiver.waitFor(4, { timeoutMs: 15_000 });
    expect(replayed[3]!.eventId).toBe(eventId);
    expect(replayed[3]!.serviceSignatureValid).toBe(true);

    // The event page: its JSON, the deliveries it produced, and Resend to the endpoint.
    await page.goto(`${server.url}/dashboard/stores/${shop.store.id}/events/${eventId}`);
    await expect
      .poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 10_000 })
      .toContain('order.paid');
    expect(JSON.parse((await page.getByLabel('Event JSON').textContent()) ?? '')).toMatchObject({ id: eventId });
    await expect
      .poll(() => page.getByRole('table', { name: 'Deliveries of this event' }).getByRole('row').count(), {
        timeout: 10_000,
      })
      .toBeGreaterThanOrEqual(5);
    await checkScreen();
    await page.getByRole('button', { name: 'Resend' }).click();
    await page.getByText(/Queued as attempt/).waitFor();
    expect((await receiver.waitFor(5, { timeoutMs: 15_000 }))[4]!.eventId).toBe(eventId);

    // The events list finds it by type.
    await page.goto(`${server.url}/dashboard/stores/${shop.store.id}/events?type=order.paid`);
    await page.getByRole('link', { name: eventId }).waitFor();
    await checkScreen();

    // Disabled: the endpoint page says so, with Enable.
    const hooks = await (await dashboard(shop.seller, 'GET', `/api/dashboard/stores/${shop.store.id}/webhooks`)).json();
    const patched = await dashboard(
      shop.seller,
      'PATCH',
      `/api/dashboard/stores/${shop.store.id}/webhooks/${hooks.webhooks[0].id}`,
      { enabled: false },
    );
    expect(patched.status).toBe(200);
    await page.goto(`${server.url}/dashboard/stores/${shop.store.id}/webhooks/${hooks.webhooks[0].id}`);
    await page.getByRole('heading', { name: 'This endpoint is disabled' }).waitFor();
    await checkScreen();
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('button', { name: 'Send test' }).waitFor();

    // More attempts than a page holds (25): the shared pager's links carry the cursor in the URL and back.
    const hookPath = `/api/dashboard/stores/${shop.store.id}/webhooks/${hooks.webhooks[0].id}`;
    for (let i = 0; i < 25; i++) expect((await dashboard(shop.seller, 'POST', `${hookPath}/test`)).status).toBe(200);
    await page.reload();
    const log = page.getByRole('table', { name: 'Deliveries' });
    const pages = page.getByRole('navigation', { name: 'Pages' });
    await pages.getByRole('link', { name: 'Next page' }).click();
    await page.waitForURL(/[?&]cursor=/);
    await expect.poll(() => log.getByRole('row').filter({ hasText: 'order.paid' }).count()).toBeGreaterThan(0);
    expect(await log.getByRole('row').filter({ hasText: 'webhook.test' }).count()).toBeLessThan(25);
    await checkScreen();
    await pages.getByRole('link', { name: 'First page' }).click();
    await expect.poll(() => page.url()).not.toContain('cursor=');
    await expect.poll(() => log.getByRole('row').filter({ hasText: 'webhook.test' }).count()).toBe(25);
  }, 180_000);
});
