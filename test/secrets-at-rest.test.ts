/**
 * Secrets at rest, black-box: after a seller and a buyer have gone through everything that hands
 * out a secret (an API key, a webhook signing secret, license keys imported and sold, a checkout
 * token from an order created with an Idempotency-Key, a password-reset link, a customer sign-in
 * code), a dump of the database (`pg_dump --data-only`) holds none of them in clear: they are
 * hashed (API keys, checkout tokens, reset tokens, codes) or sealed under the app key (webhook
 * secrets, license keys, stored idempotent answers, kept mail).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct, importKeys } from './support/catalog.js';
import { pay, TEST_GATEWAY_SECRET } from './support/payments.js';
import { clientIp, createKeyFor, createStoreFor, dashboard, registerSeller, uniqueEmail } from './support/seller.js';
import { startServer } from './support/server.js';

const run = promisify(execFile);

let server: Awaited<ReturnType<typeof startServer>>;
/** Every secret the API handed out, by what it is. */
const secrets: Record<string, string> = {};
/** The signing key of the lease the activation answered. */
let leaseKid = '';
/** How every Ed25519 private key in PKCS#8 DER starts (RFC 8410), in base64 and in hex: never in a dump. */
const PKCS8_ED25519 = ['MC4CAQAwBQYDK2VwBCIEI', '302e020100300506032b657004220420'];

async function latestMailTo(address: string): Promise<string> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const { emails } = (await (await fetch(`${server.url}/dev/mailbox.json`)).json()) as {
      emails: Array<{ to: string; text: string }>;
    };
    const mail = emails.find((m) => m.to === address);
    if (mail) return mail.text;
    if (Date.now() > deadline) throw new Error(`no mail to ${address}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  server = await startServer({ TEST_GATEWAY_SECRET });
  const seller = await registerSeller(server.url);
  const store = await createStoreFor(seller);
  secrets['API key'] = (await createKeyFor(seller, { scopes: ['order:read'], storeIds: [store.id] })).key;
  const hook = await dashboard(seller, 'POST', `/api/dashboard/stores/${store.id}/webhooks`, {
    name: 'hook',
    url: 'http://127.0.0.1:9/hook',
    events: ['order.paid'],
  });
  expect(hook.status).toBe(201);
  secrets['webhook secret'] = (await hook.json()).secret;

  const product = await createProduct(seller, store.id, {
    name: 'Secret app',
    price: 7,
    deliveryMethods: ['licenseKeys'],
  });
  const licenseKeys = [
    `LIC-${randomBytes(12).toString('hex').toUpperCase()}`,
    `LIC-${randomBytes(12).toString('hex').toUpperCase()}`,
  ];
  await importKeys(seller, store.id, product.id, licenseKeys);
  secrets['license key (unsold)'] = licenseKeys[1]!;

  const buyer = uniqueEmail('buyer');
  const created = await fetch(`${server.url}/api/orders/create`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'idempotency-key': `order-${randomBytes(6).toString('hex')}`,
      'x-forwarded-for': clientIp(),
    },
    body: JSON.stringify({ storeId: store.id, cart: [{ productId: product.id, quantity: 1 }], email: buyer }),
  });
  expect(created.status).toBe(201);
  const order = await created.json();
  secrets['checkout token'] = order.checkoutToken;
  expect((await pay(server.url, { orderId: order.order.id, amount: 7 })).status).toBe(200);
  const keys = await (
    await fetch(`${server.url}/api/orders/${order.order.id}/keys?token=${order.checkoutToken}`)
  ).json();
  secrets['license key (sold)'] = keys.keys[0].key;
  expect(licenseKeys).toContain(secrets['license key (sold)']);
  // The activation's offline lease makes the store's Ed25519 signing key (its private half is never handed out).
  const activated = await fetch(`${server.url}/api/v1/licenses/activate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp() },
    body: JSON.stringify({ productId: product.id, key: secrets['license key (sold)'], instanceName: 'laptop' }),
  });
  expect(activated.status).toBe(200);
  leaseKid = JSON.parse(Buffer.from((await activated.json()).lease.split('.')[0], 'base64url').toString()).kid;

  expect(
    (
      await fetch(`${server.url}/api/auth/forgot`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: seller.email }),
      })
    ).status,
  ).toBe(204);
  const resetMail = await latestMailTo(seller.email);
  secrets['password-reset token'] = /token=([A-Za-z0-9_-]+)/.exec(resetMail)![1]!;

  const start = await fetch(`${server.url}/api/customer/auth/start`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp() },
    body: JSON.stringify({ storeId: store.id, email: buyer }),
  });
  expect(start.status).toBe(204);
  secrets['customer sign-in code'] = /\b(\d{6})\b/.exec(await latestMailTo(buyer))![1]!;
}, 90_000);
afterAll(() => server?.stop());

describe('a dump of the database', () => {
  it('holds none of the secrets the API handed out in clear', async () => {
    expect(Object.keys(secrets)).toHaveLength(7);
    for (const [what, value] of Object.entries(secrets)) expect(value, what).toMatch(/.{6,}/);
    const { stdout: dump } = await run('pg_dump', ['--data-only', '--no-owner', '--no-privileges', server.db.url], {
      maxBuffer: 256 * 1024 * 1024,
    });
    // The dump is the store's: its rows are there (the test would pass on an empty dump otherwise).
    expect(dump).toContain('Secret app');
    expect(dump).toContain(secrets['webhook secret']!.slice(0, 12)); // the prefix a list shows, by design
    const found = Object.entries(secrets).filter(([what, value]) =>
      what === 'customer sign-in code'
        ? // Six digits: as a word of their own (not inside a hex, base64 or a timestamp's fraction).
          new RegExp(`(?<![\\w.])${value}(?![\\w])`).test(dump)
        : dump.includes(value),
    );
    expect(found.map(([what]) => what)).toEqual([]);
    // The license signing key's row is there, its private key sealed.
    expect(dump).toContain(leaseKid);
    for (const prefix of PKCS8_ED25519) expect(dump).not.toContain(prefix);
  });
});
