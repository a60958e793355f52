/**
 * Black-box: the License API as the merchant's software meets it (docs/architecture.md, The faces). Keys are bought
 * through checkout and paid through the test gateway; the software activates, validates and
 * deactivates over HTTP; the seller reads and disables through the merchant API. Expiry needs
 * the server's clock: that part runs on an in-process server (real HTTP) with a ManualClock.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../apps/server/src/lib/clock.js';
import { createProduct, importKeys } from './support/catalog.js';
import { startInProcess } from './support/in-process.js';
import { buy, TEST_GATEWAY_SECRET } from './support/payments.js';
import { createKeyFor, createStoreFor, dashboard, registerSeller, type Seller } from './support/seller.js';
import { startServer } from './support/server.js';

let server: Awaited<ReturnType<typeof startServer>>;
let seller: Seller;
let store: { id: string };
let merchantKey: string;
/** Every key string this file bought: none may appear in a License API answer or a log line. */
const boughtKeys: string[] = [];

beforeAll(async () => {
  server = await startServer({ TEST_GATEWAY_SECRET });
  seller = await registerSeller(server.url);
  store = await createStoreFor(seller);
  merchantKey = (
    await createKeyFor(seller, { scopes: ['license:read', 'license:write', 'order:read'], storeIds: [store.id] })
  ).key;
}, 120_000);
afterAll(async () => {
  await server?.stop();
});

/** A client address of its own (the server trusts 127.0.0.1 as a proxy), so each test has its own rate-limit budget. */
const address = () => `198.51.100.${1 + (randomBytes(1)[0]! % 250)}`;

function licenses(base: string, action: 'activate' | 'validate' | 'deactivate', body: unknown, ip: string) {
  return fetch(`${base}/api/v1/licenses/${action}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': ip, origin: 'https://app.example.test' },
    body: JSON.stringify(body),
  });
}

async function json(response: Response, status: number) {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  for (const key of boughtKeys) expect(text).not.toContain(key);
  return JSON.parse(text);
}

/** A key product with `settings`, and a key bought through checkout (by `email`, or none) and the test gateway. */
async function buyKey(
  base: string,
  owner: Seller,
  storeId: string,
  settings: Record<string, unknown> = {},
  email: string | null = 'buyer@example.test',
) {
  const product = await createProduct(owner, storeId, {
    name: 'Desktop app',
    price: 12,
    deliveryMethods: ['licenseKeys'],
    ...settings,
  });
  const key = `APP-${randomBytes(10).toString('hex').toUpperCase()}`;
  boughtKeys.push(key);
  await importKeys(owner, storeId, product.id, [key]);
  const { id: orderId, token } = await buy(base, { storeId, productId: product.id, email });
  const delivered = await (await fetch(`${base}/api/orders/${orderId}/keys?token=${token}`)).json();
  expect(delivered.keys.map((k: { key: string }) => k.key)).toEqual([key]);
  return { productId: product.id, key, orderId };
}

describe('the License API', () => {
  it('activates two names under a limit of 2, refuses a third, frees a slot on deactivation, validates with and without an instance', async () => {
    const ip = address();
    const { productId, key } = await buyKey(server.url, seller, store.id, { licenseActivationLimit: 2 });
    const first = await json(
      await licenses(server.url, 'activate', { productId, key, instanceName: 'laptop' }, ip),
      200,
    );
    expect(first).toMatchObject({
      activated: true,
      license: { productId, status: 'active', activationLimit: 2, activationUsage: 1, expiresAt: null },
      instance: { name: 'laptop' },
    });
    expect(Object.keys(first.license).sort()).toEqual([
      'activationLimit',
      'activationUsage',
      'createdAt',
      'expiresAt',
      'id',
      'livemode',
      'productId',
      'status',
      'subscriptionId',
    ]);
    const again = await json(
      await licenses(server.url, 'activate', { productId, key, instanceName: 'laptop' }, ip),
      200,
    );
    expect(again.instance.id).toBe(first.instance.id);
    expect(again.license.activationUsage).toBe(1);
    await json(await licenses(server.url, 'activate', { productId, key, instanceName: 'desktop' }, ip), 200);
    const refused = await json(
      await licenses(server.url, 'activate', { productId, key, instanceName: 'tablet' }, ip),
      409,
    );
    expect(refused.code).toBe('activation_limit_reached');

    const off = await json(
      await licenses(server.url, 'deactivate', { productId, key, instanceId: first.instance.id }, ip),
      200,
    );
    expect(off).toMatchObject({ deactivated: true, license: { activationUsage: 1 } });
    const tablet = await json(
      await licenses(server.url, 'activate', { productId, key, instanceName: 'tablet' }, ip),
      200,
    );
    expect(tablet.license.activationUsage).toBe(2);

    expect(await json(await licenses(server.url, 'validate', { productId, key }, ip), 200)).toMatchObject({
      valid: true,
      reason: null,
      instance: null,
    });
    expect(
      await json(await licenses(server.url, 'validate', { productId, key, instanceId: tablet.instance.id }, ip), 200),
    ).toMatchObject({
      valid: true,
      reason: null,
      instance: { id: tablet.instance.id, name: 'tablet' },
    });
    expect(
      await json(await licenses(server.url, 'validate', { productId, key, instanceId: first.instance.id }, ip), 200),
    ).toMatchObject({ valid: false, reason: 'instance_not_found' });
    expect(
      (await json(await licenses(server.url, 'deactivate', { productId, key, instanceId: first.instance.id }, ip), 404))
        .code,
    ).toBe('not_found');
  });

  it('answers CORS for any origin, without credentials', async () => {
    const response = await fetch(`${server.url}/api/v1/licenses/validate`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example.test',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('shows the seller a disabled license, and a refund disables it for good', async () => {
    const ip = address();
    const { productId, key, orderId } = await buyKey(server.url, seller, store.id);
    const { license, instance } = await json(
      await licenses(server.url, 'activate', { productId, key, instanceName: 'pc' }, ip),
      200,
    );
    const merchant = (method: string, path: string) =>
      fetch(`${server.url}/api/merchant/v1/stores/${store.id}/licenses${path}`, {
        method,
        headers: { authorization: `Bearer ${merchantKey}` },
      });
    const read = await json(await merchant('GET', `/${license.id}`), 200);
    expect(read).toMatchObject({
      id: license.id,
      status: 'active',
      customerEmail: 'buyer@example.test',
      instances: [instance],
    });
    expect(read.orderId).toMatch(/^ORD-\d+$/);
    expect(read.masked.endsWith(key.slice(-4))).toBe(true);

    expect((await json(await merchant('POST', `/${license.id}/disable`), 200)).status).toBe('disabled');
    expect(
      await json(await licenses(server.url, 'validate', { productId, key, instanceId: instance.id }, ip), 200),
    ).toMatchObject({ valid: false, reason: 'disabled', license: { status: 'disabled' } });
    expect((await json(await merchant('POST', `/${license.id}/enable`), 200)).status).toBe('active');
    expect((await json(await licenses(server.url, 'validate', { productId, key }, ip), 200)).valid).toBe(true);

    expect((await dashboard(seller, 'POST', `/api/dashboard/stores/${store.id}/orders/${orderId}/refund`)).status).toBe(
      200,
    );
    expect(await json(await licenses(server.url, 'validate', { productId, key }, ip), 200)).toMatchObject({
      valid: false,
      reason: 'disabled',
    });
    expect((await json(await merchant('POST', `/${license.id}/enable`), 409)).code).toBe('conflict');
    expect((await merchant('DELETE', `/${license.id}/instances/${instance.id}`)).status).toBe(204);
    expect(await json(await merchant('GET', `/${license.id}`), 200)).toMatchObject({
      status: 'disabled',
      activationUsage: 0,
      instances: [],
    });
  });

  it("shows a license's customerEmail as null when the order had no e-mail (the order itself keeps the interface's '')", async () => {
    const { productId, key, orderId } = await buyKey(server.url, seller, store.id, {}, null);
    const ip = address();
    const { license } = await json(await licenses(server.url, 'validate', { productId, key }, ip), 200);
    const read = await json(
      await fetch(`${server.url}/api/merchant/v1/stores/${store.id}/licenses/${license.id}`, {
        headers: { authorization: `Bearer ${merchantKey}` },
      }),
      200,
    );
    expect(read.customerEmail).toBeNull();
    const order = await json(
      await fetch(`${server.url}/api/merchant/v1/stores/${store.id}/orders/${orderId}`, {
        headers: { authorization: `Bearer ${merchantKey}` },
      }),
      200,
    );
    expect(order).toMatchObject({ customerEmail: '', paymentMethod: 'test' });
  });

  it('leaves exactly 5 instances when 50 distinct names activate at once against a limit of 5', async () => {
    const { productId, key } = await buyKey(server.url, seller, store.id, { licenseActivationLimit: 5 });
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        licenses(server.url, 'activate', { productId, key, instanceName: `seat-${i}` }, address()),
      ),
    );
    const statuses = answers.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(5);
    expect(statuses.filter((status) => status === 409)).toHaveLength(45);
    const validated = await json(await licenses(server.url, 'validate', { productId, key }, address()), 200);
    expect(validated.license.activationUsage).toBe(5);
  });

  it('answers an unknown product and a wrong key with the same 404, in the same time', async () => {
    const { productId, key } = await buyKey(server.url, seller, store.id);
    const ip = address();
    const unknownProduct = { productId: `p${randomBytes(12).toString('hex')}`, key };
    const wrongKey = { productId, key: `APP-${randomBytes(10).toString('hex').toUpperCase()}` };
    const a = await json(await licenses(server.url, 'validate', unknownProduct, ip), 404);
    const b = await json(await licenses(server.url, 'validate', wrongKey, ip), 404);
    expect(a).toEqual(b);
    // In pairs (one of each, in alternating order), after a warm-up: the median of the pairs'
    // differences against the median call, so load from the rest of the suite, which drifts over
    // the run, falls on both sides of each pair alike.
    const timed = async (body: object, i: number) => {
      const started = performance.now();
      const response = await licenses(server.url, 'validate', body, `203.0.113.${(i % 200) + 1}`);
      await response.arrayBuffer();
      expect(response.status).toBe(404);
      return performance.now() - started;
    };
    const differences: number[] = [];
    const all: number[] = [];
    for (let i = 0; i < 170; i++) {
      const productFirst = i % 2 === 0;
      const first = await timed(productFirst ? unknownProduct : wrongKey, 2 * i);
      const second = await timed(productFirst ? wrongKey : unknownProduct, 2 * i + 1);
      if (i < 20) continue;
      const [product, wrong] = productFirst ? [first, second] : [second, first];
      differences.push(product - wrong);
      all.push(product, wrong);
    }
    const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
    expect(Math.abs(median(differences)) / median(all)).toBeLessThan(0.2);
  });

  it('finds a sold key for its seller by the whole key, in a POST body, and answers it masked (issue 29)', async () => {
    const { key } = await buyKey(server.url, seller, store.id);
    const search = (owner: Seller, storeId: string, value: unknown) =>
      dashboard(owner, 'POST', `/api/dashboard/stores/${storeId}/licenses/search`, { key: value });
    const found = await json(await search(seller, store.id, ` ${key} `), 200);
    expect(found.licenses).toHaveLength(1);
    expect(found.licenses[0]).toMatchObject({ orderId: expect.stringMatching(/^ORD-\d+$/), status: 'active' });
    expect(found.licenses[0].masked).toBe(`••••••••${key.slice(-4)}`);
    const listed = await json(await dashboard(seller, 'GET', `/api/dashboard/stores/${store.id}/licenses`), 200);
    expect(listed.licenses.find((l: { id: string }) => l.id === found.licenses[0].id)).toEqual(found.licenses[0]);
    // A wrong key, and the same key searched in another store of the seller: nothing.
    expect((await json(await search(seller, store.id, `${key}0`), 200)).licenses).toEqual([]);
    const otherStore = await createStoreFor(seller, 'Other shop');
    expect((await json(await search(seller, otherStore.id, key), 200)).licenses).toEqual([]);
    // Another seller cannot search this store; an empty key is a 400 that does not echo anything.
    const stranger = await registerSeller(server.url);
    expect([403, 404]).toContain((await search(stranger, store.id, key)).status);
    expect((await json(await search(seller, store.id, ''), 400)).code).toBe('validation_failed');
  });

  it('leaves no key string in a log line', async () => {
    await server.logsSettled();
    const output = server.output();
    for (const key of boughtKeys) expect(output).not.toContain(key);
  });
});

describe('the License API on the server’s clock', () => {
  it('validates an expired license false with its reason, and refuses to activate it', async () => {
    const clock = new ManualClock(Date.now());
    const app = await startInProcess({ clock, env: { TEST_GATEWAY_SECRET } });
    try {
      const owner = await registerSeller(app.url);
      const shop = await createStoreFor(owner);
      const { productId, key } = await buyKey(app.url, owner, shop.id, { licenseValidityDays: 30 });
      const ip = address();
      const { instance, license } = await json(
        await licenses(app.url, 'activate', { productId, key, instanceName: 'pc' }, ip),
        200,
      );
      expect(Date.parse(license.expiresAt) - Date.parse(license.createdAt)).toBe(30 * 86_400_000);
      clock.advance(30 * 86_400_000);
      expect(
        await json(await licenses(app.url, 'validate', { productId, key, instanceId: instance.id }, ip), 200),
      ).toMatchObject({ valid: false, reason: 'expired', license: { status: 'expired' } });
      const refused = await json(
        await licenses(app.url, 'activate', { productId, key, instanceName: 'other' }, ip),
        409,
      );
      expect(refused.code).toBe('license_inactive');
      expect(refused.error).toContain('expired');
    } finally {
      await app.close();
    }
  });
});
