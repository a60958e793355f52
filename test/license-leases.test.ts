/**
 * Black-box, on a started server: offline license leases (issue 41). A buyer's license of a
 * recurring product is activated once online; its lease verifies with `jose` (a JOSE library no
 * one here wrote) against the store's JWKS route, and with the SDK's `verifyLicenseLease` after
 * the server has stopped. Altered leases, another store's JWKS, another product and a time past
 * `exp` are each refused with their reason; a rotation keeps old leases verifying while new ones
 * carry the new `kid`; a test subscription's lease never outlives its paid period.
 */
import { randomBytes } from 'node:crypto';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeaseInvalidError, verifyLicenseLease, type LeaseJwks } from '../packages/sdk/src/license-lease.js';
import { previewToken, subscribeOnTestPage } from './support/preview.js';
import { createKeyFor, createStoreFor, dashboard, registerSeller, type Seller } from './support/seller.js';
import { startServer } from './support/server.js';

let server: Awaited<ReturnType<typeof startServer>> | undefined;
let owner: Seller;
let store: { id: string };
let other: { id: string };
let key: string;
let preview: string;
let product: { id: string; plans: Array<{ id: string; interval: string }> };

const DAY = 86_400_000;
const ip = () => `198.51.100.${1 + (randomBytes(1)[0]! % 250)}`;
const url = () => server!.url;

async function json(response: Response, status: number) {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  return text ? JSON.parse(text) : undefined;
}

function merchant(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${url()}/api/merchant/v1/stores/${store.id}${path}`, {
    method,
    headers: {
      accept: 'application/json',
      authorization: `Bearer ${key}`,
      'x-forwarded-for': ip(),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${url()}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': ip(), ...headers },
    body: JSON.stringify(body),
  });

const license = (action: 'activate' | 'validate', body: Record<string, unknown>) =>
  post(`/api/v1/licenses/${action}`, { productId: product.id, ...body }).then((r) => json(r, 200));
const jwksOf = async (storeId: string): Promise<LeaseJwks> =>
  json(await fetch(`${url()}/api/v1/licenses/jwks/${storeId}`), 200);
const headerOf = (lease: string) => JSON.parse(Buffer.from(lease.split('.')[0]!, 'base64url').toString());
const claimsOf = (lease: string) => JSON.parse(Buffer.from(lease.split('.')[1]!, 'base64url').toString());

/** A buyer checks out the monthly plan and pays on the test page with `card`; answers the key and the subscription. */
async function subscribe(card = 'succeeds') {
  const email = `buyer-${randomBytes(4).toString('hex')}@example.test`;
  const monthly = product.plans.find((plan) => plan.interval === 'month')!;
  const { orderId, token } = await subscribeOnTestPage(
    url(),
    { storeId: store.id, productId: product.id, planId: monthly.id, email, preview, card },
    ip,
  );
  const delivered = await json(await fetch(`${url()}/api/orders/${orderId}/keys?token=${token}`), 200);
  const order = await json(await merchant('GET', `/orders/${orderId}`), 200);
  return { key: delivered.keys[0].key as string, subscriptionId: order.subscriptionId as string };
}

/** The reason `verifyLicenseLease` refuses with. */
async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(LeaseInvalidError);
  return (error as LeaseInvalidError).reason;
}

/** The lease with one character of `part` (0 header, 1 claims, 2 signature) changed. */
function flipped(lease: string, part: number): string {
  const parts = lease.split('.');
  const bytes = Buffer.from(parts[part]!, 'base64url');
  bytes[Math.floor(bytes.length / 2)]! ^= 0x01;
  parts[part] = bytes.toString('base64url');
  return parts.join('.');
}

beforeAll(async () => {
  server = await startServer({});
  owner = await registerSeller(server.url);
  store = await createStoreFor(owner, 'Lease Shop');
  other = await createStoreFor(owner, 'Other Shop');
  await json(
    await dashboard(owner, 'PATCH', `/api/dashboard/stores/${store.id}`, { settings: { paymentMethods: ['test'] } }),
    200,
  );
  key = (
    await createKeyFor(owner, {
      scopes: [
        'product:read',
        'product:write',
        'order:read',
        'subscription:read',
        'subscription:write',
        'license:read',
        'license:write',
      ],
      storeIds: [store.id],
      mode: 'test',
    })
  ).key;
  product = await json(
    await merchant('POST', '/products', {
      name: 'Offline Editor',
      price: 9,
      deliveryMethods: ['licenseKeys'],
      plans: [{ interval: 'month', intervalCount: 1, price: 9, trialDays: 0 }],
    }),
    201,
  );
  const keys = Array.from({ length: 3 }, () => `OFF-${randomBytes(8).toString('hex').toUpperCase()}`);
  await json(await merchant('POST', `/products/${product.id}/license-keys`, { keys }), 200);
  preview = await previewToken(owner, store.id);
}, 120_000);
afterAll(async () => {
  await server?.stop();
});

describe("a test subscription's lease", () => {
  it('never outlives its paid period: capped by the period end, and none once it has ended', async () => {
    // Longer lease days than the month: the period's end caps the lease.
    await json(
      await dashboard(owner, 'PATCH', `/api/dashboard/stores/${store.id}`, { settings: { licenseLeaseDays: 90 } }),
      200,
    );
    const sale = await subscribe();
    const activated = await license('activate', { key: sale.key, instanceName: 'desktop' });
    const subscription = await json(await merchant('GET', `/subscriptions/${sale.subscriptionId}`), 200);
    // Dated in real time, it lasts what the period has left at the subscription's clock.
    const leased = claimsOf(activated.lease);
    expect(Math.abs(leased.iat * 1000 - Date.now())).toBeLessThan(60_000);
    const left = (Date.parse(subscription.currentPeriodEnd) - Date.parse(subscription.clockTime)) / 1000;
    expect(Math.abs(leased.exp - leased.iat - left)).toBeLessThanOrEqual(1);
    expect(leased.exp - leased.iat).toBeLessThan(32 * 86_400);
    // Canceled at the period's end, then its clock moved past it: expired, and no lease.
    await json(await merchant('POST', `/subscriptions/${sale.subscriptionId}/cancel`, { atPeriodEnd: true }), 200);
    await json(
      await merchant('POST', `/subscriptions/${sale.subscriptionId}/advance`, {
        to: new Date(Date.parse(subscription.currentPeriodEnd) + DAY).toISOString(),
      }),
      200,
    );
    const ended = await license('validate', { key: sale.key, instanceId: activated.instance.id });
    expect(ended).toMatchObject({ valid: false, reason: 'expired', lease: null });
  });

  it('is dated in real time after its clock has run months ahead, so it never outlives the keys the JWKS keeps', async () => {
    const sale = await subscribe();
    const activated = await license('activate', { key: sale.key, instanceName: 'studio' });
    // Ten renewals on the test clock: the subscription's clock is now ~300 days past the wall.
    await json(
      await merchant('POST', `/subscriptions/${sale.subscriptionId}/advance`, {
        to: new Date(Date.now() + 300 * DAY).toISOString(),
      }),
      200,
    );
    const validated = await license('validate', { key: sale.key, instanceId: activated.instance.id });
    expect(validated).toMatchObject({ valid: true, reason: null });
    const claims = claimsOf(validated.lease);
    expect(Math.abs(claims.iat * 1000 - Date.now())).toBeLessThan(60_000);
    expect(claims.exp - claims.iat).toBeLessThanOrEqual(90 * 86_400);
    // A rotation keeps the key that signed it published past the lease's exp.
    await json(await merchant('POST', '/license-signing-keys/rotate'), 200);
    const keys = await json(await merchant('GET', '/license-signing-keys'), 200);
    const signer = keys.keys.find((k: { kid: string }) => k.kid === headerOf(validated.lease).kid);
    expect(Date.parse(signer.publishedUntil)).toBeGreaterThan(claims.exp * 1000);
  });
});

describe('offline license leases', () => {
  it('verify with jose against the JWKS route and with the SDK offline; each alteration is refused with its reason; rotation keeps old leases verifying', async () => {
    const sale = await subscribe();
    const activated = await license('activate', { key: sale.key, instanceName: 'laptop' });
    const lease = activated.lease as string;
    expect(headerOf(lease)).toMatchObject({ alg: 'EdDSA', typ: 'svc-lease+jwt' });
    const claims = claimsOf(lease);
    expect(claims).toMatchObject({
      iss: expect.stringMatching(/^https?:\/\//),
      sub: activated.license.id,
      productId: product.id,
      instanceId: activated.instance.id,
      livemode: false,
      status: 'active',
    });
    // The store's lease days (7 at first; the test above set 90: the month's end bounds it then).
    expect(claims.exp - claims.iat).toBeLessThanOrEqual(31 * 86_400);

    // The JWKS route: public, cacheable by its ETag, any origin, no cookie.
    const route = await fetch(`${url()}/api/v1/licenses/jwks/${store.id}`, { headers: { origin: 'https://app.test' } });
    expect(route.status).toBe(200);
    expect(route.headers.get('cache-control')).toMatch(/public, max-age=\d+/);
    expect(route.headers.get('access-control-allow-origin')).toBe('*');
    expect(route.headers.get('set-cookie')).toBeNull();
    const etag = route.headers.get('etag')!;
    const jwks = (await route.json()) as LeaseJwks;
    expect(jwks.keys.map((k) => k.kid)).toContain(headerOf(lease).kid);
    expect(jwks.keys.every((k) => k.kty === 'OKP' && k.crv === 'Ed25519' && k.alg === 'EdDSA' && k.use === 'sig')).toBe(
      true,
    );
    expect(Object.keys(jwks.keys[0]!).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x']);
    const again = await fetch(`${url()}/api/v1/licenses/jwks/${store.id}`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    await json(await fetch(`${url()}/api/v1/licenses/jwks/${'x'.repeat(24)}`), 404);

    // jose, an implementation no one here wrote, verifies it.
    const verified = await jwtVerify(lease, createLocalJWKSet(jwks as JSONWebKeySet), {
      typ: 'svc-lease+jwt',
      algorithms: ['EdDSA'],
    });
    expect(verified.payload).toMatchObject({ sub: activated.license.id, productId: product.id });

    // validate answers a lease too, for the instance it names; an invalid instance gets none.
    const validated = await license('validate', { key: sale.key, instanceId: activated.instance.id });
    expect(validated).toMatchObject({ valid: true, reason: null });
    expect(claimsOf(validated.lease)).toMatchObject({ instanceId: activated.instance.id });
    const unknownInstance = await license('validate', { key: sale.key, instanceId: `z${'0'.repeat(23)}` });
    expect(unknownInstance).toMatchObject({ valid: false, reason: 'instance_not_found', lease: null });

    // Rotation: a new kid; the old lease still verifies against the JWKS, which keeps the old key.
    const before = await json(await merchant('GET', '/license-signing-keys'), 200);
    expect(before.keys.filter((k: { retiredAt: string | null }) => k.retiredAt === null)).toHaveLength(1);
    for (const k of before.keys) expect(Object.keys(k).sort()).not.toContain('privateKey');
    const rotated = await json(await merchant('POST', '/license-signing-keys/rotate'), 200);
    expect(rotated.kid).not.toBe(headerOf(lease).kid);
    const after = await json(await merchant('GET', '/license-signing-keys'), 200);
    const old = after.keys.find((k: { kid: string }) => k.kid === headerOf(lease).kid);
    expect(old.retiredAt).not.toBeNull();
    // The longest lease (90 days) from the last moment another process may sign with it (a minute's cache).
    expect(Date.parse(old.publishedUntil) - Date.parse(old.retiredAt)).toBe(90 * DAY + 60_000);
    const rotatedJwks = await jwksOf(store.id);
    expect(rotatedJwks.keys.map((k) => k.kid)).toEqual(expect.arrayContaining([headerOf(lease).kid, rotated.kid]));
    const renewed = await license('validate', { key: sale.key });
    expect(headerOf(renewed.lease).kid).toBe(rotated.kid);
    expect(claimsOf(renewed.lease).instanceId).toBeNull();
    const otherJwks = await jwksOf(other.id);

    // The server stops: the SDK verifies with no network at all.
    await server!.stop();
    server = undefined;
    for (const token of [lease, renewed.lease])
      expect(await verifyLicenseLease(token, { jwks: rotatedJwks, productId: product.id })).toMatchObject({
        productId: product.id,
        sub: activated.license.id,
      });
    expect(await refusal(verifyLicenseLease(flipped(lease, 1), { jwks: rotatedJwks, productId: product.id }))).toBe(
      'signature',
    );
    expect(await refusal(verifyLicenseLease(flipped(lease, 2), { jwks: rotatedJwks, productId: product.id }))).toBe(
      'signature',
    );
    expect(await refusal(verifyLicenseLease(lease, { jwks: otherJwks, productId: product.id }))).toBe('signature');
    expect(await refusal(verifyLicenseLease(lease, { jwks: rotatedJwks, productId: 'another-product' }))).toBe(
      'product',
    );
    const past = (claims.exp + 3_600) * 1000;
    expect(await refusal(verifyLicenseLease(lease, { jwks: rotatedJwks, productId: product.id, now: past }))).toBe(
      'expired',
    );
    // Inside the clock-skew tolerance (60 s) it still holds.
    expect(
      await verifyLicenseLease(lease, { jwks: rotatedJwks, productId: product.id, now: (claims.exp + 30) * 1000 }),
    ).toMatchObject({ exp: claims.exp });
    for (const bad of ['', 'a.b', 'not.a.lease', `${lease}.x`])
      expect(await refusal(verifyLicenseLease(bad, { jwks: rotatedJwks, productId: product.id }))).toBe('malformed');
  });
});
