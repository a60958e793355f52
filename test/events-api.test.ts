/**
 * Black-box: the merchant events API (docs/architecture.md, The faces). A store's events newest first with `type`,
 * `from`, `to` and keyset pages; one event byte for byte as its webhook delivery carried it; the
 * scope, store, ceiling and other-store answers; and the SDK walking 250 events.
 */
import { API_KEY_SCOPES } from '@svc/schemas';
import { createMerchantClient } from '@svc/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct } from './support/catalog.js';
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
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

let server: Awaited<ReturnType<typeof startServer>>;
let receiver: WebhookReceiver;
let owner: Seller;
let store: { id: string };
let other: { id: string };
const keys: Record<string, string> = {};
let otherEventId = '';

interface EventView {
  id: string;
  event: string;
  createdAt: string;
  storeId: string;
  data: Record<string, unknown>;
}

async function listAll(
  key: string,
  query: string,
): Promise<{ events: EventView[]; hasMore: boolean; nextCursor: string | null }> {
  const response = await merchantGet(server.url, key, `/stores/${store.id}/events${query}`);
  expect(response.status, await response.clone().text()).toBe(200);
  return response.json();
}

beforeAll(async () => {
  server = await startServer({ WEBHOOK_POLL_MS: '100' });
  receiver = await startWebhookReceiver();
  owner = await registerSeller(server.url);
  store = await createStoreFor(owner);
  other = await createStoreFor(owner);
  keys.all = (await createKeyFor(owner, { scopes: [...API_KEY_SCOPES], storeIds: [store.id, other.id] })).key;
  keys.noScope = (
    await createKeyFor(owner, { scopes: API_KEY_SCOPES.filter((s) => s !== 'event:read'), storeIds: [store.id] })
  ).key;
  keys.otherOnly = (await createKeyFor(owner, { scopes: ['event:read'], storeIds: [other.id] })).key;
  const staff = await registerSeller(server.url);
  await addStaff(owner, store.id, staff, ['viewOrders', 'editOrders', 'manageProducts']);
  keys.ceiling = (await createKeyFor(staff, { scopes: ['event:read'], storeIds: [store.id] })).key;
  await createProduct(owner, other.id, { name: 'Elsewhere', price: 1, deliveryMethods: ['manualDelivery'] });
  const otherEvents = await merchantGet(server.url, keys.all, `/stores/${other.id}/events`);
  const otherBody = await otherEvents.text();
  expect(otherEvents.status, otherBody).toBe(200);
  otherEventId = JSON.parse(otherBody).events[0].id;
}, 60_000);
afterAll(async () => {
  await receiver?.close();
  await server?.stop();
});

describe('GET /events/{eventId}', () => {
  it('answers byte for byte the body the webhook delivery carried', async () => {
    const hook = await dashboard(owner, 'POST', `/api/dashboard/stores/${store.id}/webhooks`, {
      name: 'events',
      url: `${receiver.url}/events`,
      events: ['product.created'],
    });
    expect(hook.status).toBe(201);
    await createProduct(owner, store.id, {
      name: 'Ünïcödé ✓ "quoted"',
      price: 12.5,
      deliveryMethods: ['manualDelivery'],
    });
    const [delivery] = await receiver.waitFor(1, { timeoutMs: 20_000, where: (hit) => hit.path === '/events' });
    const response = await merchantGet(server.url, keys.all, `/stores/${store.id}/events/${delivery!.eventId}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.text()).toBe(delivery!.rawBody);
  });

  it('is 404 for another store’s event and for an unknown one, 400 for something that is not an event id', async () => {
    const foreign = await merchantGet(server.url, keys.all, `/stores/${store.id}/events/${otherEventId}`);
    expect(foreign.status).toBe(404);
    expect((await foreign.json()).code).toBe('not_found');
    expect((await merchantGet(server.url, keys.all, `/stores/${store.id}/events/evt_unknown0000000000`)).status).toBe(
      404,
    );
    expect((await merchantGet(server.url, keys.all, `/stores/${store.id}/events/not-an-event`)).status).toBe(400);
  });
});

describe('GET /events', () => {
  it('lists newest first, filters by type and time, and pages with a cursor', async () => {
    await createProduct(owner, store.id, { name: 'Second', price: 2, deliveryMethods: ['manualDelivery'] });
    const product = await createProduct(owner, store.id, {
      name: 'Third',
      price: 3,
      deliveryMethods: ['manualDelivery'],
    });
    expect(
      (
        await dashboard(owner, 'PATCH', `/api/dashboard/stores/${store.id}/products/${product.id}`, {
          name: 'Third, renamed',
        })
      ).status,
    ).toBe(200);

    const { events } = await listAll(keys.all!, '');
    expect(events.length).toBeGreaterThanOrEqual(4);
    expect(events[0]).toMatchObject({
      event: 'product.updated',
      storeId: store.id,
      data: { product: { id: product.id, name: 'Third, renamed' } },
    });
    const times = events.map((e) => Date.parse(e.createdAt));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(events.every((e) => e.storeId === store.id)).toBe(true);

    const created = await listAll(keys.all!, '?type=product.created');
    expect(created.events.length).toBe(events.filter((e) => e.event === 'product.created').length);
    expect(created.events.every((e) => e.event === 'product.created')).toBe(true);

    const at = events[1]!.createdAt;
    const upTo = await listAll(keys.all!, `?to=${encodeURIComponent(at)}`);
    expect(upTo.events.every((e) => Date.parse(e.createdAt) <= Date.parse(at))).toBe(true);
    expect(upTo.events.map((e) => e.id)).toContain(events[1]!.id);
    const from = await listAll(keys.all!, `?from=${encodeURIComponent(at)}`);
    expect(from.events.every((e) => Date.parse(e.createdAt) >= Date.parse(at))).toBe(true);

    const first = await listAll(keys.all!, '?limit=2');
    expect(first.events.map((e) => e.id)).toEqual(events.slice(0, 2).map((e) => e.id));
    expect(first.hasMore).toBe(true);
    const second = await listAll(keys.all!, `?limit=2&cursor=${encodeURIComponent(first.nextCursor!)}`);
    expect(second.events.map((e) => e.id)).toEqual(events.slice(2, 4).map((e) => e.id));

    const backwards = await merchantGet(
      server.url,
      keys.all,
      `/stores/${store.id}/events?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z`,
    );
    expect(backwards.status).toBe(400);
  });

  it("refuses another store's events cursor, an orders cursor, and a cursor made with another filter", async () => {
    for (const [storeId, name] of [
      [other.id, 'Elsewhere too'],
      [store.id, 'Paged one'],
      [store.id, 'Paged two'],
    ] as const)
      await createProduct(owner, storeId, { name, price: 1, deliveryMethods: ['manualDelivery'] });
    await insertOrders(server.db.url, store.id, [{}, {}]);
    const cursorOf = async (path: string) => {
      const response = await merchantGet(server.url, keys.all, path);
      const body = await response.json();
      expect(response.status, JSON.stringify(body)).toBe(200);
      expect(body.nextCursor).toEqual(expect.any(String));
      return encodeURIComponent(body.nextCursor);
    };
    const otherEvents = await cursorOf(`/stores/${other.id}/events?limit=1`);
    const orders = await cursorOf(`/stores/${store.id}/orders?limit=1`);
    const created = await cursorOf(`/stores/${store.id}/events?limit=1&type=product.created`);
    expect(await listAll(keys.all!, `?limit=1&type=product.created&cursor=${created}`)).toMatchObject({
      events: [expect.objectContaining({ event: 'product.created' })],
    });

    for (const query of [
      `?cursor=${otherEvents}`,
      `?cursor=${orders}`,
      `?cursor=${created}`,
      `?type=product.updated&cursor=${created}`,
    ]) {
      const response = await merchantGet(server.url, keys.all, `/stores/${store.id}/events${query}`);
      expect(response.status, query).toBe(400);
      const body = await response.json();
      expect(body.code).toBe('validation_failed');
      expect(body.issues.map((issue: { path: string }) => issue.path)).toEqual(['cursor']);
    }
  });

  it('refuses a key without event:read, for another store, past its ceiling (manageSettings), and no key', async () => {
    for (const [key, status, code] of [
      [keys.noScope, 403, 'scope_missing'],
      [keys.otherOnly, 403, 'store_forbidden'],
      [keys.ceiling, 403, 'permission_missing'],
      [undefined, 401, 'unauthorized'],
    ] as const) {
      for (const path of [`/stores/${store.id}/events`, `/stores/${store.id}/events/${otherEventId}`]) {
        const response = await merchantGet(server.url, key, path);
        expect(response.status, `${code} ${path}`).toBe(status);
        expect((await response.json()).code).toBe(code);
      }
    }
  });
});

describe('the SDK', () => {
  it('walks 250 events of a store, each once, newest first, and reads one', async () => {
    const busy = await createStoreFor(owner);
    const key = (await createKeyFor(owner, { scopes: ['event:read'], storeIds: [busy.id] })).key;
    for (let i = 0; i < 250; i++)
      await createProduct(owner, busy.id, { name: `Item ${i}`, price: 1, deliveryMethods: ['manualDelivery'] });
    const client = createMerchantClient({ baseUrl: server.url, apiKey: key });
    const seen: string[] = [];
    const names: string[] = [];
    // Typed by the filter: each event is a product.created body, its data.product a Product (no cast).
    for await (const event of client.events.iterate({ storeId: busy.id, type: 'product.created' })) {
      seen.push(event.id);
      names.push(event.data.product.name);
    }
    expect(seen).toHaveLength(250);
    expect(new Set(seen).size).toBe(250);
    expect(names[0]).toBe('Item 249');
    expect(names[249]).toBe('Item 0');
    const one = await client.events.get({ storeId: busy.id, eventId: seen[0]! });
    expect(one).toMatchObject({ id: seen[0], event: 'product.created', storeId: busy.id });
    if (one.event !== 'product.created') throw new Error(`got ${one.event}`);
    expect(one.data.product.name).toBe('Item 249');
  }, 120_000);
});
