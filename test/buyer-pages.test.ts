/**
 * Black-box, over HTTP: the buyer pages' headers (strict CSP, framing only for the embed
 * pages, nothing from another origin), /embed.js for themes, the test gateway's pay page,
 * the checkout session the checkout page reads, custom fields left to the checkout page, and
 * order pages opened with a customer session.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct, importKeys } from './support/catalog.js';
import { buy } from './support/payments.js';
import { createStoreFor, dashboard, registerSeller, type Seller } from './support/seller.js';
import { REPO_ROOT, startServer } from './support/server.js';
import { startPageServer } from './browser/support.js';

const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";
const EMBED_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors *";

let server: Awaited<ReturnType<typeof startPageServer>>;
let bare: Awaited<ReturnType<typeof startServer>>;
let seller: Seller;
let store: { id: string; subdomain: string };
let keyed: { id: string };

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

beforeAll(async () => {
  // One server with the test gateway (as the browser tests run), one without it.
  [server, bare] = await Promise.all([startPageServer(), startServer()]);
  seller = await registerSeller(server.url);
  store = await createStoreFor(seller, 'Page Shop');
  expect(
    (
      await dashboard(seller, 'PATCH', `/api/dashboard/stores/${store.id}`, {
        settings: { paymentMethods: ['manual', 'stripe', 'test'] },
      })
    ).status,
  ).toBe(200);
  keyed = await createProduct(seller, store.id, {
    name: 'Key',
    price: 4,
    deliveryMethods: ['licenseKeys'],
    customFields: [
      { name: 'Nickname', required: true },
      { name: 'Newsletter', type: 'checkbox' },
    ],
  });
  await importKeys(
    seller,
    store.id,
    keyed.id,
    Array.from({ length: 10 }, (_, i) => `PAGE-${i}-${randomBytes(3).toString('hex')}`),
  );
});
afterAll(async () => {
  await Promise.all([server?.stop(), bare?.stop()]);
});

async function pendingOrder(
  customFields?: Record<string, string | boolean>,
  email = `b-${randomBytes(4).toString('hex')}@example.test`,
) {
  const response = await post('/api/v1/checkout', {
    shopId: store.id,
    cart: [{ productId: keyed.id, quantity: 1 }],
    email,
    ...(customFields ? { customFields } : {}),
  });
  expect(response.status, await response.clone().text()).toBe(200);
  const { url, orderId } = await response.json();
  return { orderId: orderId as string, token: new URL(url).searchParams.get('token')!, url: url as string, email };
}

describe('page headers', () => {
  it('serves every page with the strict CSP, no inline script or style, and only same-origin references', async () => {
    const { orderId, token } = await pendingOrder({ Nickname: 'x' });
    const pages = [
      [`/checkout/${orderId}?token=${token}`, PAGE_CSP],
      [`/orders/${orderId}`, PAGE_CSP],
      [`/account/${store.subdomain}`, PAGE_CSP],
      [`/pay/test/${orderId}?token=${token}`, PAGE_CSP],
      [`/embed/checkout?store=${store.id}&product=${keyed.id}`, EMBED_CSP],
      [`/checkout/${orderId}?token=${token}&embed=1`, EMBED_CSP],
      [`/orders/${orderId}?embed=1`, EMBED_CSP],
    ] as const;
    for (const [path, csp] of pages) {
      const response = await fetch(`${server.url}${path}`);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-security-policy'), path).toBe(csp);
      expect(response.headers.get('content-type'), path).toBe('text/html; charset=utf-8');
      expect(response.headers.get('cache-control'), path).toBe('no-store');
      expect(response.headers.get('x-content-type-options'), path).toBe('nosniff');
      const html = await response.text();
      expect(html, path).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/i);
      expect(html, path).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
      for (const [, reference] of html.matchAll(/\s(?:src|href|action)="([^"]*)"/g))
        expect(reference, path).toMatch(/^\/[^/]/);
      expect(html, path).toMatch(/<html lang="en">/);
      expect(html, path).toMatch(/<meta name="viewport" content="width=device-width, initial-scale=1">/);
    }
  });

  it('escapes what sellers write (a store name) in server-rendered pages', async () => {
    const evil = await createStoreFor(seller, '<script>alert(1)</script> & "Co"');
    const html = await (await fetch(`${server.url}/account/${evil.subdomain}`)).text();
    expect(html).toContain('Your orders at &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;Co&quot;');
    expect(html).toContain('data-store-name="&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;Co&quot;"');
    expect(html).not.toContain('<script>alert');
  });

  it('answers an unknown order address or store with a 404 page under the same policy', async () => {
    for (const path of ['/checkout/not-an-id', '/orders/x', '/account/no-such-store-here', '/account/UPPER_case!']) {
      const response = await fetch(`${server.url}${path}`);
      expect(response.status, path).toBe(404);
      expect(response.headers.get('content-security-policy'), path).toBe(PAGE_CSP);
    }
  });

  it('serves the stylesheet and modules from this origin, and nothing else under /assets', async () => {
    const css = await fetch(`${server.url}/assets/app.css`);
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(await css.text()).not.toMatch(/url\(|@import|https?:\/\//);
    for (const name of ['common', 'checkout', 'delivery', 'account', 'embed-checkout']) {
      const js = await fetch(`${server.url}/assets/js/${name}.js`);
      expect(js.status, name).toBe(200);
      expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      // Every module speaks to this origin only: no absolute address in the code.
      expect(await js.text(), name).not.toMatch(/https?:\/\//);
    }
    expect((await fetch(`${server.url}/assets/js/../../package.json`)).status).toBe(404);
    expect((await fetch(`${server.url}/assets/js/main.js`)).status).toBe(404);
    // The icon every browser asks the origin for (a 404 would be a console error on every page).
    const icon = await fetch(`${server.url}/favicon.ico`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toBe('image/x-icon');
    expect(Buffer.from(await icon.arrayBuffer()).subarray(0, 4)).toEqual(Buffer.from([0, 0, 1, 0]));
  });

  it('serves /embed.js to any site (CORS and CORP), without naming another origin', async () => {
    const response = await fetch(`${server.url}/embed.js`, { headers: { origin: 'https://theme.example' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
    const code = await response.text();
    expect(code).toContain('data-svc-product');
    expect(code).toContain('/embed/checkout?');
    expect(code).not.toMatch(/https?:\/\//);
  });

  it('serves the SDK theme client at /sdk/v1/theme.js: one ES module, immutable, with an ETag, to any origin', async () => {
    const response = await fetch(`${server.url}/sdk/v1/theme.js`, { headers: { origin: 'https://theme.example' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
    const etag = response.headers.get('etag');
    expect(etag).toMatch(/^"[\w-]{16,}"$/);
    const code = await response.text();
    // The SDK build's file, byte for byte: an ES module exporting the theme client and its errors.
    expect(code).toBe(await readFile(path.join(REPO_ROOT, 'packages/sdk/dist/browser/theme.js'), 'utf8'));
    const exported = /export\s*\{([^}]*)\}\s*;?\s*$/.exec(code)?.[1] ?? '';
    const names = exported.split(',').map((part) =>
      part
        .trim()
        .split(/\s+as\s+/)
        .pop(),
    );
    expect(names).toEqual(expect.arrayContaining(['createThemeClient', 'SvcApiError', 'SvcError', 'isSvcError']));
    expect(names).not.toContain('createMerchantClient');

    // Without an Origin (a cache in between may serve it to any site later), the same headers.
    const plain = await fetch(`${server.url}/sdk/v1/theme.js`);
    expect(plain.headers.get('access-control-allow-origin')).toBe('*');
    expect(plain.headers.get('etag')).toBe(etag);
    // Revalidation with the ETag: 304, no body.
    const again = await fetch(`${server.url}/sdk/v1/theme.js`, { headers: { 'if-none-match': etag! } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
    expect(again.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    // Another version or file is not there.
    expect((await fetch(`${server.url}/sdk/v2/theme.js`)).status).toBe(404);
    expect((await fetch(`${server.url}/sdk/v1/merchant.js`)).status).toBe(404);
  });
});

describe('checkout session for the checkout page', () => {
  it('names the store, the methods this process can take and the custom fields, with earlier answers', async () => {
    const { orderId, token } = await pendingOrder({ Nickname: 'neo', Newsletter: true });
    const response = await post('/api/checkout/enter', { orderId, token });
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.store).toEqual({ id: store.id, name: 'Page Shop', subdomain: store.subdomain });
    // Stripe is offered by the store but not configured here.
    expect(body.paymentMethods).toEqual(['manual', 'test']);
    expect(body.customFields).toEqual([
      { name: 'Nickname', type: 'text', required: true },
      { name: 'Newsletter', type: 'checkbox', required: false },
    ]);
    expect(body.answers).toEqual([
      { name: 'Nickname', value: 'neo' },
      { name: 'Newsletter', value: 'true' },
    ]);
  });

  it('leaves required answers to checkout/start when the theme sent none, and insists there', async () => {
    const { orderId, token } = await pendingOrder();
    const refused = await post('/api/checkout/start', { orderId, token, paymentMethod: 'manual' });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      code: 'validation_failed',
      issues: [{ path: 'customFields.Nickname', message: 'Required.' }],
    });
    const started = await post('/api/checkout/start', {
      orderId,
      token,
      paymentMethod: 'manual',
      customFields: { Nickname: 'trinity' },
    });
    expect(started.status).toBe(200);
    // Partial answers at creation are still checked in full.
    const partial = await post('/api/v1/checkout', {
      shopId: store.id,
      cart: [{ productId: keyed.id, quantity: 1 }],
      email: 'p@example.test',
      customFields: { Newsletter: true },
    });
    expect(partial.status).toBe(400);
  });
});

describe('test gateway pay page', () => {
  it('is where checkout/start sends a test payment, opens with the token only, and settles the order', async () => {
    const { orderId, token } = await pendingOrder({ Nickname: 'pay' });
    const start = await post('/api/checkout/start', { orderId, token, paymentMethod: 'test' });
    expect(start.status).toBe(200);
    const started = await start.json();
    expect(started.redirectUrl).toBe(`${server.url}/pay/test/${orderId}`);

    expect((await fetch(`${server.url}/pay/test/${orderId}`)).status).toBe(401);
    const wrong = token.replace(/.$/, token.endsWith('A') ? 'B' : 'A');
    expect((await fetch(`${server.url}/pay/test/${orderId}?token=${wrong}`)).status).toBe(403);
    const forged = await fetch(`${server.url}/pay/test/${orderId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${wrong}`,
      redirect: 'manual',
    });
    expect(forged.status).toBe(403);
    expect((await fetch(`${server.url}/api/orders/${orderId}/delivery?token=${token}`)).status).toBe(409);

    const page = await fetch(`${server.url}/pay/test/${orderId}?token=${token}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('Pay $4.00');
    expect(html).toContain(`<form method="post" action="/pay/test/${orderId}">`);

    const paid = await fetch(`${server.url}/pay/test/${orderId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${encodeURIComponent(token)}`,
      redirect: 'manual',
    });
    expect(paid.status).toBe(303);
    expect(paid.headers.get('location')).toBe(`/orders/${orderId}?token=${encodeURIComponent(token)}`);
    const delivery = await (await fetch(`${server.url}/api/orders/${orderId}/delivery?token=${token}`)).json();
    expect(delivery.status).toBe('completed');
    expect(delivery.licenseKeys).toHaveLength(1);
    // Paying again changes nothing (the page says the order is not waiting).
    expect(await (await fetch(`${server.url}/pay/test/${orderId}?token=${token}`)).text()).toContain(
      'not waiting for a test payment',
    );
  });

  it('does not settle an order whose buyer chose another method', async () => {
    const { orderId, token } = await pendingOrder({ Nickname: 'm' });
    expect((await post('/api/checkout/start', { orderId, token, paymentMethod: 'manual' })).status).toBe(200);
    const response = await fetch(`${server.url}/pay/test/${orderId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${encodeURIComponent(token)}`,
      redirect: 'manual',
    });
    expect(response.status).toBe(303);
    expect((await fetch(`${server.url}/api/orders/${orderId}/delivery?token=${token}`)).status).toBe(409);
  });

  // Outside production the test gateway needs nothing set (docs/decisions.md, #38): a plain start
  // serves the page, and it still opens an order only with the order's checkout token.
  it('is there without TEST_GATEWAY_SECRET, and asks for the checkout token', async () => {
    const response = await fetch(`${bare.url}/pay/test/${'c'.repeat(24)}`);
    expect(response.status).toBe(401);
    expect(await response.text()).toContain('Open this page from the checkout.');
  });
});

describe('order pages with a customer session', () => {
  async function customerCookie(storeId: string, email: string, baseUrl = server.url): Promise<string> {
    const ip = `198.51.100.${Math.floor(Math.random() * 200) + 1}`;
    const start = await fetch(`${baseUrl}/api/customer/auth/start`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
      body: JSON.stringify({ storeId, email }),
    });
    expect(start.status).toBe(204);
    const { emails } = await (await fetch(`${baseUrl}/dev/mailbox.json`)).json();
    const code = /\b(\d{6})\b/.exec(emails.find((m: { to: string }) => m.to === email).text)![1];
    const verify = await fetch(`${baseUrl}/api/customer/auth/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
      body: JSON.stringify({ storeId, email, code }),
    });
    expect(verify.status).toBe(200);
    return verify.headers
      .getSetCookie()
      .find((c) => c.startsWith('svc_customer='))!
      .split(';')[0]!;
  }

  it('opens the delivery and keys of the signed-in buyer’s own orders in that store only', async () => {
    const mine = await buy(server.url, { storeId: store.id, productId: keyed.id, customFields: { Nickname: 'c1' } });
    const theirs = await buy(server.url, { storeId: store.id, productId: keyed.id, customFields: { Nickname: 'c2' } });
    for (const order of [mine, theirs]) expect(order.price).toBe(4);
    const cookie = await customerCookie(store.id, mine.email);

    const delivery = await fetch(`${server.url}/api/orders/${mine.id}/delivery`, { headers: { cookie } });
    expect(delivery.status).toBe(200);
    expect((await delivery.json()).licenseKeys).toHaveLength(1);
    expect((await fetch(`${server.url}/api/orders/${mine.id}/keys`, { headers: { cookie } })).status).toBe(200);
    expect((await fetch(`${server.url}/api/orders/${theirs.id}/delivery`, { headers: { cookie } })).status).toBe(403);

    // The same address signed in to another store opens nothing here.
    const other = await createStoreFor(seller, 'Other Shop');
    const elsewhere = await customerCookie(other.id, mine.email);
    expect(
      (await fetch(`${server.url}/api/orders/${mine.id}/delivery`, { headers: { cookie: elsewhere } })).status,
    ).toBe(403);
    // A stale cookie counts as no credential.
    expect(
      (await fetch(`${server.url}/api/orders/${mine.id}/delivery`, { headers: { cookie: 'svc_customer=stale' } }))
        .status,
    ).toBe(401);
  });
});

describe('the store’s brand on the buyer pages', () => {
  let brandShop: { id: string; subdomain: string };
  let product: { id: string };

  beforeAll(async () => {
    brandShop = await createStoreFor(seller, 'Brand <Shop>');
    const look = await dashboard(seller, 'PATCH', `/api/dashboard/stores/${brandShop.id}`, {
      accentColor: '#0f766e',
      allowedOrigins: ['https://theme.example'],
      settings: { paymentMethods: ['manual', 'test'] },
    });
    expect(look.status, await look.clone().text()).toBe(200);
    product = await createProduct(seller, brandShop.id, { name: 'Course', price: 56.4 });
  });

  const order = async (extra: Record<string, unknown> = {}) => {
    const response = await post('/api/v1/checkout', {
      shopId: brandShop.id,
      cart: [{ productId: product.id, quantity: 1 }],
      email: `brand-${randomBytes(4).toString('hex')}@example.test`,
      ...extra,
    });
    return { response, body: await response.json() };
  };

  it('puts the store’s name linking to its storefront and its accent (allowed by hash) on checkout, order, pay and account pages', async () => {
    const { body } = await order();
    const token = new URL(body.url).searchParams.get('token')!;
    const home = `<a class="store-name" href="/s/${brandShop.subdomain}"><span>Brand &lt;Shop&gt;</span></a>`;
    for (const path of [
      `/checkout/${body.orderId}?token=${token}`,
      `/orders/${body.orderId}`,
      `/pay/test/${body.orderId}?token=${token}`,
      `/account/${brandShop.subdomain}`,
    ]) {
      const response = await fetch(`${server.url}${path}`);
      expect(response.status, path).toBe(200);
      const html = await response.text();
      expect(html, path).toContain(`<header class="store-bar">`);
      expect(html, path).toContain(home);
      const style = /<style>([^<]*)<\/style>/.exec(html)?.[1];
      expect(style, path).toContain('--svc-accent:#0f766e');
      const { createHash } = await import('node:crypto');
      const hash = createHash('sha256').update(style!).digest('base64');
      expect(response.headers.get('content-security-policy'), path).toBe(
        PAGE_CSP.replace("style-src 'self'", `style-src 'self' 'sha256-${hash}'`),
      );
    }
    // Framed: the name is no link (the theme is right there), and the page may still be framed.
    const framed = await fetch(`${server.url}/checkout/${body.orderId}?token=${token}&embed=1`);
    expect(framed.headers.get('content-security-policy')).toContain('frame-ancestors *');
    expect(await framed.text()).toContain('<span class="store-name"><span>Brand &lt;Shop&gt;</span></span>');
  });

  it('links back to the theme’s returnUrl on the store’s origins, carried from checkout to pay to order page', async () => {
    const back = 'https://theme.example/thanks?from=svc';
    const { response, body } = await order({ returnUrl: back });
    expect(response.status, JSON.stringify(body)).toBe(200);
    const url = new URL(body.url);
    expect(url.searchParams.get('return')).toBe(back);
    const token = url.searchParams.get('token')!;
    const link = `<a class="store-name" href="${back.replace('&', '&amp;')}">`;
    expect(await (await fetch(body.url)).text()).toContain(link);
    expect((await post('/api/checkout/start', { orderId: body.orderId, token, paymentMethod: 'test' })).status).toBe(
      200,
    );

    const pay = await (
      await fetch(`${server.url}/pay/test/${body.orderId}?token=${token}&return=${encodeURIComponent(back)}`)
    ).text();
    expect(pay).toContain(link);
    expect(pay).toContain(
      `<form method="post" action="/pay/test/${body.orderId}?return=${encodeURIComponent(back).replace(/%20/g, '+')}">`,
    );
    const paid = await fetch(`${server.url}/pay/test/${body.orderId}?return=${encodeURIComponent(back)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${encodeURIComponent(token)}`,
      redirect: 'manual',
    });
    expect(paid.status).toBe(303);
    const orderPage = new URL(paid.headers.get('location')!, server.url);
    expect(orderPage.pathname).toBe(`/orders/${body.orderId}`);
    expect(orderPage.searchParams.get('return')).toBe(back);
    expect(await (await fetch(orderPage)).text()).toContain(link);
    // An address on no origin of the store is ignored: the name links to the storefront.
    const forged = await (
      await fetch(
        `${server.url}/checkout/${body.orderId}?token=${token}&return=${encodeURIComponent('https://evil.example/')}`,
      )
    ).text();
    expect(forged).toContain(`<a class="store-name" href="/s/${brandShop.subdomain}">`);
    expect(forged).not.toContain('evil.example');
  });

  it('refuses a returnUrl off the store’s origins, or not http(s), with 400 at the field', async () => {
    for (const returnUrl of [
      'https://evil.example/x',
      'javascript:alert(1)',
      'not a url',
      'https://theme.example.evil.test/',
    ]) {
      const { response, body } = await order({ returnUrl });
      expect(response.status, returnUrl).toBe(400);
      expect(body, returnUrl).toMatchObject({ code: 'validation_failed', issues: [{ path: 'returnUrl' }] });
    }
  });

  it('words a manual payment without seller instructions as a sentence, the amount as money', async () => {
    const { body } = await order();
    const token = new URL(body.url).searchParams.get('token')!;
    const started = await post('/api/checkout/start', { orderId: body.orderId, token, paymentMethod: 'manual' });
    expect(started.status).toBe(200);
    const { instructions } = await started.json();
    expect(instructions).toMatch(
      /^Pay \$56\.40 to Brand <Shop>, who will send you their payment details\. Use ORD-\d+ as the payment reference\. Your order is delivered once Brand <Shop> confirms the payment\.$/,
    );
    expect(instructions).not.toContain('USD');
  });
});
