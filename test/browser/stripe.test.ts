/**
 * In a real browser: card payment through Stripe Checkout. The server talks to the local fake
 * Stripe API; the browser's visit to Stripe's page is answered by a stand-in, and Stripe's
 * return to the success address and its signed webhook are played as Stripe would.
 */
import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeStripe, type FakeStripe } from '../support/fake-stripe.js';
import { dashboard } from '../support/seller.js';
import { createShop, keyProduct, launchChromium, startPageServer, pagePerTest } from './support.js';

const WEBHOOK_SECRET = `whsec_${randomBytes(16).toString('hex')}`;

let fake: FakeStripe;
let server: Awaited<ReturnType<typeof startPageServer>>;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  fake = await startFakeStripe();
  [server, browser] = await Promise.all([
    startPageServer({
      STRIPE_SECRET_KEY: 'sk_test_browser',
      STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      STRIPE_API_BASE: fake.url,
    }),
    launchChromium(),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await fake?.close();
});
pagePerTest(
  () => ({ browser, serviceUrl: server.url }),
  (opened) => ({ page } = opened),
);

describe('card payment (stripe)', () => {
  it('sends the buyer to Stripe; a cancel comes back to the checkout with the card still chosen; after paying, the order page waits for the webhook and shows the key', async () => {
    const shop = await createShop(server.url, 'Card Shop');
    expect(
      (
        await dashboard(shop.seller, 'PATCH', `/api/dashboard/stores/${shop.store.id}`, {
          settings: { paymentMethods: ['manual', 'stripe'] },
        })
      ).status,
    ).toBe(200);
    const product = await keyProduct(shop, ['CARD-KEY-0001'], { price: 9.99 });
    const created = await fetch(`${server.url}/api/v1/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        shopId: shop.store.id,
        cart: [{ productId: product.id, quantity: 1 }],
        email: 'card@example.test',
      }),
    });
    const { url, orderId } = await created.json();

    // Stripe's page, as far as this test needs it.
    await page.route('https://checkout.stripe.test/**', (route) =>
      route.fulfill({
        status: 200,
        contentType: 'text/html',
        body: '<title>Stripe</title><p>Stripe Checkout (stand-in)</p>',
      }),
    );
    await page.goto(url);
    const card = page.getByLabel('Card', { exact: true });
    expect(await page.getByLabel('Manual payment').isChecked()).toBe(true);
    await card.check();
    await page.getByRole('button', { name: 'Pay $9.99' }).click();
    await page.waitForURL(/^https:\/\/checkout\.stripe\.test\/c\/pay\//);
    const session = [...fake.sessions.values()].find((s) => s.metadata.orderId === orderId)!;
    expect(session.url).toBe(page.url());

    // The buyer cancels on Stripe: back on the checkout (no token in that address), card still chosen.
    expect(session.cancel_url).not.toContain('token=');
    await page.goto(session.cancel_url!);
    await page.getByText('The card payment was cancelled. You can choose again.').waitFor();
    expect(await card.isChecked()).toBe(true);
    await page.getByRole('button', { name: 'Pay $9.99' }).click();
    await page.waitForURL(session.url);

    // Stripe sends the buyer back to the success address, which carries no token.
    const back = session.success_url!.replace('{CHECKOUT_SESSION_ID}', session.id);
    expect(back).not.toContain('token=');
    await page.goto(back);
    await page.waitForURL(new RegExp(`^${server.url}/orders/${orderId}`));
    await page.getByText('Waiting for your payment.', { exact: false }).waitFor();

    const event = {
      id: `evt_test_${randomBytes(8).toString('hex')}`,
      object: 'event',
      api_version: Stripe.API_VERSION,
      created: Math.floor(Date.now() / 1000),
      livemode: false,
      type: 'checkout.session.completed',
      data: {
        object: {
          id: session.id,
          object: 'checkout.session',
          payment_status: 'paid',
          amount_total: 999,
          currency: 'usd',
          metadata: { orderId },
          payment_intent: session.payment_intent,
        },
      },
    };
    const body = JSON.stringify(event);
    const notified = await fetch(`${server.url}/api/payments/stripe/webhook`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload: body, secret: WEBHOOK_SECRET }),
      },
      body,
    });
    expect(await notified.json()).toEqual({ outcome: 'settled' });
    await page.locator('code.key').waitFor();
    expect(await page.locator('code.key').textContent()).toBe('CARD-KEY-0001');
  });
});
