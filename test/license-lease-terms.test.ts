/**
 * Black-box, on a started server: the terms of an offline lease (issue 41) that the lease test's
 * subscription does not reach: a license that never expires leases the store's default 7 days; a
 * one-time license's validity caps `exp` at its `expiresAt`; rotating the signing key needs
 * `license:write`; the private key is never in the server's log.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct, importKeys } from './support/catalog.js';
import { buy, TEST_GATEWAY_SECRET } from './support/payments.js';
import { clientIp, createKeyFor, createStoreFor, dashboard, registerSeller, type Seller } from './support/seller.js';
import { startServer } from './support/server.js';

let server: Awaited<ReturnType<typeof startServer>>;
let seller: Seller;
let store: { id: string };

const claimsOf = (lease: string) => JSON.parse(Buffer.from(lease.split('.')[1]!, 'base64url').toString());

/** A key of `product` bought and paid on the test gateway. */
async function soldKey(product: { id: string }): Promise<string> {
  const key = `TERM-${randomBytes(8).toString('hex').toUpperCase()}`;
  await importKeys(seller, store.id, product.id, [key]);
  await buy(server.url, { storeId: store.id, productId: product.id });
  return key;
}

async function activate(productId: string, key: string) {
  const response = await fetch(`${server.url}/api/v1/licenses/activate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp() },
    body: JSON.stringify({ productId, key, instanceName: 'workstation' }),
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return response.json();
}

beforeAll(async () => {
  server = await startServer({ TEST_GATEWAY_SECRET });
  seller = await registerSeller(server.url);
  store = await createStoreFor(seller);
  const response = await dashboard(seller, 'PATCH', `/api/dashboard/stores/${store.id}`, {
    settings: { paymentMethods: ['test'] },
  });
  expect(response.status, await response.clone().text()).toBe(200);
}, 120_000);
afterAll(() => server?.stop());

describe('the terms of an offline lease', () => {
  it("leases a license that never expires for the store's default 7 days", async () => {
    const product = await createProduct(seller, store.id, {
      name: 'Forever',
      price: 5,
      deliveryMethods: ['licenseKeys'],
    });
    const { lease, license } = await activate(product.id, await soldKey(product));
    expect(license.expiresAt).toBeNull();
    const claims = claimsOf(lease);
    expect(claims.exp - claims.iat).toBe(7 * 86_400);
  });

  it("caps a one-time license's lease at its expiresAt", async () => {
    const product = await createProduct(seller, store.id, {
      name: 'Three days',
      price: 5,
      deliveryMethods: ['licenseKeys'],
      licenseValidityDays: 3,
    });
    const answer = await activate(product.id, await soldKey(product));
    expect(answer.license.expiresAt).not.toBeNull();
    expect(claimsOf(answer.lease).exp).toBe(Math.floor(Date.parse(answer.license.expiresAt) / 1000));
  });

  it('refuses a rotation to a key without license:write (403 scope_missing), and the current key stays', async () => {
    const { key } = await createKeyFor(seller, { scopes: ['license:read'], storeIds: [store.id] });
    const headers = { authorization: `Bearer ${key}`, 'x-forwarded-for': clientIp() };
    const keysPath = `${server.url}/api/merchant/v1/stores/${store.id}/license-signing-keys`;
    const before = await (await fetch(keysPath, { headers })).json();
    const response = await fetch(`${keysPath}/rotate`, { method: 'POST', headers });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ code: 'scope_missing' });
    expect(await (await fetch(keysPath, { headers })).json()).toEqual(before);
  });

  it("never writes the private key to the log (PKCS#8 Ed25519's prefix, in base64 or hex)", async () => {
    await server.logsSettled();
    for (const prefix of ['MC4CAQAwBQYDK2VwBCIEI', '302e020100300506032b657004220420'])
      expect(server.output()).not.toContain(prefix);
  });
});
