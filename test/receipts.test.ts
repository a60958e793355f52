/**
 * Receipts (issue 27): when an order is paid, its buyer is e-mailed a receipt, once, through the
 * mail outbox: the store's name, the lines, the total, the payment method, the store's
 * `receiptNote`, and the order's own link, which opens the order's delivery. A store can turn
 * receipts off. Black-box: the built server sending through a real SMTP listener on loopback;
 * what was recorded is read from the server's database.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct, importKeys } from './support/catalog.js';
import { buy, notify, pay, signedNotification, TEST_GATEWAY_SECRET } from './support/payments.js';
import { clientIp, createStoreFor, dashboard, registerSeller, uniqueEmail, type Seller } from './support/seller.js';
import { startServer } from './support/server.js';
import { startSmtpListener, type ReceivedMail } from './support/smtp.js';

/** The sender is woken when the settlement commits; this is only the deadline of the wait. */
const ARRIVAL_MS = 15_000;

let smtp: Awaited<ReturnType<typeof startSmtpListener>>;
let server: Awaited<ReturnType<typeof startServer>>;
let db: pg.Client;
let seller: Seller;

beforeAll(async () => {
  smtp = await startSmtpListener();
  server = await startServer({ TEST_GATEWAY_SECRET, SMTP_URL: smtp.url, MAIL_POLL_MS: '200' });
  db = new pg.Client({ connectionString: server.db.url });
  await db.connect();
  seller = await registerSeller(server.url);
});

afterAll(async () => {
  await db?.end();
  await server?.stop();
  await smtp?.stop();
});

/** A pending order of `cart` through the theme checkout, as a buyer places one (`email` null: none given). */
async function checkout(
  storeId: string,
  cart: Array<{ productId: string; quantity: number }>,
  email: string | null = uniqueEmail('buyer'),
): Promise<{ orderId: string; token: string; email: string | null }> {
  const response = await fetch(`${server.url}/api/v1/checkout`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp() },
    body: JSON.stringify({ shopId: storeId, cart, ...(email === null ? {} : { email }) }),
  });
  expect(response.status, await response.clone().text()).toBe(200);
  const { url, orderId } = await response.json();
  return { orderId, token: new URL(url).searchParams.get('token')!, email };
}

/** What the checkout page is told about the order: whether a receipt will be e-mailed. */
async function checkoutPromisesReceipt(order: { orderId: string; token: string }): Promise<boolean> {
  const response = await fetch(`${server.url}/api/checkout/enter`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp() },
    body: JSON.stringify({ orderId: order.orderId, token: order.token }),
  });
  expect(response.status).toBe(200);
  return (await response.json()).receiptsEnabled;
}

async function sellerOrder(storeId: string, orderId: string): Promise<{ orderId: string; orderUrl: string }> {
  const response = await dashboard(seller, 'GET', `/api/dashboard/stores/${storeId}/orders/${orderId}`);
  expect(response.status).toBe(200);
  return response.json();
}

async function updateSettings(storeId: string, settings: Record<string, unknown>): Promise<Response> {
  return dashboard(seller, 'PATCH', `/api/dashboard/stores/${storeId}`, { settings });
}

/** The outbox's rows for `to`: what the server recorded, committed with the payment. */
async function recordedTo(to: string): Promise<Array<{ subject: string; status: string; dedupe_key: string | null }>> {
  return (await db.query('select subject, status, dedupe_key from outbound_email where "to" = $1', [to])).rows;
}

const mailsTo = (to: string) => smtp.mails.filter((mail) => mail.to.includes(to));

/** A received receipt's bodies with the wire's CRLF line ends read as LF. */
const bodies = (mail: ReceivedMail) => ({
  text: mail.text.replace(/\r\n/g, '\n'),
  html: (mail.html ?? '').replace(/\r\n/g, '\n'),
});

/** The order link of a receipt's text: the line after the call to open the order. */
function linkIn(mail: ReceivedMail): URL {
  const link = /^Open your order.*\n(\S+)$/m.exec(bodies(mail).text)?.[1];
  expect(link, mail.text).toBeDefined();
  return new URL(link!);
}

/** Opens the order's delivery with the link's path and token, on the test server. */
async function openDelivery(link: URL): Promise<Response> {
  const orderId = /^\/orders\/([^/]+)$/.exec(link.pathname)?.[1];
  expect(orderId, link.pathname).toBeDefined();
  const token = link.searchParams.get('token');
  expect(token).toBeTruthy();
  return fetch(`${server.url}/api/orders/${orderId}/delivery?token=${encodeURIComponent(token!)}`);
}

describe('the receipt of a paid order', () => {
  it('arrives once, even when the gateway notifies twice, naming the store, the lines and the total, with a link that opens the order', async () => {
    const store = await createStoreFor(seller, `Tom & Jerry's <Goods>`);
    const key = `RCPT-${randomBytes(6).toString('hex')}`;
    const keyed = await createProduct(seller, store.id, {
      name: 'Editor Licence',
      price: 12.5,
      deliveryMethods: ['licenseKeys'],
    });
    await importKeys(seller, store.id, keyed.id, [key]);
    const guide = await createProduct(seller, store.id, {
      name: 'Icon Set <Pro>',
      price: 3,
      deliveryMethods: ['deliveryInstructions'],
      deliveryInstructions: 'Download the icons from the shared folder.',
    });
    const placed = await checkout(store.id, [
      { productId: keyed.id, quantity: 1 },
      { productId: guide.id, quantity: 2 },
    ]);
    const { orderId, email } = placed;
    expect(await checkoutPromisesReceipt(placed)).toBe(true);

    // The same notification twice (the gateway's retry), then another one for the same payment.
    const signed = signedNotification({ orderId, amount: 18.5 });
    expect(await (await notify(server.url, signed)).json()).toEqual({ outcome: 'settled' });
    expect(await (await notify(server.url, signed)).json()).toEqual({ outcome: 'duplicate' });
    expect(await (await pay(server.url, { orderId, amount: 18.5 })).json()).toEqual({ outcome: 'already_settled' });

    const receipt = await smtp.waitFor((mail) => mail.to.includes(email!), ARRIVAL_MS);
    const detail = await sellerOrder(store.id, orderId);
    expect(receipt.subject).toBe(`Your receipt from Tom & Jerry's <Goods> — ${detail.orderId}`);
    const { text, html } = bodies(receipt);
    expect(receipt.html, 'an HTML alternative').toBeDefined();

    expect(text).toContain(`Thank you for your order from Tom & Jerry's <Goods>.`);
    expect(text).toContain(`Order ${detail.orderId}, paid `);
    expect(text).toContain('- Editor Licence\n  1 × $12.50 = $12.50');
    expect(text).toContain('- Icon Set <Pro>\n  2 × $3.00 = $6.00');
    expect(text).toContain('Total: $18.50');
    expect(text).toContain('Paid with: Test payment');
    expect(text).not.toContain('Discount');

    expect(html).toContain('Tom &amp; Jerry&#39;s &lt;Goods&gt;');
    expect(html).not.toContain('<Goods>');
    expect(html).toContain('<th scope="col"');
    expect(html).toContain('>Icon Set &lt;Pro&gt;</td>');
    expect(html).toContain('>$6.00</td>');
    expect(html).toContain('>$18.50</td>');
    expect(html).not.toMatch(/<img|<script|<link|<style|url\(/i);

    // The link is the order's own (the one the seller reads), and it opens the delivery.
    const link = linkIn(receipt);
    expect(link.href).toBe(detail.orderUrl);
    expect(html).toContain(`href="${detail.orderUrl}"`);
    const delivery = await openDelivery(link);
    expect(delivery.status).toBe(200);
    const goods = await delivery.json();
    expect(goods.orderId).toBe(orderId);
    expect(goods.licenseKeys.map((k: { key: string }) => k.key)).toEqual([key]);
    // The key is behind the link, never in the mail.
    expect(text).not.toContain(key);
    expect(html).not.toContain(key);

    // One receipt recorded and sent, and one received.
    await expect
      .poll(() => recordedTo(email!), { timeout: ARRIVAL_MS })
      .toEqual([{ subject: receipt.subject, status: 'sent', dedupe_key: `receipt:${orderId}` }]);
    expect(mailsTo(email!)).toHaveLength(1);
  });

  it('shows the discount of a coupon and ends with the store’s receipt note', async () => {
    const store = await createStoreFor(seller, 'Note Shop');
    const note = 'Questions? Write to help@note.example.\nThanks <3';
    const set = await updateSettings(store.id, { receiptNote: note });
    expect(set.status, await set.clone().text()).toBe(200);
    expect((await set.json()).settings).toMatchObject({ receiptsEnabled: true, receiptNote: note });
    const product = await createProduct(seller, store.id, {
      name: 'Poster',
      price: 20,
      deliveryMethods: ['deliveryInstructions'],
      deliveryInstructions: 'Print it.',
    });
    const coupon = await dashboard(seller, 'POST', `/api/dashboard/stores/${store.id}/coupons`, {
      code: `HALF${randomBytes(3).toString('hex')}`.toUpperCase(),
      discountType: 'percent',
      discountValue: 25,
    });
    expect(coupon.status, await coupon.clone().text()).toBe(201);
    const { code } = await coupon.json();
    const email = uniqueEmail('buyer');
    const { price } = await buy(server.url, { storeId: store.id, productId: product.id, email, coupon: code });
    expect(price).toBe(15);

    const receipt = await smtp.waitFor((mail) => mail.to.includes(email), ARRIVAL_MS);
    const { text, html } = bodies(receipt);
    expect(text).toContain('Subtotal: $20.00\nDiscount: −$5.00\nTotal: $15.00');
    expect(text).toContain(note);
    expect(html).toContain('Questions? Write to help@note.example.<br>\nThanks &lt;3');
    expect(html).toContain('>−$5.00</td>');
  });

  it('refuses a receipt note with control characters or over 1,000 characters, and a receiptsEnabled that is not a boolean', async () => {
    const store = await createStoreFor(seller, 'Strict Shop');
    for (const settings of [
      { receiptNote: 'Bell \u0007 here' },
      { receiptNote: 'x'.repeat(1001) },
      { receiptsEnabled: 'false' },
      { receiptsEnabled: null },
    ]) {
      const response = await updateSettings(store.id, settings);
      expect(response.status, JSON.stringify(settings)).toBe(400);
      expect((await response.json()).code).toBe('validation_failed');
    }
    const kept = await dashboard(seller, 'GET', `/api/dashboard/stores/${store.id}`);
    expect((await kept.json()).settings).toMatchObject({ receiptsEnabled: true, receiptNote: '' });
    expect((await updateSettings(store.id, { receiptNote: 'x'.repeat(1000) })).status).toBe(200);
  });

  it('is sent for an order the seller marks paid', async () => {
    const store = await createStoreFor(seller, 'Manual Shop');
    const product = await createProduct(seller, store.id, {
      name: 'Logo Design',
      price: 40,
      deliveryMethods: ['manualDelivery'],
    });
    const { orderId, email } = await checkout(store.id, [{ productId: product.id, quantity: 1 }]);
    const paid = await dashboard(seller, 'POST', `/api/dashboard/stores/${store.id}/orders/${orderId}/mark-paid`);
    expect(paid.status, await paid.clone().text()).toBe(200);
    const detail = await paid.json();

    const receipt = await smtp.waitFor((mail) => mail.to.includes(email!), ARRIVAL_MS);
    expect(receipt.subject).toBe(`Your receipt from Manual Shop — ${detail.orderId}`);
    const { text } = bodies(receipt);
    expect(text).toContain('- Logo Design\n  1 × $40.00 = $40.00');
    expect(text).toContain('Paid with: Manual payment');
    expect(linkIn(receipt).href).toBe(detail.orderUrl);
    expect((await openDelivery(linkIn(receipt))).status).toBe(200);
    expect(await recordedTo(email!)).toHaveLength(1);
  });

  it('is not sent when the store turned receipts off, nor for an order without a buyer e-mail', async () => {
    const store = await createStoreFor(seller, 'Quiet Shop');
    const off = await updateSettings(store.id, { receiptsEnabled: false });
    expect(off.status).toBe(200);
    expect((await off.json()).settings).toMatchObject({ receiptsEnabled: false });
    const product = await createProduct(seller, store.id, {
      name: 'Sample',
      price: 2,
      deliveryMethods: ['deliveryInstructions'],
      deliveryInstructions: 'Here.',
    });
    const email = uniqueEmail('buyer');
    const quiet = await checkout(store.id, [{ productId: product.id, quantity: 1 }], email);
    expect(await checkoutPromisesReceipt(quiet)).toBe(false);
    expect(await (await pay(server.url, { orderId: quiet.orderId, amount: 2 })).json()).toEqual({ outcome: 'settled' });
    const marked = await checkout(store.id, [{ productId: product.id, quantity: 1 }], email);
    expect(
      (await dashboard(seller, 'POST', `/api/dashboard/stores/${store.id}/orders/${marked.orderId}/mark-paid`)).status,
    ).toBe(200);
    // The receipt would have been recorded with the payment: nothing was.
    expect(await recordedTo(email)).toEqual([]);

    // On again: the next paid order of the same buyer gets one, and only that one is ever received.
    expect((await updateSettings(store.id, { receiptsEnabled: true })).status).toBe(200);
    const loud = await buy(server.url, { storeId: store.id, productId: product.id, email });
    expect(loud.price).toBe(2);
    const receipt = await smtp.waitFor((mail) => mail.to.includes(email), ARRIVAL_MS);
    expect(linkIn(receipt).pathname).toBe(`/orders/${loud.id}`);
    expect(mailsTo(email)).toHaveLength(1);
    expect((await recordedTo(email)).map((row) => row.dedupe_key)).toEqual([`receipt:${loud.id}`]);

    // An order placed without an e-mail and settled by the seller has no one to send to.
    const anonymous = await checkout(store.id, [{ productId: product.id, quantity: 1 }], null);
    expect(
      (await dashboard(seller, 'POST', `/api/dashboard/stores/${store.id}/orders/${anonymous.orderId}/mark-paid`))
        .status,
    ).toBe(200);
    const rows = await db.query('select count(*)::int as n from outbound_email where dedupe_key = $1', [
      `receipt:${anonymous.orderId}`,
    ]);
    expect(rows.rows[0].n).toBe(0);
  });
});
