/**
 * Black-box: invoices and credit notes as PDFs (docs/decisions.md, "#42 Invoices"). A store that
 * charges tax (its `settings.tax` set through the dashboard's store PATCH) sells to a buyer in
 * France; once paid the order's invoice is a PDF at the merchant API (order:read), the dashboard
 * and the buyer's own access; its text (poppler's pdftotext) names the seller, the buyer, the
 * number, each line, the tax per rate and the total, and page 1 renders (pdftoppm). A reverse-
 * charge sale prints the buyer's VAT id and the note; a refund's credit note names the invoice.
 * An order without one answers 404 `not_found` with our error body.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createMerchantClient, SvcNotFoundError } from '@svc/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct } from './support/catalog.js';
import { pay, TEST_GATEWAY_SECRET } from './support/payments.js';
import { createKeyFor, dashboard, registerSeller, type Seller } from './support/seller.js';
import { startServer } from './support/server.js';

let server: Awaited<ReturnType<typeof startServer>>;
let owner: Seller;
let store: { id: string };
let untaxedStore: { id: string };
let key: string;
let fontPack: { id: string };
let guide: { id: string };
let plain: { id: string };
const dir = mkdtempSync(path.join(tmpdir(), 'svc-invoices-'));

const REVERSE_CHARGE_NOTE = 'Reverse charge: VAT to be accounted for by the recipient (Art. 196 Directive 2006/112/EC)';

async function newStore(currency: string): Promise<{ id: string }> {
  const response = await dashboard(owner, 'POST', '/api/dashboard/stores', {
    name: 'Pixel Forge',
    subdomain: `shop-${randomBytes(5).toString('hex')}`,
    currency,
  });
  expect(response.status, await response.clone().text()).toBe(201);
  return response.json();
}

beforeAll(async () => {
  server = await startServer({ TEST_GATEWAY_SECRET });
  owner = await registerSeller(server.url);
  store = await newStore('EUR');
  untaxedStore = await newStore('EUR');
  const taxed = await dashboard(owner, 'PATCH', `/api/dashboard/stores/${store.id}`, {
    settings: {
      tax: {
        behavior: 'exclusive',
        originCountry: 'DE',
        registrations: ['EU'],
        sellerName: 'Pixel Forge GmbH',
        sellerAddress: 'Hauptstr. 1\n10115 Berlin',
        sellerTaxId: 'DE123456789',
      },
    },
  });
  expect(taxed.status, await taxed.clone().text()).toBe(200);
  key = (await createKeyFor(owner, { scopes: ['order:read'], storeIds: [store.id, untaxedStore.id] })).key;
  fontPack = await createProduct(owner, store.id, { name: 'Font Pack', price: 19.99 });
  guide = await createProduct(owner, store.id, { name: 'Type Guide', price: 9.99, taxCategory: 'ebook' } as never);
  plain = await createProduct(owner, untaxedStore.id, { name: 'Icons', price: 5 });
});

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Paid {
  id: string;
  token: string;
  email: string;
}

/** A checkout as a buyer makes it, with billing details, opened with its token and paid through the test gateway. */
async function buyWithBilling(body: Record<string, unknown>, storeId = store.id): Promise<Paid> {
  const headers = { 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.7' };
  const email = `buyer-${randomBytes(4).toString('hex')}@example.test`;
  const checkout = await fetch(`${server.url}/api/v1/checkout`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ shopId: storeId, email, ...body }),
  });
  expect(checkout.status, await checkout.clone().text()).toBe(200);
  const { url, orderId: id } = (await checkout.json()) as { url: string; orderId: string };
  const token = new URL(url).searchParams.get('token')!;
  const entered = await fetch(`${server.url}/api/checkout/enter`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ orderId: id, token }),
  });
  expect(entered.status, await entered.clone().text()).toBe(200);
  const { order } = (await entered.json()) as { order: { price: number; currency: string } };
  const paid = await pay(server.url, { orderId: id, amount: order.price, currency: order.currency });
  expect(await paid.json()).toEqual({ outcome: 'settled' });
  return { id, token, email };
}

const merchant = (path: string) =>
  fetch(`${server.url}/api/merchant/v1${path}`, { headers: { authorization: `Bearer ${key}` } });

/** The PDF's text as pdftotext lays it out, after checking the answer and that page 1 renders. */
async function pdfText(response: Response, name: string): Promise<string> {
  expect(response.status, response.status === 200 ? '' : await response.clone().text()).toBe(200);
  expect(response.headers.get('content-type')).toBe('application/pdf');
  expect(response.headers.get('cache-control')).toBe('private, no-store');
  const bytes = Buffer.from(await response.arrayBuffer());
  expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
  const file = path.join(dir, `${name}.pdf`);
  writeFileSync(file, bytes);
  execFileSync('pdftoppm', ['-png', '-r', '50', '-f', '1', '-l', '1', file, path.join(dir, name)]);
  const page = readdirSync(dir).find((entry) => entry.startsWith(`${name}-`) && entry.endsWith('.png'));
  expect(page, 'page 1 rendered').toBeDefined();
  expect(statSync(path.join(dir, page!)).size).toBeGreaterThan(1000);
  return execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' });
}

async function orderOf(id: string) {
  const response = await merchant(`/stores/${store.id}/orders/${id}`);
  expect(response.status).toBe(200);
  return (await response.json()) as {
    orderId: string;
    invoiceNumber: string | null;
    creditNoteNumber: string | null;
    price: number;
    taxAmount: number;
  };
}

describe('an invoice', () => {
  let order: Paid;
  let number: string;
  let orderNumber: string;

  beforeAll(async () => {
    order = await buyWithBilling({
      cart: [
        { productId: fontPack.id, quantity: 2 },
        { productId: guide.id, quantity: 1 },
      ],
      country: 'FR',
      billingName: 'Ana Lopez',
      billingAddress: '1 rue de la Paix\n75002 Paris',
    });
    const read = await orderOf(order.id);
    expect(read.invoiceNumber).toMatch(/^INV-\d{4}-1$/);
    number = read.invoiceNumber!;
    orderNumber = read.orderId;
    // France: 20% on 2 x 19.99 (7.996 -> 8.00), 5.5% on the e-book's 9.99 (0.54945 -> 0.55).
    expect(read.taxAmount).toBe(8.55);
    expect(read.price).toBe(58.52);
  });

  it('is a PDF at the merchant API naming the seller, the buyer, the number, each line, the tax per rate and the total', async () => {
    const response = await merchant(`/stores/${store.id}/orders/${order.id}/invoice`);
    expect(response.headers.get('content-disposition')).toBe(`inline; filename="${number}.pdf"`);
    const text = await pdfText(response, 'merchant-invoice');
    for (const expected of [
      `Invoice ${number}`,
      orderNumber,
      'Pixel Forge GmbH',
      'Hauptstr. 1',
      '10115 Berlin',
      'VAT id: DE123456789',
      'Ana Lopez',
      '1 rue de la Paix',
      '75002 Paris',
      'Country: FR',
      order.email,
      'Tax 20% on 39.98',
      'Tax 5.5% on 9.99',
    ])
      expect(text).toContain(expected);
    expect(text).toMatch(/Font Pack\s+2\s+19\.99\s+0\.00\s+39\.98\s+20%\s+8\.00\s+47\.98/);
    expect(text).toMatch(/Type Guide\s+1\s+9\.99\s+0\.00\s+9\.99\s+5\.5%\s+0\.55\s+10\.54/);
    expect(text).toMatch(/Net \(EUR\)\s+49\.97/);
    expect(text).toMatch(/Tax \(EUR\)\s+8\.55/);
    expect(text).toMatch(/Total \(EUR\)\s+58\.52/);
    expect(text).not.toContain('Reverse charge');
  });

  it('is the same document by ORD-<n>, on the dashboard, and through the buyer order access', async () => {
    const byNumber = await pdfText(await merchant(`/stores/${store.id}/orders/${orderNumber}/invoice`), 'by-number');
    expect(byNumber).toContain(`Invoice ${number}`);
    const fromDashboard = await pdfText(
      await dashboard(owner, 'GET', `/api/dashboard/stores/${store.id}/orders/${order.id}/invoice`),
      'dashboard-invoice',
    );
    expect(fromDashboard).toContain(`Invoice ${number}`);
    const buyer = await pdfText(
      await fetch(`${server.url}/api/orders/${order.id}/invoice?token=${order.token}`),
      'buyer-invoice',
    );
    expect(buyer).toContain(`Invoice ${number}`);
    expect(buyer).toContain('Ana Lopez');
  });

  it('is refused to a buyer without the order access, and to another store', async () => {
    const none = await fetch(`${server.url}/api/orders/${order.id}/invoice`);
    expect(none.status).toBe(401);
    expect((await none.json()).code).toBe('unauthorized');
    const wrong = await fetch(`${server.url}/api/orders/${order.id}/invoice?token=${'0'.repeat(43)}`);
    expect(wrong.status).toBe(403);
    const elsewhere = await merchant(`/stores/${untaxedStore.id}/orders/${order.id}/invoice`);
    expect(elsewhere.status).toBe(404);
    expect(await elsewhere.json()).toMatchObject({ code: 'not_found' });
    const unknownQuery = await merchant(`/stores/${store.id}/orders/${order.id}/invoice?format=html`);
    expect(unknownQuery.status).toBe(400);
  });

  it('has no credit note until the order is refunded; then the credit note names the invoice', async () => {
    const before = await merchant(`/stores/${store.id}/orders/${order.id}/credit-note`);
    expect(before.status).toBe(404);
    expect(await before.json()).toMatchObject({ code: 'not_found', error: expect.stringContaining('credit note') });
    const refund = await dashboard(owner, 'POST', `/api/dashboard/stores/${store.id}/orders/${order.id}/refund`, {});
    expect(refund.status, await refund.clone().text()).toBe(200);
    const read = await orderOf(order.id);
    expect(read.creditNoteNumber).toMatch(/^CN-\d{4}-1$/);
    const text = await pdfText(
      await merchant(`/stores/${store.id}/orders/${order.id}/credit-note`),
      'merchant-credit-note',
    );
    expect(text).toContain(`Credit note ${read.creditNoteNumber}`);
    expect(text).toContain(`Credit note for invoice ${number}`);
    expect(text).toMatch(/Font Pack\s+2\s+-19\.99\s+0\.00\s+-39\.98\s+20%\s+-8\.00\s+-47\.98/);
    expect(text).toMatch(/Total credited \(EUR\)\s+-58\.52/);
    // The invoice stays what it was; the buyer reads the credit note too.
    expect(await pdfText(await merchant(`/stores/${store.id}/orders/${order.id}/invoice`), 'after')).toContain(
      `Invoice ${number}`,
    );
    const buyer = await pdfText(
      await fetch(`${server.url}/api/orders/${order.id}/credit-note?token=${order.token}`),
      'buyer-credit-note',
    );
    expect(buyer).toContain(`Credit note for invoice ${number}`);
  });
});

describe('a reverse-charge invoice', () => {
  it("shows the buyer's VAT id, no tax and the note", async () => {
    const order = await buyWithBilling({
      cart: [{ productId: fontPack.id, quantity: 1 }],
      country: 'FR',
      taxId: 'FR40303265045',
      billingName: 'Atelier SARL',
      billingAddress: '5 avenue Foch\n69006 Lyon',
    });
    const read = await orderOf(order.id);
    expect(read.taxAmount).toBe(0);
    const text = await pdfText(await merchant(`/stores/${store.id}/orders/${order.id}/invoice`), 'reverse-charge');
    expect(text).toContain(`Invoice ${read.invoiceNumber}`);
    expect(text).toContain('Atelier SARL');
    expect(text).toContain('VAT id: FR40303265045');
    expect(text).toContain(REVERSE_CHARGE_NOTE);
    expect(text).toMatch(/Font Pack\s+1\s+19\.99\s+0\.00\s+19\.99\s+0%\s+0\.00\s+19\.99/);
    expect(text).toMatch(/Total \(EUR\)\s+19\.99/);
  });
});

describe('an invoice to a buyer writing beyond Latin-1', () => {
  it('prints Polish, Greek and Cyrillic names and addresses as given (the embedded font covers them)', async () => {
    const order = await buyWithBilling({
      cart: [{ productId: fontPack.id, quantity: 1 }],
      country: 'PL',
      billingName: 'Łukasz Żółkiewski',
      billingAddress: 'ul. Świętokrzyska 12\nΟδός Ερμού 5\nул. Тверская 7',
    });
    const read = await orderOf(order.id);
    const text = await pdfText(await merchant(`/stores/${store.id}/orders/${order.id}/invoice`), 'beyond-latin1');
    expect(text).toContain(`Invoice ${read.invoiceNumber}`);
    for (const expected of [
      'Łukasz Żółkiewski',
      'ul. Świętokrzyska 12',
      'Οδός Ερμού 5',
      'ул. Тверская 7',
      'Country: PL',
    ])
      expect(text).toContain(expected);
    // Poland's 23 % on 19.99 (4.5977 -> 4.60).
    expect(text).toMatch(/Font Pack\s+1\s+19\.99\s+0\.00\s+19\.99\s+23%\s+4\.60\s+24\.59/);
  });
});

describe('an order without an invoice', () => {
  it('is 404 not_found with our error body: a store without tax, and an unknown order', async () => {
    const order = await buyWithBilling({ cart: [{ productId: plain.id, quantity: 1 }] }, untaxedStore.id);
    for (const url of [
      `/stores/${untaxedStore.id}/orders/${order.id}/invoice`,
      `/stores/${untaxedStore.id}/orders/${order.id}/credit-note`,
      `/stores/${store.id}/orders/ORD-999999999/invoice`,
    ]) {
      const response = await merchant(url);
      expect(response.status, url).toBe(404);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await response.json()).toMatchObject({ code: 'not_found', error: expect.any(String) });
    }
    const buyer = await fetch(`${server.url}/api/orders/${order.id}/invoice?token=${order.token}`);
    expect(buyer.status).toBe(404);
    expect((await buyer.json()).code).toBe('not_found');
  });
});

describe('the SDK', () => {
  it('answers the invoice as PDF bytes, and an order without one as SvcNotFoundError not_found', async () => {
    const svc = createMerchantClient({ baseUrl: server.url, apiKey: key });
    const taxed = await buyWithBilling({ cart: [{ productId: guide.id, quantity: 1 }], country: 'DE' });
    const pdf = await svc.orders.invoice({ storeId: store.id, orderId: taxed.id });
    expect(Buffer.from(pdf.subarray(0, 5)).toString('latin1')).toBe('%PDF-');
    const file = path.join(dir, 'sdk.pdf');
    writeFileSync(file, pdf);
    const text = execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' });
    // Germany: e-books at 7%.
    expect(text).toMatch(/Type Guide\s+1\s+9\.99\s+0\.00\s+9\.99\s+7%\s+0\.70\s+10\.69/);
    const missing = await svc.orders
      .creditNote({ storeId: store.id, orderId: taxed.id })
      .catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(SvcNotFoundError);
    expect(missing).toMatchObject({ code: 'not_found', status: 404, procedure: 'orders.creditNote' });
  });
});
