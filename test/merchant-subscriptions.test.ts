/**
 * Black-box: the seller's subscriptions over real HTTP against a started server (issue 39), through
 * the merchant API (Bearer key, subscription scopes), the dashboard (session and permissions) and
 * @svc/sdk. Checkout does not make subscriptions yet: each test writes its own through the
 * subscriptions module (test/support/subscriptions.ts), as checkout will.
 */
import { randomBytes } from 'node:crypto';
import { createMerchantClient, SvcConflictError, SvcInvalidRequestError, type Subscription } from '@svc/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addStaff,
  clientIp,
  createKeyFor,
  createStoreFor,
  dashboard,
  registerSeller,
  uniqueEmail,
  type Seller,
} from './support/seller.js';
import { startServer } from './support/server.js';
import { insertSubscriptions, type SubscriptionSeed } from './support/subscriptions.js';

let server: Awaited<ReturnType<typeof startServer>>;
let owner: Seller;

beforeAll(async () => {
  server = await startServer();
  owner = await registerSeller(server.url);
}, 120_000);
afterAll(async () => {
  await server?.stop();
});

const READ_WRITE = ['subscription:read', 'subscription:write'];

/** A store of its own with a key of `scopes` and subscriptions of `seeds`. */
async function storeWith(seeds: SubscriptionSeed[], scopes = READ_WRITE) {
  const store = await createStoreFor(owner);
  const { key } = await createKeyFor(owner, { scopes, storeIds: [store.id] });
  const ids = await insertSubscriptions(server.db.url, store.id, seeds);
  return { store, key, ids };
}

function call(key: string, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${server.url}/api/merchant/v1${path}`, {
    method,
    headers: {
      accept: 'application/json',
      authorization: `Bearer ${key}`,
      'x-forwarded-for': clientIp(),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function json(response: Response, status: number) {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  return JSON.parse(text);
}

describe('merchant API: subscriptions', () => {
  it('a key with subscription:read lists (newest first, filtered, paged) and reads one', async () => {
    const productId = randomBytes(16).toString('hex');
    const email = uniqueEmail('subscriber');
    const { store, key, ids } = await storeWith([
      { customerEmail: email },
      { productId },
      { productId, customerEmail: email },
    ]);
    const reader = (await createKeyFor(owner, { scopes: ['subscription:read'], storeIds: [store.id] })).key;
    const all = await json(await call(reader, 'GET', `/stores/${store.id}/subscriptions`), 200);
    expect(all.subscriptions.map((s: Subscription) => s.id)).toEqual([...ids].reverse());
    expect(all).toMatchObject({ hasMore: false, nextCursor: null });
    expect(all.subscriptions[0]).toMatchObject({
      storeId: store.id,
      livemode: true,
      status: 'active',
      amount: 9,
      currency: 'USD',
      cancelAtPeriodEnd: false,
    });

    const byProduct = await json(
      await call(key, 'GET', `/stores/${store.id}/subscriptions?productId=${productId}`),
      200,
    );
    expect(byProduct.subscriptions.map((s: Subscription) => s.id)).toEqual([ids[2], ids[1]]);
    const byEmail = await json(
      await call(
        key,
        'GET',
        `/stores/${store.id}/subscriptions?customerEmail=${encodeURIComponent(email.toUpperCase())}`,
      ),
      200,
    );
    expect(byEmail.subscriptions.map((s: Subscription) => s.id)).toEqual([ids[2], ids[0]]);
    const none = await json(await call(key, 'GET', `/stores/${store.id}/subscriptions?status=past_due`), 200);
    expect(none.subscriptions).toEqual([]);

    const first = await json(await call(key, 'GET', `/stores/${store.id}/subscriptions?limit=2`), 200);
    expect(first).toMatchObject({ hasMore: true, nextCursor: expect.any(String) });
    const second = await json(
      await call(
        key,
        'GET',
        `/stores/${store.id}/subscriptions?limit=2&cursor=${encodeURIComponent(first.nextCursor)}`,
      ),
      200,
    );
    expect([...first.subscriptions, ...second.subscriptions].map((s: Subscription) => s.id)).toEqual(
      [...ids].reverse(),
    );

    const one = await json(await call(reader, 'GET', `/stores/${store.id}/subscriptions/${ids[0]}`), 200);
    expect(one).toMatchObject({ id: ids[0], customerEmail: email, status: 'active' });
  });

  it('refuses a key without the scope (403 scope_missing), another store (403 store_forbidden) and its objects (404)', async () => {
    const mine = await storeWith([{}]);
    const other = await storeWith([{}]);
    const orders = (await createKeyFor(owner, { scopes: ['order:read', 'order:update'], storeIds: [mine.store.id] }))
      .key;
    const subscription = `/stores/${mine.store.id}/subscriptions/${mine.ids[0]}`;
    for (const [method, path, body] of [
      ['GET', `/stores/${mine.store.id}/subscriptions`, undefined],
      ['GET', subscription, undefined],
      ['POST', `${subscription}/cancel`, {}],
      ['POST', `${subscription}/pause`, {}],
    ] as const) {
      expect(await json(await call(orders, method, path, body), 403)).toMatchObject({ code: 'scope_missing' });
      expect(await json(await call(other.key, method, path, body), 403)).toMatchObject({ code: 'store_forbidden' });
    }
    // A read-only key may not write.
    const reader = (await createKeyFor(owner, { scopes: ['subscription:read'], storeIds: [mine.store.id] })).key;
    expect(await json(await call(reader, 'POST', `${subscription}/cancel`, {}), 403)).toMatchObject({
      code: 'scope_missing',
    });
    // Its own store, the other store's subscription: no such subscription.
    const foreign = `/stores/${mine.store.id}/subscriptions/${other.ids[0]}`;
    for (const [method, path] of [
      ['GET', foreign],
      ['POST', `${foreign}/cancel`],
      ['POST', `${foreign}/pause`],
    ] as const)
      expect(await json(await call(mine.key, method, path, method === 'GET' ? undefined : {}), 404)).toMatchObject({
        code: 'not_found',
      });
    expect(
      (await json(await call(other.key, 'GET', `/stores/${other.store.id}/subscriptions/${other.ids[0]}`), 200)).status,
    ).toBe('active');
  });

  it('cancels at the period end, then a second cancel is 409 invalid_transition; cancel now ends it', async () => {
    const { store, key, ids } = await storeWith([{}, {}]);
    const path = `/stores/${store.id}/subscriptions/${ids[0]}`;
    const set = await json(await call(key, 'POST', `${path}/cancel`, { atPeriodEnd: true }), 200);
    expect(set).toMatchObject({
      status: 'active',
      cancelAtPeriodEnd: true,
      cancellationReason: 'requested_by_merchant',
    });
    const again = await json(await call(key, 'POST', `${path}/cancel`, {}), 409);
    expect(again).toMatchObject({
      code: 'invalid_transition',
      error: 'This subscription is active and already set to cancel at the period end.',
    });

    const now = `/stores/${store.id}/subscriptions/${ids[1]}`;
    const ended = await json(
      await call(key, 'POST', `${now}/cancel`, { atPeriodEnd: false, reason: 'requested_by_customer' }),
      200,
    );
    expect(ended).toMatchObject({
      status: 'canceled',
      cancellationReason: 'requested_by_customer',
      endedAt: expect.any(String),
    });
    const over = await json(await call(key, 'POST', `${now}/cancel`, { atPeriodEnd: false }), 409);
    expect(over).toMatchObject({ code: 'invalid_transition', error: expect.stringContaining('canceled') });
    expect((await json(await call(key, 'GET', now), 200)).status).toBe('canceled');
    // A reason only the billing engine gives is bad input.
    expect(await json(await call(key, 'POST', `${path}/cancel`, { reason: 'payment_failed' }), 400)).toMatchObject({
      code: 'validation_failed',
    });
  });

  it('pauses from the period end; a resumesAt before the period end is 400 naming resumesAt', async () => {
    const { store, key, ids } = await storeWith([{}]);
    const path = `/stores/${store.id}/subscriptions/${ids[0]}`;
    const current = await json(await call(key, 'GET', path), 200);
    const early = new Date(Date.parse(current.currentPeriodEnd) - 86_400_000).toISOString();
    const refused = await json(await call(key, 'POST', `${path}/pause`, { resumesAt: early }), 400);
    expect(refused).toMatchObject({
      code: 'validation_failed',
      issues: [{ path: 'resumesAt', message: expect.stringContaining('after the current period ends') }],
    });
    expect((await json(await call(key, 'GET', path), 200)).resumesAt).toBeNull();

    const later = new Date(Date.parse(current.currentPeriodEnd) + 7 * 86_400_000).toISOString();
    const paused = await json(await call(key, 'POST', `${path}/pause`, { resumesAt: later }), 200);
    expect(paused).toMatchObject({ status: 'active', pauseAtPeriodEnd: true });
    expect(Date.parse(paused.resumesAt)).toBe(Date.parse(later));
    // Read again later, the subscription still says the pause is scheduled (issue 40).
    expect(await json(await call(key, 'GET', path), 200)).toMatchObject({ status: 'active', pauseAtPeriodEnd: true });
  });

  it('a test key does not see live subscriptions (404), nor a live key test ones', async () => {
    const { store, key, ids } = await storeWith([{}, { livemode: false }]);
    const testKey = (await createKeyFor(owner, { scopes: READ_WRITE, storeIds: [store.id], mode: 'test' })).key;
    const [live, test] = ids as [string, string];
    const listed = await json(await call(testKey, 'GET', `/stores/${store.id}/subscriptions`), 200);
    expect(listed.subscriptions.map((s: Subscription) => s.id)).toEqual([test]);
    expect(listed.subscriptions[0]).toMatchObject({ livemode: false, clockTime: expect.any(String) });
    expect(await json(await call(testKey, 'GET', `/stores/${store.id}/subscriptions/${live}`), 404)).toMatchObject({
      code: 'not_found',
    });
    expect(
      await json(await call(testKey, 'POST', `/stores/${store.id}/subscriptions/${live}/cancel`, {}), 404),
    ).toMatchObject({ code: 'not_found' });
    expect(await json(await call(key, 'GET', `/stores/${store.id}/subscriptions/${test}`), 404)).toMatchObject({
      code: 'not_found',
    });
    expect(
      (await json(await call(key, 'GET', `/stores/${store.id}/subscriptions/${live}`), 200)).cancelAtPeriodEnd,
    ).toBe(false);
  });
});

describe('dashboard: subscriptions', () => {
  it('a member with viewOrders reads; without editOrders cannot cancel or pause', async () => {
    const { store, ids } = await storeWith([{}]);
    const staff = await registerSeller(server.url);
    await addStaff(owner, store.id, staff, ['viewOrders']);
    const base = `/api/dashboard/stores/${store.id}/subscriptions`;
    const list = await json(await dashboard(staff, 'GET', base), 200);
    expect(list.subscriptions.map((s: Subscription) => s.id)).toEqual(ids);
    expect((await json(await dashboard(staff, 'GET', `${base}/${ids[0]}`), 200)).id).toBe(ids[0]);
    for (const action of ['cancel', 'pause'])
      expect(await json(await dashboard(staff, 'POST', `${base}/${ids[0]}/${action}`, {}), 403)).toMatchObject({
        code: 'permission_missing',
      });
    expect((await json(await dashboard(staff, 'GET', `${base}/${ids[0]}`), 200)).cancelAtPeriodEnd).toBe(false);
    // The owner may.
    expect((await json(await dashboard(owner, 'POST', `${base}/${ids[0]}/cancel`, {}), 200)).cancelAtPeriodEnd).toBe(
      true,
    );
  });
});

describe('@svc/sdk: merchant subscriptions', () => {
  it('lists, walks every page, reads, cancels at the period end and pauses; a refused move is SvcConflictError', async () => {
    const email = uniqueEmail('sdk-subscriber');
    const { store, key, ids } = await storeWith(
      Array.from({ length: 5 }, (_, i) => ({ customerEmail: i % 2 === 0 ? email : undefined })),
    );
    const svc = createMerchantClient({ baseUrl: server.url, apiKey: key });
    const page = await svc.subscriptions.list({ storeId: store.id, limit: 2 });
    expect(page.subscriptions.map((s) => s.id)).toEqual([ids[4], ids[3]]);
    expect(page.hasMore).toBe(true);
    const walked: string[] = [];
    for await (const subscription of svc.subscriptions.iterate({ storeId: store.id, limit: 2 }))
      walked.push(subscription.id);
    expect(walked).toEqual([...ids].reverse());
    const mine: Subscription[] = [];
    for await (const subscription of svc.subscriptions.iterate({ storeId: store.id, customerEmail: email }))
      mine.push(subscription);
    expect(mine.map((s) => s.id)).toEqual([ids[4], ids[2], ids[0]]);

    const ref = { storeId: store.id, subscriptionId: ids[0]! };
    expect((await svc.subscriptions.get(ref)).status).toBe('active');
    const canceled = await svc.subscriptions.cancel({ ...ref, atPeriodEnd: true });
    expect(canceled).toMatchObject({ cancelAtPeriodEnd: true, status: 'active' });
    const twice = await svc.subscriptions.cancel(ref).catch((e: unknown) => e);
    expect(twice).toBeInstanceOf(SvcConflictError);
    expect(twice).toMatchObject({ code: 'invalid_transition' });

    const other = { storeId: store.id, subscriptionId: ids[1]! };
    const { currentPeriodEnd } = await svc.subscriptions.get(other);
    const early = await svc.subscriptions
      .pause({ ...other, resumesAt: new Date(Date.parse(currentPeriodEnd) - 1000).toISOString() })
      .catch((e: unknown) => e);
    expect(early).toBeInstanceOf(SvcInvalidRequestError);
    const resumesAt = new Date(Date.parse(currentPeriodEnd) + 86_400_000).toISOString();
    const paused = await svc.subscriptions.pause({ ...other, resumesAt });
    expect(Date.parse(paused.resumesAt!)).toBe(Date.parse(resumesAt));
  });
});
