/**
 * Black-box: a name is one line. A store's, a product's (and its custom fields'), a webhook's and
 * an API key's name with a line break, a tab or another control character in it is refused with
 * 400 `validation_failed` naming the field, on create and on update; the same name without it is
 * taken, and whitespace around a name is trimmed as before.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStoreFor, dashboard, registerSeller, type Seller } from './support/seller.js';
import { startServer } from './support/server.js';

let server: Awaited<ReturnType<typeof startServer>>;
let seller: Seller;
let store: { id: string; subdomain: string };

beforeAll(async () => {
  server = await startServer();
  seller = await registerSeller(server.url);
  store = await createStoreFor(seller);
});
afterAll(async () => {
  await server?.stop();
});

/** Line breaks, a tab, NUL's neighbours, DEL, a C1 control and the Unicode line separator. */
const BROKEN = [
  'Shop\r\nSet-Cookie: x=1',
  'Shop\nTwo',
  'Shop\rTwo',
  'Shop\tTwo',
  'Shop\u0007',
  'Shop\u007F',
  'Shop\u0085',
  'Shop\u2028Two',
];

async function expectRefused(response: Response, field: string): Promise<void> {
  expect(response.status).toBe(400);
  const body = await response.json();
  expect(body.code).toBe('validation_failed');
  expect(body.issues.map((issue: { path: string }) => issue.path)).toContain(field);
}

describe('single-line names', () => {
  it('refuses a store name with a control character, on create and on update', async () => {
    for (const name of BROKEN) {
      const created = await dashboard(seller, 'POST', '/api/dashboard/stores', {
        name,
        subdomain: `one-line-${Date.now().toString(36)}`,
      });
      await expectRefused(created, 'name');
      await expectRefused(await dashboard(seller, 'PATCH', `/api/dashboard/stores/${store.id}`, { name }), 'name');
    }
    const renamed = await dashboard(seller, 'PATCH', `/api/dashboard/stores/${store.id}`, { name: '  Shop Two  ' });
    expect(renamed.status).toBe(200);
    expect((await renamed.json()).name).toBe('Shop Two');
  });

  it('refuses a product name and a custom field name with a control character', async () => {
    const path = `/api/dashboard/stores/${store.id}/products`;
    const product = { name: 'Course', price: 5, deliveryMethods: ['manualDelivery'] };
    for (const name of BROKEN) {
      await expectRefused(await dashboard(seller, 'POST', path, { ...product, name }), 'name');
      await expectRefused(
        await dashboard(seller, 'POST', path, { ...product, customFields: [{ name, type: 'text' }] }),
        'customFields.0.name',
      );
    }
    const created = await dashboard(seller, 'POST', path, product);
    expect(created.status).toBe(201);
    const { id } = await created.json();
    await expectRefused(await dashboard(seller, 'PATCH', `${path}/${id}`, { name: 'Course\nTwo' }), 'name');
  });

  it('refuses a webhook name and an API key name with a control character', async () => {
    const hooks = `/api/dashboard/stores/${store.id}/webhooks`;
    const hook = { name: 'Orders', url: 'http://127.0.0.1:9/hook', events: ['order.paid'] };
    await expectRefused(await dashboard(seller, 'POST', hooks, { ...hook, name: 'Orders\r\nTwo' }), 'name');
    const created = await dashboard(seller, 'POST', hooks, hook);
    expect(created.status).toBe(201);
    const { id } = await created.json();
    await expectRefused(await dashboard(seller, 'PATCH', `${hooks}/${id}`, { name: 'Orders\tTwo' }), 'name');

    const key = { name: 'CI\nkey', scopes: ['order:read'], storeIds: [store.id] };
    await expectRefused(await dashboard(seller, 'POST', '/api/dashboard/api-keys', key), 'name');
  });
});
