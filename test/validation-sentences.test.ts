/**
 * Black-box: what a seller reads when the API refuses their input. Every issue of the error body
 * keeps its `path` and says its `message` as a sentence (@svc/schemas' error map), never zod's
 * own text ("Too small: expected string to have >=1 characters"); a store's currency is an ISO
 * 4217 code; the sizes of uploads are said in MB.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct } from './support/catalog.js';
import { createStoreFor, dashboard, registerSeller, type Seller } from './support/seller.js';
import { startServer } from './support/server.js';

let server: Awaited<ReturnType<typeof startServer>>;
let seller: Seller;
let store: { id: string; subdomain: string };

beforeAll(async () => {
  server = await startServer();
  seller = await registerSeller(server.url);
  store = await createStoreFor(seller, 'Sentence Shop');
});
afterAll(async () => {
  await server?.stop();
});

async function refused(response: Response, status = 400) {
  expect(response.status, await response.clone().text()).toBe(status);
  return (await response.json()) as { code: string; error: string; issues?: Array<{ path: string; message: string }> };
}

describe('validation errors as sentences', () => {
  it('asks for a missing name and price by name', async () => {
    const body = await refused(
      await dashboard(seller, 'POST', `/api/dashboard/stores/${store.id}/products`, {
        name: '',
        deliveryMethods: ['manualDelivery'],
      }),
    );
    expect(body.code).toBe('validation_failed');
    expect(body.issues).toEqual([
      { path: 'name', message: 'Enter a name.' },
      { path: 'price', message: 'Enter a price.' },
    ]);
  });

  it("says a product's minimum above its maximum as a sentence", async () => {
    const product = await createProduct(seller, store.id, { name: 'Ranged', maxQuantity: 3 });
    const body = await refused(
      await dashboard(seller, 'PATCH', `/api/dashboard/stores/${store.id}/products/${product.id}`, {
        minQuantity: 5,
      }),
    );
    expect(body.issues).toEqual([{ path: 'minQuantity', message: "Minimum quantity can't be above the maximum." }]);
  });

  it('refuses a currency that is not ISO 4217, and takes one that is', async () => {
    const body = await refused(
      await dashboard(seller, 'PATCH', `/api/dashboard/stores/${store.id}`, { currency: 'XYZ' }),
    );
    expect(body.issues).toEqual([
      { path: 'currency', message: 'XYZ is not a currency: use an ISO 4217 code such as USD or EUR.' },
    ]);
    const euro = await dashboard(seller, 'PATCH', `/api/dashboard/stores/${store.id}`, { currency: 'EUR' });
    expect(euro.status, await euro.clone().text()).toBe(200);
    expect((await euro.json()).currency).toBe('EUR');
  });

  it('says the logo’s size limit in MB', async () => {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(1024 * 1024 + 1)], { type: 'image/png' }), 'big.png');
    const body = await refused(
      await fetch(`${server.url}/api/dashboard/stores/${store.id}/logo`, {
        method: 'POST',
        headers: { cookie: seller.cookie, 'x-csrf-token': seller.csrfToken },
        body: form,
      }),
      413,
    );
    expect(body.error).toBe('The logo must be 1 MB or smaller.');
  });
});
