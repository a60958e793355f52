/**
 * Black-box: who may read a store's orders through the merchant API. One table of
 * credentials against both orders routes; every row is a request a real client can send.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertOrders } from './support/orders.js';
import {
  addStaff,
  createKeyFor,
  createStoreFor,
  dashboard,
  merchantGet,
  registerSeller,
  type Seller,
} from './support/seller.js';
import { startServer } from './support/server.js';

let server: Awaited<ReturnType<typeof startServer>>;
let owner: Seller;
let store: { id: string };
let otherStore: { id: string };
let orderId: string;
let otherOrderId: string;
const keys: Record<string, string> = {};

beforeAll(async () => {
  server = await startServer();
  owner = await registerSeller(server.url);
  store = await createStoreFor(owner);
  otherStore = await createStoreFor(owner);
  orderId = (await insertOrders(server.db.url, store.id, [{}]))[0]!.id;
  otherOrderId = (await insertOrders(server.db.url, otherStore.id, [{}]))[0]!.id;

  keys.valid = (await createKeyFor(owner, { scopes: ['order:read'], storeIds: [store.id] })).key;
  keys.wrongScope = (await createKeyFor(owner, { scopes: ['webhook:read'], storeIds: [store.id] })).key;
  keys.otherStoreOnly = (await createKeyFor(owner, { scopes: ['order:read'], storeIds: [otherStore.id] })).key;
  const revoked = await createKeyFor(owner, { scopes: ['order:read'], storeIds: [store.id] });
  keys.revoked = revoked.key;
  expect((await dashboard(owner, 'DELETE', `/api/dashboard/api-keys/${revoked.id}`)).status).toBe(204);
  keys.expired = (
    await createKeyFor(owner, {
      scopes: ['order:read'],
      storeIds: [store.id],
      expiresAt: new Date(Date.now() + 1500).toISOString(),
    })
  ).key;

  // A staff member whose viewOrders is taken away after the key was made.
  const staff = await registerSeller(server.url);
  const memberId = await addStaff(owner, store.id, staff, ['viewOrders']);
  keys.ceiling = (await createKeyFor(staff, { scopes: ['order:read'], storeIds: [store.id] })).key;
  expect((await merchantGet(server.url, keys.ceiling, `/stores/${store.id}/orders`)).status).toBe(200);
  const lowered = await dashboard(owner, 'PATCH', `/api/dashboard/stores/${store.id}/members/${memberId}`, {
    permissions: ['editOrders'],
  });
  expect(lowered.status).toBe(200);

  // Let the expiring key expire.
  await new Promise((resolve) => setTimeout(resolve, 1600));
});

afterAll(() => server?.stop());

type Row = [name: string, key: () => string | undefined, status: number, code: string, storeId?: () => string];

const rows: Row[] = [
  ['no Authorization header', () => undefined, 401, 'unauthorized'],
  ['a malformed key', () => 'not-a-key', 401, 'unauthorized'],
  ['an unknown key', () => `sk_${'A'.repeat(40)}`, 401, 'unauthorized'],
  ['an expired key', () => keys.expired, 401, 'unauthorized'],
  ['a revoked key', () => keys.revoked, 401, 'unauthorized'],
  ['a key without order:read', () => keys.wrongScope, 403, 'scope_missing'],
  ['a key for another store', () => keys.otherStoreOnly, 403, 'store_forbidden'],
  ['a store that does not exist', () => keys.valid, 403, 'store_forbidden', () => 'doesnotexist0000000000000'],
  ['an owner of the key whose viewOrders was removed', () => keys.ceiling, 403, 'permission_missing'],
];

describe.each([
  ['GET /orders', (storeId: string) => `/stores/${storeId}/orders`],
  ['GET /orders/{orderId}', (storeId: string) => `/stores/${storeId}/orders/${orderId}`],
])('%s', (_route, path) => {
  it.each(rows)('%s -> %i', async (_name, key, status, code, storeId) => {
    const response = await merchantGet(server.url, key(), path(storeId?.() ?? store.id));
    expect(response.status).toBe(status);
    expect(await response.json()).toMatchObject({ code, error: expect.any(String) });
    // The transport's Bearer challenge (RFC 6750 §3): invalid_token once a key was sent and refused.
    if (status === 401)
      expect(response.headers.get('www-authenticate')).toBe(
        key() === undefined ? 'Bearer realm="svc"' : 'Bearer realm="svc", error="invalid_token"',
      );
    else expect(response.headers.get('www-authenticate')).toBeNull();
  });

  it('a valid key -> 200', async () => {
    const response = await merchantGet(server.url, keys.valid, path(store.id));
    expect(response.status).toBe(200);
  });
});

describe('objects of another store', () => {
  it('answers 404 for an order of another store, even when the key reaches both', async () => {
    const both = (await createKeyFor(owner, { scopes: ['order:read'], storeIds: [store.id, otherStore.id] })).key;
    const response = await merchantGet(server.url, both, `/stores/${store.id}/orders/${otherOrderId}`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: 'Order not found.', code: 'not_found' });
    expect((await merchantGet(server.url, both, `/stores/${otherStore.id}/orders/${otherOrderId}`)).status).toBe(200);
  });
});

describe('changes take effect on the next request', () => {
  it('a revoked key stops at once; a removed member loses access at once', async () => {
    const { key, id } = await createKeyFor(owner, { scopes: ['order:read'], storeIds: [store.id] });
    expect((await merchantGet(server.url, key, `/stores/${store.id}/orders`)).status).toBe(200);
    await dashboard(owner, 'DELETE', `/api/dashboard/api-keys/${id}`);
    expect((await merchantGet(server.url, key, `/stores/${store.id}/orders`)).status).toBe(401);

    const staff = await registerSeller(server.url);
    const memberId = await addStaff(owner, store.id, staff, ['viewOrders']);
    const staffKey = (await createKeyFor(staff, { scopes: ['order:read'], storeIds: [store.id] })).key;
    expect((await merchantGet(server.url, staffKey, `/stores/${store.id}/orders`)).status).toBe(200);
    expect((await dashboard(owner, 'DELETE', `/api/dashboard/stores/${store.id}/members/${memberId}`)).status).toBe(
      204,
    );
    const after = await merchantGet(server.url, staffKey, `/stores/${store.id}/orders`);
    expect(after.status).toBe(403);
    expect((await after.json()).code).toBe('store_forbidden');
  });

  it('shows lastUsedAt after use, and the key itself never again', async () => {
    const { key, id } = await createKeyFor(owner, { scopes: ['order:read'], storeIds: [store.id] });
    await merchantGet(server.url, key, `/stores/${store.id}/orders`);
    const list = await dashboard(owner, 'GET', '/api/dashboard/api-keys');
    const text = await list.text();
    expect(text).not.toContain(key);
    const entry = JSON.parse(text).apiKeys.find((k: { id: string }) => k.id === id);
    expect(entry.prefix).toBe(key.slice(0, 14));
    expect(entry.lastUsedAt).not.toBeNull();
  });

  it('refuses a key for a store its creator is not a member of', async () => {
    const stranger = await registerSeller(server.url);
    const response = await dashboard(stranger, 'POST', '/api/dashboard/api-keys', {
      name: 'x',
      scopes: ['order:read'],
      storeIds: [store.id],
    });
    expect(response.status).toBe(403);
    expect((await response.json()).code).toBe('store_forbidden');
  });
});

describe('per-key rate limit', () => {
  it('sends the rate-limit headers on merchant routes', async () => {
    const response = await merchantGet(server.url, keys.valid, `/stores/${store.id}/orders`);
    expect(response.headers.get('x-ratelimit-limit')).toBe('300');
    expect(response.headers.get('ratelimit-policy')).toBe('"merchant";q=300;w=60');
  });
});
