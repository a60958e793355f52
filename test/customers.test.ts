/**
 * Black-box: buyers signing in to one store with an e-mailed 6-digit code, and the customer
 * area (`/api/customer/*`, `/api/v1/customer-dashboard/*`) they then see, on the built server
 * with a real SMTP listener. Code expiry runs in-process against a clock the test moves.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openOrm, type Orm } from '../apps/server/src/db/orm.js';
import { ManualClock } from '../apps/server/src/lib/clock.js';
import { newId } from '../apps/server/src/lib/ids.js';
import { StoreSchema } from '../apps/server/src/modules/stores/stores.entities.js';
import { createStore, uniqueSubdomain } from './support/factories.js';
import { startInProcess } from './support/in-process.js';
import { insertOrders } from './support/orders.js';
import { createStoreFor, dashboard, registerSeller } from './support/seller.js';
import { startServer } from './support/server.js';
import { startSmtpListener, type ReceivedMail } from './support/smtp.js';

const BASE_DOMAIN = 'shops.example';
const PUBLIC_URL = 'https://svc.example';
const MINUTE = 60_000;

const TOKEN_INVALID = { error: 'The code is wrong or has expired.', code: 'token_invalid' };
const NO_SESSION = { error: 'Sign in with the code sent to your e-mail.', code: 'unauthorized' };
const EXPIRED_SESSION = { error: 'The session has expired; sign in again.', code: 'unauthorized' };
const ORDER_NOT_FOUND = { error: 'Order not found.', code: 'not_found' };
const STORE_NOT_FOUND = { error: 'Store not found.', code: 'not_found' };
const WRONG_ORIGIN = { error: 'This origin does not belong to the store.', code: 'store_forbidden' };
const RATE_LIMITED = { error: 'Too many requests. Please try again later.', code: 'rate_limited' };

let smtp: Awaited<ReturnType<typeof startSmtpListener>>;
let server: Awaited<ReturnType<typeof startServer>>;
let orm: Orm;

beforeAll(async () => {
  smtp = await startSmtpListener();
  // Behind a trusted proxy each test is its own client (X-Forwarded-For), so the per-IP
  // limit on code requests only bites where a test means it to.
  server = await startServer({
    SMTP_URL: smtp.url,
    STOREFRONT_BASE_DOMAIN: BASE_DOMAIN,
    PUBLIC_URL,
    TRUST_PROXY: '127.0.0.1',
  });
  orm = await openOrm(server.db.url, { poolMax: 2 });
});

afterAll(async () => {
  await orm?.close();
  await server?.stop();
  await smtp?.stop();
});

// ---------------------------------------------------------------------------------------------
// Helpers: a client as a browser or theme would be one.

/** A client address of its own (random in 10/8), so rate-limit windows are per test. */
function clientIp(): string {
  const [a, b, c] = randomBytes(3);
  return `10.${a}.${b}.${c}`;
}

function buyerEmail(prefix = 'buyer'): string {
  return `${prefix}-${randomBytes(5).toString('hex')}@example.test`;
}

interface CallOptions {
  method?: string;
  body?: unknown;
  ip?: string;
  cookie?: string;
  origin?: string;
  headers?: Record<string, string>;
  base?: string;
}

function call(path: string, opts: CallOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { 'x-forwarded-for': opts.ip ?? clientIp(), ...opts.headers };
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  if (opts.cookie) headers.cookie = opts.cookie;
  if (opts.origin) headers.origin = opts.origin;
  return fetch(`${opts.base ?? server.url}${path}`, {
    method: opts.method ?? (opts.body === undefined ? 'GET' : 'POST'),
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
}

function startCode(storeId: string, email: string, ip: string, base?: string): Promise<Response> {
  return call('/api/customer/auth/start', { body: { storeId, email }, ip, base });
}

function verifyCode(storeId: string, email: string, code: string, ip: string, base?: string): Promise<Response> {
  return call('/api/customer/auth/verify', { body: { storeId, email, code }, ip, base });
}

/** The next e-mail to `email` that arrives after `seen` mails had been received. */
function mailAfter(seen: number, email: string): Promise<ReceivedMail> {
  return smtp.waitFor((mail) => smtp.mails.indexOf(mail) >= seen && mail.to.includes(email));
}

function codeIn(mail: { text: string }): string {
  const match = /\b(\d{6})\b/.exec(mail.text);
  expect(match, `a 6-digit code in: ${mail.text}`).not.toBeNull();
  return match![1]!;
}

/** Asks for a code and reads it from the mail that arrives. */
async function requestCode(storeId: string, email: string, ip: string): Promise<string> {
  const seen = smtp.mails.length;
  const response = await startCode(storeId, email, ip);
  expect(response.status).toBe(204);
  return codeIn(await mailAfter(seen, email));
}

function customerCookieFrom(response: Response): string {
  const cookie = response.headers.getSetCookie().find((value) => value.startsWith('svc_customer='));
  expect(cookie, 'a svc_customer cookie').toBeDefined();
  return cookie!.split(';')[0]!;
}

/** Signs in over the real routes and returns the cookie (`svc_customer=...`) and the customer. */
async function signIn(storeId: string, email: string, ip = clientIp()) {
  const code = await requestCode(storeId, email, ip);
  const response = await verifyCode(storeId, email, code, ip);
  expect(response.status).toBe(200);
  const body = await response.json();
  return {
    cookie: customerCookieFrom(response),
    customer: body.customer as { id: string; storeId: string; email: string; createdAt: string },
  };
}

/** A code that is certainly not `code`. */
function otherCode(code: string): string {
  return String((Number(code) + 1) % 1_000_000).padStart(6, '0');
}

async function newStore(overrides: Parameters<typeof createStore>[1] = {}) {
  return createStore(orm.em.fork(), overrides);
}

const CUSTOMER_GETS = [
  '/api/customer/orders',
  '/api/v1/customer-dashboard/orders',
  '/api/v1/customer-dashboard/profile',
];

// ---------------------------------------------------------------------------------------------

describe('sign-in with an e-mailed code, then the customer area', () => {
  it("e-mails a code, exchanges it for a session and shows exactly this buyer's orders in this store", async () => {
    const store = await newStore({ name: 'Pixel Goods' });
    const otherStore = await newStore();
    const email = buyerEmail();
    const now = Date.now();
    const at = (hoursAgo: number) => new Date(now - hoursAgo * 3600_000);

    const [twoLines, ebook, yen] = await insertOrders(server.db.url, store.id, [
      {
        customerEmail: email,
        status: 'completed',
        priceMinor: 1450,
        createdAt: at(72),
        lines: [
          { productName: 'Poster', quantity: 2, unitPriceMinor: 500 },
          { productName: 'Sticker', quantity: 3, unitPriceMinor: 150 },
        ],
      },
      {
        customerEmail: email,
        status: 'paid',
        priceMinor: 1999,
        createdAt: at(24),
        lines: [{ productName: 'E-book', quantity: 1, unitPriceMinor: 1999 }],
      },
      {
        customerEmail: email,
        status: 'pending',
        priceMinor: 500,
        currency: 'JPY',
        createdAt: at(48),
        lines: [{ productName: 'Game key', quantity: 1, unitPriceMinor: 500 }],
      },
    ]);
    // Another buyer in the same store (newest of all) and the same address in another store.
    const [someoneElse] = await insertOrders(server.db.url, store.id, [
      { customerEmail: buyerEmail('other'), createdAt: at(1) },
    ]);
    const [elsewhere] = await insertOrders(server.db.url, otherStore.id, [{ customerEmail: email, createdAt: at(2) }]);

    const ip = clientIp();
    const seen = smtp.mails.length;
    const start = await startCode(store.id, email, ip);
    expect(start.status).toBe(204);
    expect(await start.text()).toBe('');

    const mail = await mailAfter(seen, email);
    expect(mail.to).toEqual([email]);
    expect(mail.subject).toBe('Your sign-in code for Pixel Goods');
    const code = codeIn(mail);
    expect(code).toMatch(/^\d{6}$/);

    const verified = await verifyCode(store.id, email, code, ip);
    expect(verified.status).toBe(200);
    const session = await verified.json();
    expect(session).toEqual({
      customer: { id: expect.any(String), storeId: store.id, livemode: true, email, createdAt: expect.any(String) },
    });
    expect(Object.keys(session.customer).sort()).toEqual(['createdAt', 'email', 'id', 'livemode', 'storeId']);
    expect(Number.isNaN(Date.parse(session.customer.createdAt))).toBe(false);

    const setCookie = verified.headers.getSetCookie().find((value) => value.startsWith('svc_customer='))!;
    expect(setCookie).toBeDefined();
    const attributes = setCookie.split(';').map((part) => part.trim());
    expect(attributes).toContain('HttpOnly');
    expect(attributes).toContain('Path=/');
    expect(attributes).toContain(`Max-Age=${30 * 24 * 3600}`);
    expect(attributes).toContain('SameSite=Lax');
    // No seller session is handed out with it.
    expect(verified.headers.getSetCookie().some((value) => value.startsWith('svc_session='))).toBe(false);
    const cookie = setCookie.split(';')[0]!;

    const untaxed = {
      subtotal: 0,
      taxAmount: 0,
      taxRate: null,
      taxCountry: null,
      reverseCharge: false,
      invoiceNumber: null,
      creditNoteNumber: null,
    };
    const expected = {
      ebook: {
        id: ebook!.id,
        orderId: `ORD-${ebook!.number}`,
        storeId: store.id,
        livemode: true,
        status: 'paid',
        productName: 'E-book',
        price: 19.99,
        currency: 'USD',
        lines: [{ productName: 'E-book', quantity: 1, unitPrice: 19.99, plan: null }],
        subscriptionId: null,
        billingReason: 'purchase',
        // Inserted raw, untaxed: no subtotal written, no tax, no invoice.
        ...untaxed,
        createdAt: at(24).toISOString(),
        completedAt: null,
      },
      yen: {
        id: yen!.id,
        orderId: `ORD-${yen!.number}`,
        storeId: store.id,
        livemode: true,
        status: 'pending',
        productName: 'Game key',
        price: 500,
        currency: 'JPY',
        lines: [{ productName: 'Game key', quantity: 1, unitPrice: 500, plan: null }],
        subscriptionId: null,
        billingReason: 'purchase',
        // Inserted raw, untaxed: no subtotal written, no tax, no invoice.
        ...untaxed,
        createdAt: at(48).toISOString(),
        completedAt: null,
      },
      twoLines: {
        id: twoLines!.id,
        orderId: `ORD-${twoLines!.number}`,
        storeId: store.id,
        livemode: true,
        status: 'completed',
        productName: 'Poster +1 more',
        price: 14.5,
        currency: 'USD',
        lines: [
          { productName: 'Poster', quantity: 2, unitPrice: 5, plan: null },
          { productName: 'Sticker', quantity: 3, unitPrice: 1.5, plan: null },
        ],
        subscriptionId: null,
        billingReason: 'purchase',
        // Inserted raw, untaxed: no subtotal written, no tax, no invoice.
        ...untaxed,
        createdAt: at(72).toISOString(),
        completedAt: null,
      },
    };
    // Lines come back in id order (random cuid2s), not in the order bought: compare them as a set.
    const byName = <T extends { lines: Array<{ productName: string }> }>(order: T): T => ({
      ...order,
      lines: [...order.lines].sort((a, b) => a.productName.localeCompare(b.productName)),
    });

    for (const path of ['/api/customer/orders', '/api/v1/customer-dashboard/orders']) {
      const list = await call(path, { cookie });
      expect(list.status, path).toBe(200);
      const body = await list.json();
      expect(Object.keys(body).sort()).toEqual(['hasMore', 'nextCursor', 'orders']);
      expect(body.hasMore).toBe(false);
      expect(body.nextCursor).toBeNull();
      expect(body.orders.map(byName)).toEqual([expected.ebook, expected.yen, expected.twoLines]);
    }

    // Keyset paging through the buyer's orders, newest first.
    const first = await (await call('/api/customer/orders?limit=2', { cookie })).json();
    expect(first.orders.map((o: { id: string }) => o.id)).toEqual([ebook!.id, yen!.id]);
    expect(first.hasMore).toBe(true);
    expect(typeof first.nextCursor).toBe('string');
    const second = await (
      await call(`/api/customer/orders?limit=2&cursor=${encodeURIComponent(first.nextCursor)}`, { cookie })
    ).json();
    expect(second.orders.map((o: { id: string }) => o.id)).toEqual([twoLines!.id]);
    expect(second).toMatchObject({ hasMore: false, nextCursor: null });

    // Detail, by database id and by public number, on both route families.
    for (const prefix of ['/api/customer/orders', '/api/v1/customer-dashboard/orders']) {
      for (const ref of [twoLines!.id, `ORD-${twoLines!.number}`]) {
        const detail = await call(`${prefix}/${ref}`, { cookie });
        expect(detail.status, `${prefix}/${ref}`).toBe(200);
        expect(byName(await detail.json())).toEqual(expected.twoLines);
      }
      for (const ref of [
        someoneElse!.id,
        `ORD-${someoneElse!.number}`,
        elsewhere!.id,
        `ORD-${elsewhere!.number}`,
        'ORD-999999999',
        newId(),
      ]) {
        const hidden = await call(`${prefix}/${ref}`, { cookie });
        expect(hidden.status, `${prefix}/${ref}`).toBe(404);
        expect(await hidden.json()).toEqual(ORDER_NOT_FOUND);
      }
    }

    const profile = await call('/api/v1/customer-dashboard/profile', { cookie });
    expect(profile.status).toBe(200);
    expect(await profile.json()).toEqual(session.customer);
  });

  it('keeps one customer per store and address across sign-ins, and a separate one per store', async () => {
    const store = await newStore();
    const otherStore = await newStore();
    const email = buyerEmail();
    await insertOrders(server.db.url, otherStore.id, [{ customerEmail: email }]);

    const first = await signIn(store.id, email);
    const again = await signIn(store.id, email);
    expect(again.customer).toEqual(first.customer);
    expect(again.cookie).not.toBe(first.cookie);
    // Both sessions stay valid.
    for (const cookie of [first.cookie, again.cookie]) {
      const profile = await call('/api/v1/customer-dashboard/profile', { cookie });
      expect(profile.status).toBe(200);
      expect(await profile.json()).toEqual(first.customer);
    }

    const there = await signIn(otherStore.id, email);
    expect(there.customer.id).not.toBe(first.customer.id);
    expect(there.customer).toMatchObject({ storeId: otherStore.id, email });
    expect((await (await call('/api/customer/orders', { cookie: first.cookie })).json()).orders).toEqual([]);
    expect((await (await call('/api/customer/orders', { cookie: there.cookie })).json()).orders).toHaveLength(1);
  });

  it('treats the address case-insensitively: one mailbox, one customer', async () => {
    const store = await newStore();
    const email = buyerEmail();
    await insertOrders(server.db.url, store.id, [{ customerEmail: email }]);
    const ip = clientIp();
    const seen = smtp.mails.length;
    expect((await startCode(store.id, `  ${email.toUpperCase()} `, ip)).status).toBe(204);
    const code = codeIn(await mailAfter(seen, email));
    const verified = await verifyCode(store.id, email, code, ip);
    expect(verified.status).toBe(200);
    const { customer } = await verified.json();
    expect(customer.email).toBe(email);
    const list = await (await call('/api/customer/orders', { cookie: customerCookieFrom(verified) })).json();
    expect(list.orders).toHaveLength(1);
  });
});

describe('POST /api/customer/auth/start', () => {
  it('answers 204 and sends a code to an address that never ordered (no enumeration)', async () => {
    const store = await newStore();
    const buyer = buyerEmail();
    await insertOrders(server.db.url, store.id, [{ customerEmail: buyer }]);
    const stranger = buyerEmail('stranger');

    const ip = clientIp();
    const seen = smtp.mails.length;
    const known = await startCode(store.id, buyer, ip);
    const unknown = await startCode(store.id, stranger, ip);
    expect(known.status).toBe(204);
    expect(unknown.status).toBe(204);
    expect(await unknown.text()).toBe(await known.text());
    // The same header names either way (values such as the request id differ by nature).
    expect([...unknown.headers.keys()].sort()).toEqual([...known.headers.keys()].sort());

    // Both get the same e-mail, with a code of their own.
    const [toBuyer, toStranger] = [await mailAfter(seen, buyer), await mailAfter(seen, stranger)];
    expect(toStranger.subject).toBe(toBuyer.subject);
    expect(toStranger.text.replace(/\d{6}/, 'CODE')).toBe(toBuyer.text.replace(/\d{6}/, 'CODE'));

    // The stranger can sign in too; they simply have no orders.
    const verified = await verifyCode(store.id, stranger, codeIn(toStranger), ip);
    expect(verified.status).toBe(200);
    const orders = await call('/api/customer/orders', { cookie: customerCookieFrom(verified) });
    expect(await orders.json()).toEqual({ orders: [], hasMore: false, nextCursor: null });
  });

  it('names the store in the subject, whatever its script', async () => {
    const name = 'Café Zürich — 東京 Läden';
    const store = await newStore({ name });
    const email = buyerEmail();
    const seen = smtp.mails.length;
    expect((await startCode(store.id, email, clientIp())).status).toBe(204);
    const mail = await mailAfter(seen, email);
    expect(mail.subject).toBe(`Your sign-in code for ${name}`);
    expect(mail.text).toMatch(/^Your code is \d{6}\. It expires in 10 minutes and works once\./);
  });

  it('answers 404 for a store that does not exist or is banned, and sends nothing', async () => {
    const banned = await newStore({ banned: true });
    const email = buyerEmail();
    for (const storeId of [newId(), banned.id]) {
      const response = await startCode(storeId, email, clientIp());
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual(STORE_NOT_FOUND);
    }
    // Verify says the same for them.
    const verify = await verifyCode(banned.id, email, '123456', clientIp());
    expect(verify.status).toBe(404);
    expect(await verify.json()).toEqual(STORE_NOT_FOUND);
    expect(smtp.mails.some((mail) => mail.to.includes(email))).toBe(false);
  });

  it('refuses a malformed address, store id or extra field with 400', async () => {
    const store = await newStore();
    const bad = [
      { storeId: store.id, email: 'not-an-address' },
      { storeId: 'NOT AN ID', email: buyerEmail() },
      { storeId: store.id, email: buyerEmail(), admin: true },
      { storeId: store.id },
    ];
    for (const body of bad) {
      const response = await call('/api/customer/auth/start', { body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect((await response.json()).code).toBe('validation_failed');
    }
  });
});

describe('codes', () => {
  it('work once: the second verify with the same code is refused', async () => {
    const store = await newStore();
    const email = buyerEmail();
    const ip = clientIp();
    const code = await requestCode(store.id, email, ip);
    const first = await verifyCode(store.id, email, code, ip);
    expect(first.status).toBe(200);
    const second = await verifyCode(store.id, email, code, ip);
    expect(second.status).toBe(400);
    expect(await second.json()).toEqual(TOKEN_INVALID);
    expect(second.headers.getSetCookie().some((value) => value.startsWith('svc_customer='))).toBe(false);
  });

  it('work once even when verified in parallel', async () => {
    const store = await newStore();
    const email = buyerEmail();
    const ip = clientIp();
    const code = await requestCode(store.id, email, ip);
    const statuses = await Promise.all(
      Array.from({ length: 5 }, () => verifyCode(store.id, email, code, ip).then((r) => r.status)),
    );
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 400)).toHaveLength(4);
  });

  it('refuse a wrong code with 400 without spending the right one', async () => {
    const store = await newStore();
    const email = buyerEmail();
    const ip = clientIp();
    const code = await requestCode(store.id, email, ip);
    const wrong = await verifyCode(store.id, email, otherCode(code), ip);
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toEqual(TOKEN_INVALID);
    expect(wrong.headers.getSetCookie()).toEqual([]);
    expect((await verifyCode(store.id, email, code, ip)).status).toBe(200);
  });

  it('refuse a code that was never requested, and a malformed one', async () => {
    const store = await newStore();
    const none = await verifyCode(store.id, buyerEmail(), '000000', clientIp());
    expect(none.status).toBe(400);
    expect(await none.json()).toEqual(TOKEN_INVALID);
    for (const code of ['12345', '1234567', 'abcdef', '12 456']) {
      const malformed = await verifyCode(store.id, buyerEmail(), code, clientIp());
      expect(malformed.status, code).toBe(400);
      expect((await malformed.json()).code).toBe('validation_failed');
    }
  });

  it('allow at most 5 tries: after 5 wrong codes even the right one fails', async () => {
    const store = await newStore();
    const email = buyerEmail();
    const ip = clientIp();
    const code = await requestCode(store.id, email, ip);
    for (let i = 0; i < 5; i++) {
      const wrong = await verifyCode(store.id, email, otherCode(code), ip);
      expect(wrong.status).toBe(400);
      expect(await wrong.json()).toEqual(TOKEN_INVALID);
    }
    const right = await verifyCode(store.id, email, code, ip);
    expect(right.status).toBe(400);
    expect(await right.json()).toEqual(TOKEN_INVALID);
    // A fresh code starts a fresh budget.
    const fresh = await requestCode(store.id, email, ip);
    expect((await verifyCode(store.id, email, fresh, ip)).status).toBe(200);
  });

  it('allow at most 5 tries even when guessed in parallel', async () => {
    const store = await newStore();
    const email = buyerEmail();
    const ip = clientIp();
    const code = await requestCode(store.id, email, ip);
    const guesses = await Promise.all(
      Array.from({ length: 8 }, () => verifyCode(store.id, email, otherCode(code), ip).then((r) => r.status)),
    );
    expect(new Set(guesses)).toEqual(new Set([400]));
    expect((await verifyCode(store.id, email, code, ip)).status).toBe(400);
  });

  it('are replaced by a new code: the earlier one stops working', async () => {
    const store = await newStore();
    const email = buyerEmail();
    const ip = clientIp();
    const old = await requestCode(store.id, email, ip);
    let fresh = await requestCode(store.id, email, ip);
    // One chance in a million that the two are equal; ask once more then.
    if (fresh === old) fresh = await requestCode(store.id, email, ip);
    const stale = await verifyCode(store.id, email, old, ip);
    expect(stale.status).toBe(400);
    expect(await stale.json()).toEqual(TOKEN_INVALID);
    expect((await verifyCode(store.id, email, fresh, ip)).status).toBe(200);
  });

  it('are replaced by a new code even when requested in parallel: at most one of them signs in', async () => {
    const store = await newStore();
    const email = buyerEmail();
    const ip = clientIp();
    const seen = smtp.mails.length;
    const starts = await Promise.all(Array.from({ length: 5 }, () => startCode(store.id, email, ip)));
    expect(starts.map((r) => r.status)).toEqual([204, 204, 204, 204, 204]);
    await smtp.waitFor(() => smtp.mails.slice(seen).filter((mail) => mail.to.includes(email)).length === 5);
    const codes = smtp.mails
      .slice(seen)
      .filter((mail) => mail.to.includes(email))
      .map(codeIn);
    const statuses: number[] = [];
    // Every code twice, so a code left open behind another one would show.
    for (const code of [...codes, ...codes]) statuses.push((await verifyCode(store.id, email, code, ip)).status);
    expect(statuses.filter((status) => status === 200).length, JSON.stringify(statuses)).toBe(1);
  });

  it('belong to one store and one address', async () => {
    const store = await newStore();
    const otherStore = await newStore();
    const email = buyerEmail();
    const ip = clientIp();
    const code = await requestCode(store.id, email, ip);
    // Someone else asks for a code at the other store with the same address.
    expect((await startCode(otherStore.id, email, ip)).status).toBe(204);
    expect((await verifyCode(otherStore.id, email, code, ip)).status).toBe(400);
    expect((await verifyCode(store.id, buyerEmail(), code, ip)).status).toBe(400);
    expect((await verifyCode(store.id, email, code, ip)).status).toBe(200);
  });
});

describe('codes and sessions against the clock (in-process)', () => {
  it('expire 10 minutes after they were sent; sessions after 30 days', async () => {
    const clock = new ManualClock(Date.now());
    const app = await startInProcess({ clock, env: { SMTP_URL: smtp.url } });
    try {
      const store = await createStore(app.orm.em.fork());
      const late = buyerEmail('late');
      const onTime = buyerEmail('ontime');
      const codes: Record<string, string> = {};
      for (const email of [late, onTime]) {
        const seen = smtp.mails.length;
        const response = await startCode(store.id, email, clientIp(), app.url);
        expect(response.status).toBe(204);
        codes[email] = codeIn(await mailAfter(seen, email));
      }

      clock.advance(10 * MINUTE - 1_000);
      const inTime = await verifyCode(store.id, onTime, codes[onTime]!, clientIp(), app.url);
      expect(inTime.status).toBe(200);
      const cookie = customerCookieFrom(inTime);

      clock.advance(1_000); // exactly 10 minutes after the code was sent
      const expired = await verifyCode(store.id, late, codes[late]!, clientIp(), app.url);
      expect(expired.status).toBe(400);
      expect(await expired.json()).toEqual(TOKEN_INVALID);

      expect((await call('/api/v1/customer-dashboard/profile', { cookie, base: app.url })).status).toBe(200);
      clock.advance(30 * 24 * 3600_000);
      const stale = await call('/api/v1/customer-dashboard/profile', { cookie, base: app.url });
      expect(stale.status).toBe(401);
      expect(await stale.json()).toEqual(EXPIRED_SESSION);
    } finally {
      await app.close();
    }
  });
});

describe('rate limits on code requests', () => {
  it('answer the 6th request from one client within 15 minutes with 429 and Retry-After', async () => {
    const store = await newStore();
    const ip = clientIp();
    for (let i = 1; i <= 5; i++) {
      const response = await startCode(store.id, buyerEmail(), ip);
      expect(response.status, `request ${i}`).toBe(204);
    }
    const email = buyerEmail();
    const limited = await startCode(store.id, email, ip);
    expect(limited.status).toBe(429);
    expect(await limited.json()).toEqual(RATE_LIMITED);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(800);
    expect(retryAfter).toBeLessThanOrEqual(900);
    // Another client is not affected.
    expect((await startCode(store.id, buyerEmail(), clientIp())).status).toBe(204);
    expect(smtp.mails.some((mail) => mail.to.includes(email))).toBe(false);
  });

  it('answer the 6th request for one address in one store with 429, whatever the client', async () => {
    const store = await newStore();
    const otherStore = await newStore();
    const email = buyerEmail();
    for (let i = 1; i <= 5; i++)
      expect((await startCode(store.id, email, clientIp())).status, `request ${i}`).toBe(204);
    const limited = await startCode(store.id, email, clientIp());
    expect(limited.status).toBe(429);
    expect(await limited.json()).toEqual(RATE_LIMITED);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // The same address at another store has its own budget.
    expect((await startCode(otherStore.id, email, clientIp())).status).toBe(204);
  });
});

describe('rate limits on code requests (headers and verify)', () => {
  it('report the budget that runs out first in the rate-limit headers', async () => {
    const store = await newStore();
    const ip = clientIp();
    const perClient: Array<string | null> = [];
    for (let i = 0; i < 5; i++)
      perClient.push((await startCode(store.id, buyerEmail(), ip)).headers.get('x-ratelimit-remaining'));
    expect(perClient).toEqual(['4', '3', '2', '1', '0']);

    const email = buyerEmail();
    const perAddress: Array<string | null> = [];
    for (let i = 0; i < 5; i++)
      perAddress.push((await startCode(store.id, email, clientIp())).headers.get('x-ratelimit-remaining'));
    expect(perAddress).toEqual(['4', '3', '2', '1', '0']);
  });

  it('answer the 21st verify from one client within 15 minutes with 429', async () => {
    const store = await newStore();
    const ip = clientIp();
    for (let i = 1; i <= 20; i++)
      expect((await verifyCode(store.id, buyerEmail(), '123456', ip)).status, `verify ${i}`).toBe(400);
    const limited = await verifyCode(store.id, buyerEmail(), '123456', ip);
    expect(limited.status).toBe(429);
    expect(await limited.json()).toEqual(RATE_LIMITED);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('customer sessions', () => {
  it('answer 401 without the svc_customer cookie', async () => {
    for (const path of [
      ...CUSTOMER_GETS,
      `/api/customer/orders/${newId()}`,
      `/api/v1/customer-dashboard/orders/ORD-1001`,
    ]) {
      const response = await call(path);
      expect(response.status, path).toBe(401);
      expect(await response.json()).toEqual(NO_SESSION);
    }
  });

  it('answer 401 for a cookie that is no session', async () => {
    const response = await call('/api/customer/orders', {
      cookie: `svc_customer=${randomBytes(32).toString('base64url')}`,
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual(EXPIRED_SESSION);
  });

  it('never take a seller session for a customer session', async () => {
    const seller = await registerSeller(server.url);
    const store = await createStoreFor(seller);
    await insertOrders(server.db.url, store.id, [{ customerEmail: seller.email }]);
    const sellerToken = seller.cookie.slice('svc_session='.length);
    for (const cookie of [seller.cookie, `svc_customer=${sellerToken}`, `${seller.cookie}; svc_customer=`]) {
      for (const path of CUSTOMER_GETS) {
        const response = await call(path, { cookie });
        expect(response.status, `${cookie} ${path}`).toBe(401);
        expect((await response.json()).code).toBe('unauthorized');
      }
    }
    // And the seller's own session still works for the dashboard.
    expect((await dashboard(seller, 'GET', `/api/dashboard/stores/${store.id}`)).status).toBe(200);
  });

  it('are enforced the same over /trpc', async () => {
    const seller = await registerSeller(server.url);
    const store = await newStore();
    const trpcOrders = (cookie?: string) => call(`/trpc/customer.orders?input=${encodeURIComponent('{}')}`, { cookie });
    for (const cookie of [undefined, seller.cookie]) {
      const refused = await trpcOrders(cookie);
      expect(refused.status).toBe(401);
      expect((await refused.json()).error.data).toMatchObject({ code: 'unauthorized', httpStatus: 401 });
    }
    const { cookie } = await signIn(store.id, buyerEmail());
    const ok = await trpcOrders(cookie);
    expect(ok.status).toBe(200);
    expect((await ok.json()).result.data).toEqual({ orders: [], hasMore: false, nextCursor: null });
  });

  it('end at logout: the cookie is cleared and the old one no longer opens anything', async () => {
    const store = await newStore();
    const { cookie } = await signIn(store.id, buyerEmail());
    expect((await call('/api/customer/orders', { cookie })).status).toBe(200);

    const logout = await call('/api/customer/auth/logout', { method: 'POST', cookie });
    expect(logout.status).toBe(204);
    const cleared = logout.headers.getSetCookie().find((value) => value.startsWith('svc_customer='));
    expect(cleared).toBeDefined();
    expect(cleared!.split(';')[0]).toBe('svc_customer=');
    expect(cleared).toContain('Max-Age=0');

    for (const path of CUSTOMER_GETS) {
      const response = await call(path, { cookie });
      expect(response.status, path).toBe(401);
      expect(await response.json()).toEqual(EXPIRED_SESSION);
    }
    // Logging out without a session is harmless.
    expect((await call('/api/customer/auth/logout', { method: 'POST' })).status).toBe(204);
  });
});

describe('CORS for themes', () => {
  async function storeWithOrigin() {
    const seller = await registerSeller(server.url);
    const store = await createStoreFor(seller);
    const origin = `https://theme-${randomBytes(4).toString('hex')}.example`;
    const patched = await dashboard(seller, 'PATCH', `/api/dashboard/stores/${store.id}`, { allowedOrigins: [origin] });
    expect(patched.status).toBe(200);
    expect((await patched.json()).allowedOrigins).toEqual([origin]);
    return { seller, store, origin };
  }

  function preflight(path: string, origin: string, method = 'GET') {
    return call(path, {
      method: 'OPTIONS',
      origin,
      headers: { 'access-control-request-method': method, 'access-control-request-headers': 'content-type' },
    });
  }

  function expectAllowed(response: Response, origin: string) {
    expect(response.headers.get('access-control-allow-origin')).toBe(origin);
    expect(response.headers.get('access-control-allow-credentials')).toBe('true');
    expect(response.headers.get('vary')).toMatch(/\bOrigin\b/i);
  }

  function expectNotAllowed(response: Response) {
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    expect(response.headers.get('access-control-allow-methods')).toBeNull();
  }

  it("allows a store's allowedOrigins, with credentials, on preflights and real requests", async () => {
    const { store, origin } = await storeWithOrigin();
    const email = buyerEmail();
    await insertOrders(server.db.url, store.id, [{ customerEmail: email }]);

    for (const [path, method] of [
      ['/api/customer/orders', 'GET'],
      ['/api/customer/auth/start', 'POST'],
      ['/api/v1/customer-dashboard/profile', 'GET'],
    ] as const) {
      const response = await preflight(path, origin, method);
      expect(response.status, path).toBe(204);
      expectAllowed(response, origin);
      expect(response.headers.get('access-control-allow-methods')).toContain(method);
      expect(response.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('content-type');
    }

    const ip = clientIp();
    const seen = smtp.mails.length;
    const start = await call('/api/customer/auth/start', { body: { storeId: store.id, email }, ip, origin });
    expect(start.status).toBe(204);
    expectAllowed(start, origin);
    const code = codeIn(await mailAfter(seen, email));
    const verify = await call('/api/customer/auth/verify', { body: { storeId: store.id, email, code }, ip, origin });
    expect(verify.status).toBe(200);
    expectAllowed(verify, origin);
    const cookie = customerCookieFrom(verify);

    const orders = await call('/api/customer/orders', { cookie, origin });
    expect(orders.status).toBe(200);
    expectAllowed(orders, origin);
    expect((await orders.json()).orders).toHaveLength(1);
    const profile = await call('/api/v1/customer-dashboard/profile', { cookie, origin });
    expect(profile.status).toBe(200);
    expectAllowed(profile, origin);

    // A theme can read the 401 too, to send the buyer to sign in.
    const anonymous = await call('/api/v1/customer-dashboard/orders', { origin });
    expect(anonymous.status).toBe(401);
    expectAllowed(anonymous, origin);
  });

  it('allows https://<subdomain>.<STOREFRONT_BASE_DOMAIN> of the store', async () => {
    const store = await newStore();
    const origin = `https://${store.subdomain}.${BASE_DOMAIN}`;
    const pre = await preflight('/api/v1/customer-dashboard/orders', origin);
    expect(pre.status).toBe(204);
    expectAllowed(pre, origin);

    const { cookie } = await signIn(store.id, buyerEmail());
    for (const path of CUSTOMER_GETS) {
      const response = await call(path, { cookie, origin });
      expect(response.status, path).toBe(200);
      expectAllowed(response, origin);
    }
  });

  it('gives no CORS headers to an origin no store claims', async () => {
    const store = await newStore();
    const banned = await newStore({ banned: true });
    const { cookie } = await signIn(store.id, buyerEmail());
    const strangers = [
      `https://evil-${randomBytes(4).toString('hex')}.example`,
      `https://${uniqueSubdomain('nobody')}.${BASE_DOMAIN}`,
      `https://${banned.subdomain}.${BASE_DOMAIN}`,
      `https://${store.subdomain}.${BASE_DOMAIN}.evil.example`,
      `http://${store.subdomain}.${BASE_DOMAIN}`,
      `https://${store.subdomain}x${BASE_DOMAIN}`,
    ];
    for (const origin of strangers) {
      const pre = await preflight('/api/customer/orders', origin);
      expect(pre.status, origin).toBe(204);
      expectNotAllowed(pre);
      const real = await call('/api/customer/orders', { cookie, origin });
      expectNotAllowed(real);
      expect(real.status, origin).not.toBe(200);
    }
  });

  it('stops allowing the origins of a store once it is banned', async () => {
    const { store, origin } = await storeWithOrigin();
    const subdomainOrigin = `https://${store.subdomain}.${BASE_DOMAIN}`;
    expectAllowed(await preflight('/api/customer/orders', origin), origin);
    expectAllowed(await preflight('/api/customer/orders', subdomainOrigin), subdomainOrigin);
    await orm.em.fork().nativeUpdate(StoreSchema, { id: store.id }, { banned: true });
    expectNotAllowed(await preflight('/api/customer/orders', origin));
    expectNotAllowed(await preflight('/api/customer/orders', subdomainOrigin));
  });

  it("lets this service's own origin through without CORS headers", async () => {
    const store = await newStore();
    const { cookie } = await signIn(store.id, buyerEmail());
    const response = await call('/api/customer/orders', { cookie, origin: PUBLIC_URL });
    expect(response.status).toBe(200);
    expectNotAllowed(response);
  });

  it("refuses a customer of store A calling from store B's origin with 403", async () => {
    const a = await storeWithOrigin();
    const b = await storeWithOrigin();
    const email = buyerEmail();
    await insertOrders(server.db.url, a.store.id, [{ customerEmail: email }]);
    const { cookie } = await signIn(a.store.id, email);

    const bOrigins = [b.origin, `https://${b.store.subdomain}.${BASE_DOMAIN}`];
    for (const origin of bOrigins) {
      for (const path of CUSTOMER_GETS) {
        const response = await call(path, { cookie, origin });
        expect(response.status, `${origin} ${path}`).toBe(403);
        expect(await response.json()).toEqual(WRONG_ORIGIN);
      }
    }
    // From its own origins, and with no Origin at all, the same cookie works.
    for (const origin of [a.origin, `https://${a.store.subdomain}.${BASE_DOMAIN}`, undefined]) {
      expect((await call('/api/customer/orders', { cookie, origin })).status, String(origin)).toBe(200);
    }
  });

  it("refuses to sign a customer of store A out from store B's origin with 403, and keeps the session", async () => {
    const a = await storeWithOrigin();
    const b = await storeWithOrigin();
    const { cookie } = await signIn(a.store.id, buyerEmail());

    for (const origin of [b.origin, `https://${b.store.subdomain}.${BASE_DOMAIN}`]) {
      const logout = await call('/api/customer/auth/logout', { method: 'POST', cookie, origin });
      expect(logout.status, origin).toBe(403);
      expect(await logout.json()).toEqual(WRONG_ORIGIN);
      // The cookie is not cleared, and the session still opens the buyer's orders.
      expect(logout.headers.getSetCookie().filter((value) => value.startsWith('svc_customer='))).toEqual([]);
      expect((await call('/api/customer/orders', { cookie, origin: a.origin })).status, origin).toBe(200);
    }
    const own = await call('/api/customer/auth/logout', { method: 'POST', cookie, origin: a.origin });
    expect(own.status).toBe(204);
    expectAllowed(own, a.origin);
    expect((await call('/api/customer/orders', { cookie, origin: a.origin })).status).toBe(401);
  });
});

describe('without SMTP_URL', () => {
  let plain: Awaited<ReturnType<typeof startServer>>;
  let plainOrm: Orm;

  beforeAll(async () => {
    plain = await startServer({ TRUST_PROXY: '127.0.0.1', SMTP_URL: undefined });
    plainOrm = await openOrm(plain.db.url, { poolMax: 2 });
  });

  afterAll(async () => {
    await plainOrm?.close();
    await plain?.stop();
  });

  it('keeps the code e-mail in the outbox, visible at /dev/mailbox.json', async () => {
    const store = await createStore(plainOrm.em.fork(), { name: 'Outbox Shop' });
    const email = buyerEmail();
    const ip = clientIp();
    const start = await startCode(store.id, email, ip, plain.url);
    expect(start.status).toBe(204);

    const mailbox = await fetch(`${plain.url}/dev/mailbox.json`);
    expect(mailbox.status).toBe(200);
    const { emails } = await mailbox.json();
    const mail = emails.find((entry: { to: string }) => entry.to === email);
    expect(mail).toMatchObject({
      to: email,
      subject: 'Your sign-in code for Outbox Shop',
      createdAt: expect.any(String),
    });
    expect(mail.text).toMatch(/\b\d{6}\b/);

    const verified = await verifyCode(store.id, email, codeIn(mail), ip, plain.url);
    expect(verified.status).toBe(200);
    expect((await verified.json()).customer).toMatchObject({ storeId: store.id, email });
  });
});

describe('in production', () => {
  let prod: Awaited<ReturnType<typeof startServer>>;
  let prodOrm: Orm;

  beforeAll(async () => {
    prod = await startServer({ NODE_ENV: 'production', PUBLIC_URL, SMTP_URL: smtp.url, TRUST_PROXY: '127.0.0.1' });
    prodOrm = await openOrm(prod.db.url, { poolMax: 2 });
  });

  afterAll(async () => {
    await prodOrm?.close();
    await prod?.stop();
  });

  it('sends the svc_customer cookie SameSite=None and Secure, so themes on their own origin can use it', async () => {
    const store = await createStore(prodOrm.em.fork());
    const email = buyerEmail();
    const ip = clientIp();
    const seen = smtp.mails.length;
    expect((await startCode(store.id, email, ip, prod.url)).status).toBe(204);
    const verified = await verifyCode(store.id, email, codeIn(await mailAfter(seen, email)), ip, prod.url);
    expect(verified.status).toBe(200);
    const set = verified.headers.getSetCookie().find((value) => value.startsWith('svc_customer='))!;
    const attributes = set.split(';').map((part) => part.trim());
    expect(attributes).toEqual(expect.arrayContaining(['HttpOnly', 'Secure', 'SameSite=None', 'Path=/']));

    const logout = await call('/api/customer/auth/logout', {
      method: 'POST',
      cookie: set.split(';')[0],
      base: prod.url,
    });
    expect(logout.status).toBe(204);
    const cleared = logout.headers.getSetCookie().find((value) => value.startsWith('svc_customer='))!;
    expect(cleared.split(';').map((part) => part.trim())).toEqual(
      expect.arrayContaining(['svc_customer=', 'Max-Age=0', 'Secure', 'SameSite=None']),
    );
    // No development mailbox in production.
    expect((await fetch(`${prod.url}/dev/mailbox.json`)).status).toBe(404);
  });
});

describe('privacy', () => {
  it("never shows the buyer's IP or user agent in verify, profile or order JSON", async () => {
    const store = await newStore();
    const email = buyerEmail();
    const marker = randomBytes(4).toString('hex');
    const buyerIp = '192.0.2.177';
    const userAgent = `SecretBrowser/${marker} (privacy-check)`;
    const [order] = await insertOrders(server.db.url, store.id, [
      { customerEmail: email, buyerIp, userAgent, note: 'internal note' },
    ]);

    const ip = clientIp();
    const code = await requestCode(store.id, email, ip);
    const verified = await verifyCode(store.id, email, code, ip);
    expect(verified.status).toBe(200);
    const cookie = customerCookieFrom(verified);
    const texts = [await verified.text()];
    for (const path of [
      ...CUSTOMER_GETS,
      `/api/customer/orders/${order!.id}`,
      `/api/customer/orders/ORD-${order!.number}`,
      `/api/v1/customer-dashboard/orders/${order!.id}`,
    ]) {
      const response = await call(path, { cookie, headers: { 'user-agent': userAgent } });
      expect(response.status, path).toBe(200);
      texts.push(await response.text());
    }
    for (const text of texts) {
      expect(text).not.toContain(buyerIp);
      expect(text).not.toContain(marker);
      expect(text).not.toContain(ip);
      expect(text).not.toMatch(/buyer_?ip|user_?agent|internal note/i);
    }
  });
});
