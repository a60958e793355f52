/**
 * Black-box: coupons (the seller's CRUD under /api/dashboard/stores/{storeId}/coupons and the
 * buyer's POST /api/coupons/validate) and blacklists (the seller's list and the public
 * POST /api/checkout/client-gate), on the built server over real HTTP.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addStaff,
  clientIp,
  createStoreFor,
  dashboard,
  registerSeller,
  uniqueEmail,
  type Seller,
} from './support/seller.js';
import { startServer } from './support/server.js';

const RATE_LIMITED = { error: 'Too many requests. Please try again later.', code: 'rate_limited' };
const STORE_NOT_FOUND = { error: 'Store not found.', code: 'not_found' };
const COUPON_NOT_FOUND = { error: 'Coupon not found.', code: 'not_found' };
const CODE_TAKEN = { error: 'A coupon with this code already exists in the store.', code: 'conflict' };
const ALREADY_LISTED = { error: 'This value is already on the blacklist.', code: 'conflict' };
const ENTRY_NOT_FOUND = { error: 'Blacklist entry not found.', code: 'not_found' };

const REFUSED = {
  unknown: 'This coupon does not exist.',
  expired: 'This coupon has expired.',
  usedUp: 'This coupon has been used up.',
  minimum: 'The cart is below the minimum for this coupon.',
  noEligible: 'This coupon does not apply to anything in the cart.',
};

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let server: Awaited<ReturnType<typeof startServer>>;

beforeAll(async () => {
  server = await startServer();
});

afterAll(async () => {
  await server?.stop();
});

// ---------------------------------------------------------------------------------------------
// Helpers

interface CallOptions {
  method?: string;
  body?: unknown;
  ip?: string;
  headers?: Record<string, string>;
}

/** A public call as a theme or buyer makes it; each call its own client unless `ip` says otherwise. */
function call(path: string, opts: CallOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { 'x-forwarded-for': opts.ip ?? clientIp(), ...opts.headers };
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  return fetch(`${server.url}${path}`, {
    method: opts.method ?? (opts.body === undefined ? 'GET' : 'POST'),
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
}

function uniqueCode(prefix = 'SAVE'): string {
  return `${prefix}-${randomBytes(4).toString('hex').toUpperCase()}`;
}

async function sellerWithStore(): Promise<{ seller: Seller; store: { id: string; subdomain: string } }> {
  const seller = await registerSeller(server.url);
  const store = await createStoreFor(seller);
  return { seller, store };
}

async function createProduct(
  seller: Seller,
  storeId: string,
  price: number,
  name = `Product ${randomBytes(3).toString('hex')}`,
): Promise<string> {
  const response = await dashboard(seller, 'POST', `/api/dashboard/stores/${storeId}/products`, {
    name,
    price,
    deliveryMethods: ['manualDelivery'],
  });
  expect(response.status).toBe(201);
  return (await response.json()).id;
}

async function createCoupon(
  seller: Seller,
  storeId: string,
  body: Record<string, unknown>,
): Promise<Record<string, unknown> & { id: string; code: string }> {
  const response = await dashboard(seller, 'POST', `/api/dashboard/stores/${storeId}/coupons`, body);
  expect(response.status, JSON.stringify(await response.clone().json())).toBe(201);
  return response.json();
}

function validate(body: Record<string, unknown>, ip?: string): Promise<Response> {
  return call('/api/coupons/validate', { body, ...(ip ? { ip } : {}) });
}

async function validated(body: Record<string, unknown>): Promise<unknown> {
  const response = await validate(body);
  expect(response.status).toBe(200);
  return response.json();
}

function addEntry(seller: Seller, storeId: string, body: Record<string, unknown>): Promise<Response> {
  return dashboard(seller, 'POST', `/api/dashboard/stores/${storeId}/blacklist`, body);
}

function gate(body: Record<string, unknown>, ip: string, country: string): Promise<Response> {
  return call('/api/checkout/client-gate', { body, ip, headers: { 'cf-ipcountry': country } });
}

async function expectRateLimited(response: Response): Promise<void> {
  expect(response.status).toBe(429);
  expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
  expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(await response.json()).toEqual(RATE_LIMITED);
}

// ---------------------------------------------------------------------------------------------
// Coupons: the seller's side

describe('coupons in the dashboard', () => {
  it('creates, lists, reads, changes and deletes a coupon', async () => {
    const { seller, store } = await sellerWithStore();
    const productId = await createProduct(seller, store.id, 9.99);
    const code = uniqueCode();
    const created = await createCoupon(seller, store.id, {
      code,
      discountType: 'fixed',
      discountValue: 5,
      productIds: [productId, productId],
      maxUses: 3,
      minAmount: 10.5,
      expiresAt: '2099-01-01T00:00:00+02:00',
    });
    expect(created).toEqual({
      id: expect.any(String),
      storeId: store.id,
      livemode: true,
      code,
      discountType: 'fixed',
      discountValue: 5,
      productIds: [productId],
      maxUses: 3,
      uses: 0,
      minAmount: 10.5,
      expiresAt: '2098-12-31T22:00:00.000Z',
      active: true,
      duration: 'once',
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
    });
    const base = `/api/dashboard/stores/${store.id}/coupons`;

    const minimal = await createCoupon(seller, store.id, {
      code: uniqueCode('PCT'),
      discountType: 'percent',
      discountValue: 15,
    });
    expect(minimal).toMatchObject({
      discountType: 'percent',
      discountValue: 15,
      productIds: [],
      maxUses: null,
      minAmount: null,
      expiresAt: null,
      active: true,
      uses: 0,
    });

    const list = await dashboard(seller, 'GET', base);
    expect(list.status).toBe(200);
    expect(await list.json()).toEqual({ coupons: [created, minimal] });

    const one = await dashboard(seller, 'GET', `${base}/${created.id}`);
    expect(one.status).toBe(200);
    expect(await one.json()).toEqual(created);

    const patched = await dashboard(seller, 'PATCH', `${base}/${created.id}`, {
      active: false,
      maxUses: null,
      expiresAt: null,
      discountValue: 2.5,
    });
    expect(patched.status).toBe(200);
    const after = await patched.json();
    expect(after).toEqual({
      ...created,
      active: false,
      maxUses: null,
      expiresAt: null,
      discountValue: 2.5,
      updatedAt: expect.stringMatching(ISO),
    });

    const toPercent = await dashboard(seller, 'PATCH', `${base}/${created.id}`, {
      discountType: 'percent',
      discountValue: 20,
      productIds: [],
      minAmount: null,
    });
    expect(toPercent.status).toBe(200);
    expect(await toPercent.json()).toMatchObject({
      discountType: 'percent',
      discountValue: 20,
      productIds: [],
      minAmount: null,
      code,
    });

    const removed = await dashboard(seller, 'DELETE', `${base}/${created.id}`);
    expect(removed.status).toBe(204);
    expect(await removed.text()).toBe('');
    const gone = await dashboard(seller, 'GET', `${base}/${created.id}`);
    expect(gone.status).toBe(404);
    expect(await gone.json()).toEqual(COUPON_NOT_FOUND);
    const again = await dashboard(seller, 'DELETE', `${base}/${created.id}`);
    expect(again.status).toBe(404);
    expect(await again.json()).toEqual(COUPON_NOT_FOUND);
  });

  it('refuses a code the store already has in any case, on create and on rename', async () => {
    const { seller, store } = await sellerWithStore();
    const code = uniqueCode('Summer');
    await createCoupon(seller, store.id, { code, discountType: 'percent', discountValue: 10 });
    const base = `/api/dashboard/stores/${store.id}/coupons`;

    const duplicate = await dashboard(seller, 'POST', base, {
      code: code.toLowerCase(),
      discountType: 'fixed',
      discountValue: 1,
    });
    expect(duplicate.status).toBe(409);
    expect(await duplicate.json()).toEqual(CODE_TAKEN);

    const other = await createCoupon(seller, store.id, {
      code: uniqueCode('Winter'),
      discountType: 'percent',
      discountValue: 10,
    });
    const rename = await dashboard(seller, 'PATCH', `${base}/${other.id}`, { code: code.toUpperCase() });
    expect(rename.status).toBe(409);
    expect(await rename.json()).toEqual(CODE_TAKEN);

    // Renaming a coupon to another spelling of its own code is fine.
    const recase = await dashboard(seller, 'PATCH', `${base}/${other.id}`, { code: String(other.code).toLowerCase() });
    expect(recase.status).toBe(200);
    expect((await recase.json()).code).toBe(String(other.code).toLowerCase());

    // Another store may use the same code.
    const { seller: otherSeller, store: otherStore } = await sellerWithStore();
    await createCoupon(otherSeller, otherStore.id, { code, discountType: 'percent', discountValue: 10 });
  });

  it('validates values: percent 1..100 whole, fixed amounts, code characters, the store’s products', async () => {
    const { seller, store } = await sellerWithStore();
    const base = `/api/dashboard/stores/${store.id}/coupons`;
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ code: uniqueCode(), discountType: 'percent', discountValue: 150 }, 'discountValue'],
      [{ code: uniqueCode(), discountType: 'percent', discountValue: 12.5 }, 'discountValue'],
      [{ code: uniqueCode(), discountType: 'percent', discountValue: 0 }, 'discountValue'],
      [{ code: uniqueCode(), discountType: 'fixed', discountValue: 5.001 }, 'discountValue'],
      [{ code: 'has space', discountType: 'fixed', discountValue: 5 }, 'code'],
      [{ code: 'x'.repeat(65), discountType: 'fixed', discountValue: 5 }, 'code'],
      [{ code: '', discountType: 'fixed', discountValue: 5 }, 'code'],
      [{ code: uniqueCode(), discountType: 'bogus', discountValue: 5 }, 'discountType'],
      [{ code: uniqueCode(), discountType: 'fixed', discountValue: 5, maxUses: 0 }, 'maxUses'],
      [{ code: uniqueCode(), discountType: 'fixed', discountValue: 5, expiresAt: 'tomorrow' }, 'expiresAt'],
      [{ code: uniqueCode(), discountType: 'fixed', discountValue: 5, uses: 3 }, 'uses'],
    ];
    for (const [body, path] of cases) {
      const response = await dashboard(seller, 'POST', base, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      const error = await response.json();
      expect(error.code).toBe('validation_failed');
      expect(
        error.issues.map((issue: { path: string }) => issue.path),
        JSON.stringify(body),
      ).toContain(path);
    }

    // A product of another store is unknown here.
    const { seller: otherSeller, store: otherStore } = await sellerWithStore();
    const foreign = await createProduct(otherSeller, otherStore.id, 3);
    const mine = await createProduct(seller, store.id, 3);
    const unknown = await dashboard(seller, 'POST', base, {
      code: uniqueCode(),
      discountType: 'fixed',
      discountValue: 1,
      productIds: [mine, foreign],
    });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toEqual({
      error: 'The request is not valid.',
      code: 'validation_failed',
      issues: [{ path: 'productIds.1', message: 'Not a product of this store.' }],
    });

    // Changing the type needs the value that goes with it.
    const coupon = await createCoupon(seller, store.id, {
      code: uniqueCode(),
      discountType: 'fixed',
      discountValue: 500,
    });
    const retype = await dashboard(seller, 'PATCH', `${base}/${coupon.id}`, { discountType: 'percent' });
    expect(retype.status).toBe(400);
    expect(await retype.json()).toEqual({
      error: 'The request is not valid.',
      code: 'validation_failed',
      issues: [{ path: 'discountValue', message: 'Required when discountType changes.' }],
    });
    const tooMuch = await dashboard(seller, 'PATCH', `${base}/${coupon.id}`, { discountValue: 101 });
    expect(tooMuch.status).toBe(200); // fixed: 101.00 off is fine
    const pctCoupon = await createCoupon(seller, store.id, {
      code: uniqueCode(),
      discountType: 'percent',
      discountValue: 10,
    });
    const pctTooMuch = await dashboard(seller, 'PATCH', `${base}/${pctCoupon.id}`, { discountValue: 101 });
    expect(pctTooMuch.status).toBe(400);
    expect((await pctTooMuch.json()).issues).toEqual([
      { path: 'discountValue', message: 'A percent discount is a whole number from 1 to 100.' },
    ]);
  });

  it("answers 404 for another store's coupon and keeps non-members and staff without manageProducts out", async () => {
    const { seller, store } = await sellerWithStore();
    const coupon = await createCoupon(seller, store.id, {
      code: uniqueCode(),
      discountType: 'percent',
      discountValue: 10,
    });
    const { seller: other, store: otherStore } = await sellerWithStore();

    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { active: false }],
      ['DELETE', undefined],
    ] as const) {
      const response = await dashboard(
        other,
        method,
        `/api/dashboard/stores/${otherStore.id}/coupons/${coupon.id}`,
        body,
      );
      expect(response.status, method).toBe(404);
      expect(await response.json()).toEqual(COUPON_NOT_FOUND);
    }
    const foreign = await dashboard(other, 'GET', `/api/dashboard/stores/${store.id}/coupons`);
    expect(foreign.status).toBe(403);
    expect(await foreign.json()).toEqual({ error: 'You are not a member of this store.', code: 'store_forbidden' });

    const staff = await registerSeller(server.url);
    await addStaff(seller, store.id, staff, ['viewOrders']);
    const denied = await dashboard(staff, 'POST', `/api/dashboard/stores/${store.id}/coupons`, {
      code: uniqueCode(),
      discountType: 'percent',
      discountValue: 10,
    });
    expect(denied.status).toBe(403);
    expect(await denied.json()).toEqual({
      error: 'This needs the manageProducts permission.',
      code: 'permission_missing',
    });

    const anonymous = await fetch(`${server.url}/api/dashboard/stores/${store.id}/coupons`);
    expect(anonymous.status).toBe(401);

    // Still there, unchanged.
    const still = await dashboard(seller, 'GET', `/api/dashboard/stores/${store.id}/coupons/${coupon.id}`);
    expect(await still.json()).toEqual(coupon);
  });
});

// ---------------------------------------------------------------------------------------------
// Coupons: the buyer's check

describe('POST /api/coupons/validate', () => {
  it('prices a percent coupon on a cart (15% of 2 × 9.99 = 2.99), by store id or subdomain, in any case', async () => {
    const { seller, store } = await sellerWithStore();
    const productId = await createProduct(seller, store.id, 9.99);
    const code = uniqueCode('Fifteen');
    await createCoupon(seller, store.id, { code, discountType: 'percent', discountValue: 15, maxUses: 100 });
    const expected = { valid: true, code, discountType: 'percent', discountValue: 15, discount: 2.99 };

    expect(await validated({ storeId: store.id, code, cart: [{ productId, quantity: 2 }] })).toEqual(expected);
    expect(
      await validated({ storeId: store.subdomain, code: code.toLowerCase(), cart: [{ productId, quantity: 2 }] }),
    ).toEqual(expected);
    expect(
      await validated({ storeId: store.id, code: `  ${code.toUpperCase()} `, cart: [{ productId, quantity: 2 }] }),
    ).toEqual(expected);
    // Without a cart: whether the code works, no amount.
    expect(await validated({ storeId: store.id, code })).toEqual({
      valid: true,
      code,
      discountType: 'percent',
      discountValue: 15,
    });
  });

  it('prices a fixed coupon, never above the cart', async () => {
    const { seller, store } = await sellerWithStore();
    const productId = await createProduct(seller, store.id, 9.99);
    const five = uniqueCode('Five');
    const big = uniqueCode('Big');
    await createCoupon(seller, store.id, { code: five, discountType: 'fixed', discountValue: 5 });
    await createCoupon(seller, store.id, { code: big, discountType: 'fixed', discountValue: 25.5 });

    expect(await validated({ storeId: store.id, code: five, cart: [{ productId, quantity: 2 }] })).toEqual({
      valid: true,
      code: five,
      discountType: 'fixed',
      discountValue: 5,
      discount: 5,
    });
    expect(await validated({ storeId: store.id, code: big, cart: [{ productId, quantity: 2 }] })).toEqual({
      valid: true,
      code: big,
      discountType: 'fixed',
      discountValue: 25.5,
      discount: 19.98,
    });
  });

  it('applies a product-restricted coupon to its products only', async () => {
    const { seller, store } = await sellerWithStore();
    const eligible = await createProduct(seller, store.id, 10);
    const other = await createProduct(seller, store.id, 40);
    const code = uniqueCode('Only');
    await createCoupon(seller, store.id, { code, discountType: 'percent', discountValue: 50, productIds: [eligible] });

    expect(
      await validated({
        storeId: store.id,
        code,
        cart: [
          { productId: eligible, quantity: 1 },
          { productId: other, quantity: 1 },
        ],
      }),
    ).toEqual({
      valid: true,
      code,
      discountType: 'percent',
      discountValue: 50,
      discount: 5,
    });
    expect(await validated({ storeId: store.id, code, cart: [{ productId: other, quantity: 3 }] })).toEqual({
      valid: false,
      code,
      discountType: 'percent',
      discountValue: 50,
      reason: REFUSED.noEligible,
    });
  });

  it('refuses an expired coupon and accepts one that expires later', async () => {
    const { seller, store } = await sellerWithStore();
    const productId = await createProduct(seller, store.id, 9.99);
    const expired = uniqueCode('Old');
    const later = uniqueCode('New');
    await createCoupon(seller, store.id, {
      code: expired,
      discountType: 'fixed',
      discountValue: 1,
      expiresAt: new Date(Date.now() - 60_000).toISOString(),
    });
    await createCoupon(seller, store.id, {
      code: later,
      discountType: 'fixed',
      discountValue: 1,
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    const cart = [{ productId, quantity: 1 }];

    expect(await validated({ storeId: store.id, code: expired, cart })).toEqual({
      valid: false,
      code: expired,
      discountType: 'fixed',
      discountValue: 1,
      reason: REFUSED.expired,
    });
    expect(await validated({ storeId: store.id, code: expired })).toEqual({
      valid: false,
      code: expired,
      discountType: 'fixed',
      discountValue: 1,
      reason: REFUSED.expired,
    });
    expect(await validated({ storeId: store.id, code: later, cart })).toEqual({
      valid: true,
      code: later,
      discountType: 'fixed',
      discountValue: 1,
      discount: 1,
    });
  });

  it('refuses a coupon whose uses are all taken, without saying how many there were', async () => {
    const { seller, store } = await sellerWithStore();
    const productId = await createProduct(seller, store.id, 9.99);
    const code = uniqueCode('Once');
    const coupon = await createCoupon(seller, store.id, {
      code,
      discountType: 'percent',
      discountValue: 10,
      maxUses: 1,
    });
    const cart = [{ productId, quantity: 1 }];
    expect(await validated({ storeId: store.id, code, cart })).toEqual({
      valid: true,
      code,
      discountType: 'percent',
      discountValue: 10,
      discount: 0.99,
    });

    // A real order takes the one use.
    const order = await call('/api/orders/create', {
      body: { storeId: store.id, cart, email: uniqueEmail('buyer'), coupon: code.toLowerCase() },
    });
    expect(order.status).toBe(201);
    expect((await order.json()).order).toMatchObject({ subtotal: 9.99, discount: 0.99, price: 9, status: 'pending' });

    const response = await validate({ storeId: store.id, code, cart });
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({
      valid: false,
      code,
      discountType: 'percent',
      discountValue: 10,
      reason: REFUSED.usedUp,
    });
    expect(text).not.toMatch(/uses|maxUses/i);

    const seen = await dashboard(seller, 'GET', `/api/dashboard/stores/${store.id}/coupons/${coupon.id}`);
    expect(await seen.json()).toMatchObject({ uses: 1, maxUses: 1 });
  });

  it('will not lower maxUses below the uses orders already took', async () => {
    const { seller, store } = await sellerWithStore();
    const productId = await createProduct(seller, store.id, 4);
    const code = uniqueCode('Twice');
    const coupon = await createCoupon(seller, store.id, { code, discountType: 'fixed', discountValue: 1 });
    for (let i = 0; i < 2; i++) {
      const order = await call('/api/orders/create', {
        body: { storeId: store.id, cart: [{ productId, quantity: 1 }], email: uniqueEmail('buyer'), coupon: code },
      });
      expect(order.status).toBe(201);
    }
    const path = `/api/dashboard/stores/${store.id}/coupons/${coupon.id}`;
    const lowered = await dashboard(seller, 'PATCH', path, { maxUses: 1 });
    expect(lowered.status).toBe(400);
    expect(await lowered.json()).toEqual({
      error: 'The request is not valid.',
      code: 'validation_failed',
      issues: [{ path: 'maxUses', message: 'Below the 2 uses so far.' }],
    });
    const capped = await dashboard(seller, 'PATCH', path, { maxUses: 2 });
    expect(capped.status).toBe(200);
    expect(await capped.json()).toMatchObject({ uses: 2, maxUses: 2 });
    expect(await validated({ storeId: store.id, code })).toEqual({
      valid: false,
      code,
      discountType: 'fixed',
      discountValue: 1,
      reason: REFUSED.usedUp,
    });
  });

  it('refuses a cart below the minimum, and says the code exists when no cart is sent', async () => {
    const { seller, store } = await sellerWithStore();
    const productId = await createProduct(seller, store.id, 9.99);
    const code = uniqueCode('Min');
    await createCoupon(seller, store.id, { code, discountType: 'fixed', discountValue: 3, minAmount: 20 });

    expect(await validated({ storeId: store.id, code, cart: [{ productId, quantity: 2 }] })).toEqual({
      valid: false,
      code,
      discountType: 'fixed',
      discountValue: 3,
      reason: REFUSED.minimum,
    });
    expect(await validated({ storeId: store.id, code, cart: [{ productId, quantity: 3 }] })).toEqual({
      valid: true,
      code,
      discountType: 'fixed',
      discountValue: 3,
      discount: 3,
    });
    expect(await validated({ storeId: store.id, code })).toEqual({
      valid: true,
      code,
      discountType: 'fixed',
      discountValue: 3,
    });
  });

  it('answers an unknown or switched-off code alike with 200, and an unknown store with 404', async () => {
    const { seller, store } = await sellerWithStore();
    const off = uniqueCode('Off');
    const coupon = await createCoupon(seller, store.id, { code: off, discountType: 'percent', discountValue: 10 });
    const disable = await dashboard(seller, 'PATCH', `/api/dashboard/stores/${store.id}/coupons/${coupon.id}`, {
      active: false,
    });
    expect(disable.status).toBe(200);

    expect(await validated({ storeId: store.id, code: 'NO-SUCH-CODE' })).toEqual({
      valid: false,
      code: 'NO-SUCH-CODE',
      discountType: null,
      discountValue: null,
      reason: REFUSED.unknown,
    });
    expect(await validated({ storeId: store.id, code: off.toLowerCase() })).toEqual({
      valid: false,
      code: off.toLowerCase(),
      discountType: null,
      discountValue: null,
      reason: REFUSED.unknown,
    });
    // LIKE wildcards are not wildcards.
    expect(await validated({ storeId: store.id, code: '%' })).toMatchObject({ valid: false, discountType: null });
    // Another store's code does not exist here.
    const { store: otherStore } = await sellerWithStore();
    expect(await validated({ storeId: otherStore.id, code: off })).toMatchObject({
      valid: false,
      discountType: null,
      reason: REFUSED.unknown,
    });

    const missing = await validate({ storeId: 'no-such-store-here', code: off });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual(STORE_NOT_FOUND);

    const bad = await validate({ storeId: store.id, code: off, cart: [{ productId: 'x', quantity: 0 }] });
    expect(bad.status).toBe(400);
    expect((await bad.json()).code).toBe('validation_failed');
  });

  it('allows 20 checks a minute per client, then 429 with Retry-After', async () => {
    const { store } = await sellerWithStore();
    const ip = clientIp();
    for (let i = 1; i <= 20; i++) {
      const response = await validate({ storeId: store.id, code: 'ANY' }, ip);
      expect(response.status, `request ${i}`).toBe(200);
      expect(response.headers.get('x-ratelimit-remaining')).toBe(String(20 - i));
    }
    await expectRateLimited(await validate({ storeId: store.id, code: 'ANY' }, ip));
    // Another client is not affected.
    expect((await validate({ storeId: store.id, code: 'ANY' })).status).toBe(200);
  });
});

// ---------------------------------------------------------------------------------------------
// Blacklists

describe('blacklist in the dashboard', () => {
  it('adds normalised entries, lists them, refuses duplicates and removes them', async () => {
    const { seller, store } = await sellerWithStore();
    const base = `/api/dashboard/stores/${store.id}/blacklist`;
    const email = `FrAuD-${randomBytes(4).toString('hex')}@Example.Test`;

    const added = await addEntry(seller, store.id, { kind: 'email', value: ` ${email} `, note: 'chargebacks' });
    expect(added.status).toBe(201);
    const emailEntry = await added.json();
    expect(emailEntry).toEqual({
      id: expect.any(String),
      storeId: store.id,
      livemode: true,
      kind: 'email',
      value: email.toLowerCase(),
      note: 'chargebacks',
      createdAt: expect.stringMatching(ISO),
    });
    const country = await (await addEntry(seller, store.id, { kind: 'country', value: 'ru' })).json();
    expect(country).toMatchObject({ kind: 'country', value: 'RU', note: '' });
    const ipv4 = await (await addEntry(seller, store.id, { kind: 'ip', value: '198.51.100.23' })).json();
    expect(ipv4).toMatchObject({ kind: 'ip', value: '198.51.100.23' });
    const ipv6 = await (await addEntry(seller, store.id, { kind: 'ip', value: '2001:DB8::1' })).json();
    expect(ipv6).toMatchObject({ kind: 'ip', value: '2001:db8::1' });

    for (const duplicate of [
      { kind: 'email', value: email.toUpperCase() },
      { kind: 'country', value: 'RU' },
      { kind: 'ip', value: '198.51.100.23' },
      { kind: 'ip', value: '2001:db8::1' },
    ]) {
      const response = await addEntry(seller, store.id, duplicate);
      expect(response.status, JSON.stringify(duplicate)).toBe(409);
      expect(await response.json()).toEqual(ALREADY_LISTED);
    }

    const list = await dashboard(seller, 'GET', base);
    expect(list.status).toBe(200);
    expect(await list.json()).toEqual({ entries: [emailEntry, country, ipv4, ipv6] });

    const removed = await dashboard(seller, 'DELETE', `${base}/${country.id}`);
    expect(removed.status).toBe(204);
    expect(await removed.text()).toBe('');
    const again = await dashboard(seller, 'DELETE', `${base}/${country.id}`);
    expect(again.status).toBe(404);
    expect(await again.json()).toEqual(ENTRY_NOT_FOUND);
    expect(await (await dashboard(seller, 'GET', base)).json()).toEqual({ entries: [emailEntry, ipv4, ipv6] });
  });

  it('refuses values that are not what their kind says', async () => {
    const { seller, store } = await sellerWithStore();
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ kind: 'email', value: 'not-an-email' }, 'value', 'Not an e-mail address.'],
      [{ kind: 'ip', value: '300.1.2.3' }, 'value', 'Not an IPv4 or IPv6 address.'],
      [{ kind: 'ip', value: 'example.com' }, 'value', 'Not an IPv4 or IPv6 address.'],
      [{ kind: 'country', value: 'DEU' }, 'value', 'Not a two-letter country code.'],
      [{ kind: 'country', value: 'd1' }, 'value', 'Not a two-letter country code.'],
    ];
    for (const [body, path, message] of cases) {
      const response = await addEntry(seller, store.id, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(await response.json()).toEqual({
        error: 'The request is not valid.',
        code: 'validation_failed',
        issues: [{ path, message }],
      });
    }
    for (const body of [
      { kind: 'phone', value: '123' },
      { kind: 'ip', value: '' },
      { kind: 'ip', value: '1.2.3.4', note: 'x'.repeat(201) },
      { kind: 'ip', value: '1.2.3.4', extra: 1 },
    ]) {
      const response = await addEntry(seller, store.id, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect((await response.json()).code).toBe('validation_failed');
    }
    expect(await (await dashboard(seller, 'GET', `/api/dashboard/stores/${store.id}/blacklist`)).json()).toEqual({
      entries: [],
    });
  });

  it("answers 404 for another store's entry and keeps staff without manageSettings out", async () => {
    const { seller, store } = await sellerWithStore();
    const entry = await (await addEntry(seller, store.id, { kind: 'country', value: 'KP' })).json();
    const { seller: other, store: otherStore } = await sellerWithStore();
    const foreign = await dashboard(other, 'DELETE', `/api/dashboard/stores/${otherStore.id}/blacklist/${entry.id}`);
    expect(foreign.status).toBe(404);
    expect(await foreign.json()).toEqual(ENTRY_NOT_FOUND);

    const staff = await registerSeller(server.url);
    await addStaff(seller, store.id, staff, ['manageProducts']);
    for (const [method, path] of [
      ['GET', ''],
      ['POST', ''],
      ['DELETE', `/${entry.id}`],
    ] as const) {
      const response = await dashboard(
        staff,
        method,
        `/api/dashboard/stores/${store.id}/blacklist${path}`,
        method === 'POST' ? { kind: 'ip', value: '1.2.3.4' } : undefined,
      );
      expect(response.status, method).toBe(403);
      expect(await response.json()).toEqual({
        error: 'This needs the manageSettings permission.',
        code: 'permission_missing',
      });
    }
    expect(await (await dashboard(seller, 'GET', `/api/dashboard/stores/${store.id}/blacklist`)).json()).toEqual({
      entries: [entry],
    });
  });
});

describe('POST /api/checkout/client-gate', () => {
  it('lets a buyer through who matches nothing', async () => {
    const { seller, store } = await sellerWithStore();
    await addEntry(seller, store.id, { kind: 'country', value: 'KP' });
    const response = await gate({ storeId: store.id, email: uniqueEmail('buyer') }, clientIp(), 'DE');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ allowed: true, reasons: [] });
    // Without an e-mail too, and by subdomain.
    expect(await (await gate({ storeId: store.subdomain }, clientIp(), 'DE')).json()).toEqual({
      allowed: true,
      reasons: [],
    });
  });

  it('refuses a blacklisted e-mail in any case, and checkout refuses it too', async () => {
    const { seller, store } = await sellerWithStore();
    const email = uniqueEmail('banned');
    await addEntry(seller, store.id, { kind: 'email', value: email });
    const response = await gate({ storeId: store.id, email: email.toUpperCase() }, clientIp(), 'DE');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ allowed: false, reasons: ['email'] });
    // Another store does not share the list.
    const { store: otherStore } = await sellerWithStore();
    expect(await (await gate({ storeId: otherStore.id, email }, clientIp(), 'DE')).json()).toEqual({
      allowed: true,
      reasons: [],
    });

    const productId = await createProduct(seller, store.id, 5);
    const order = await call('/api/orders/create', {
      body: { storeId: store.id, cart: [{ productId, quantity: 1 }], email },
      headers: { 'cf-ipcountry': 'DE' },
    });
    expect(order.status).toBe(403);
    expect(await order.json()).toEqual({ error: 'This store does not accept orders from you.', code: 'blacklisted' });
  });

  it('refuses a blacklisted IP address (the client address, behind the trusted proxy)', async () => {
    const { seller, store } = await sellerWithStore();
    const ip = clientIp();
    await addEntry(seller, store.id, { kind: 'ip', value: ip });
    expect(await (await gate({ storeId: store.id }, ip, 'DE')).json()).toEqual({ allowed: false, reasons: ['ip'] });
    expect(await (await gate({ storeId: store.id }, clientIp(), 'DE')).json()).toEqual({ allowed: true, reasons: [] });
  });

  it('refuses a blacklisted country', async () => {
    const { seller, store } = await sellerWithStore();
    await addEntry(seller, store.id, { kind: 'country', value: 'br' });
    expect(await (await gate({ storeId: store.id }, clientIp(), 'BR')).json()).toEqual({
      allowed: false,
      reasons: ['country'],
    });
    expect(await (await gate({ storeId: store.id }, clientIp(), 'PT')).json()).toEqual({ allowed: true, reasons: [] });
  });

  it('names every kind that matches', async () => {
    const { seller, store } = await sellerWithStore();
    const ip = clientIp();
    const email = uniqueEmail('all');
    await addEntry(seller, store.id, { kind: 'country', value: 'FR' });
    await addEntry(seller, store.id, { kind: 'ip', value: ip });
    await addEntry(seller, store.id, { kind: 'email', value: email });
    expect(await (await gate({ storeId: store.id, email }, ip, 'FR')).json()).toEqual({
      allowed: false,
      reasons: ['email', 'ip', 'country'],
    });
  });

  it('answers 404 for an unknown store and 400 for a malformed e-mail', async () => {
    const missing = await gate({ storeId: 'no-such-store-here' }, clientIp(), 'DE');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual(STORE_NOT_FOUND);
    const { store } = await sellerWithStore();
    const bad = await gate({ storeId: store.id, email: 'nope' }, clientIp(), 'DE');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'validation_failed', issues: [{ path: 'email' }] });
  });

  it('allows 30 checks a minute per client, then 429 with Retry-After', async () => {
    const { store } = await sellerWithStore();
    const ip = clientIp();
    for (let i = 1; i <= 30; i++) {
      const response = await gate({ storeId: store.id }, ip, 'DE');
      expect(response.status, `request ${i}`).toBe(200);
    }
    await expectRateLimited(await gate({ storeId: store.id }, ip, 'DE'));
    expect((await gate({ storeId: store.id }, clientIp(), 'DE')).status).toBe(200);
  });
});

describe('coupons in the database', () => {
  it('keeps fixed discounts and minimums in minor units, percent as given', async () => {
    const { seller, store } = await sellerWithStore();
    const fixed = await createCoupon(seller, store.id, {
      code: uniqueCode(),
      discountType: 'fixed',
      discountValue: 5,
      minAmount: 12.34,
      maxUses: 2,
    });
    const percent = await createCoupon(seller, store.id, {
      code: uniqueCode(),
      discountType: 'percent',
      discountValue: 15,
    });
    const client = new pg.Client({ connectionString: server.db.url });
    await client.connect();
    try {
      const { rows } = await client.query(
        'select id, discount_value, min_amount_minor, uses, max_uses from coupon where store_id = $1 order by created_at, id',
        [store.id],
      );
      expect(rows).toEqual([
        { id: fixed.id, discount_value: '500', min_amount_minor: '1234', uses: 0, max_uses: 2 },
        { id: percent.id, discount_value: '15', min_amount_minor: null, uses: 0, max_uses: null },
      ]);
    } finally {
      await client.end();
    }
  });
});
