/**
 * The SDK's examples (packages/sdk/examples) run as the README says: against a started
 * service seeded with `svc seed-demo`, with nothing but environment variables.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buy, pay, TEST_GATEWAY_SECRET } from './support/payments.js';
import { REPO_ROOT, SERVER_ENTRY, startServer } from './support/server.js';

const run = promisify(execFile);
const EXAMPLES = path.join(REPO_ROOT, 'packages/sdk/examples');

let server: Awaited<ReturnType<typeof startServer>>;
let demo: { storeId: string; apiKey: string };

beforeAll(async () => {
  const shared = {
    APP_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    DATA_DIR: mkdtempSync(path.join(tmpdir(), 'svc-examples-')),
  };
  server = await startServer({ ...shared, TEST_GATEWAY_SECRET, WEBHOOK_POLL_MS: '100' });
  const seeded = await run(process.execPath, [SERVER_ENTRY, 'seed-demo'], {
    env: { PATH: process.env.PATH, NODE_ENV: 'test', LOG_LEVEL: 'silent', DATABASE_URL: server.db.url, ...shared },
  });
  const apiKey = /(sk_live_[0-9A-Za-z]{40})/.exec(seeded.stdout)?.[1];
  const storeId = /\(([a-z0-9]{20,})\), subdomain demo/.exec(seeded.stdout)?.[1];
  expect(apiKey && storeId, seeded.stdout).toBeTruthy();
  demo = { storeId: storeId!, apiKey: apiKey! };
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

async function example(name: string, env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await run(process.execPath, [path.join(EXAMPLES, name)], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, SVC_BASE_URL: server.url, ...env },
      timeout: 30_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('packages/sdk/examples against a seeded service', () => {
  it('theme-checkout opens an order with the demo coupon; list-paid-orders lists it once paid', async () => {
    const checkout = await example('theme-checkout.mjs', {
      SVC_SUBDOMAIN: 'demo',
      SVC_EMAIL: 'example-buyer@example.test',
    });
    expect(checkout.code, checkout.stderr).toBe(0);
    expect(checkout.stdout).toContain('Demo Store:');
    const match = /order (\S+): send the buyer to (\S+)/.exec(checkout.stdout);
    expect(match, checkout.stdout).not.toBeNull();
    const [, orderId, url] = match!;
    expect(url).toContain(`/checkout/${orderId}?token=`);

    const before = await example('list-paid-orders.mjs', { SVC_API_KEY: demo.apiKey, SVC_STORE_ID: demo.storeId });
    expect(before.code, before.stderr).toBe(0);
    expect(before.stdout).toMatch(/^0 paid orders since/m);

    const order = await (
      await fetch(`${server.url}/api/merchant/v1/stores/${demo.storeId}/orders/${orderId}`, {
        headers: { authorization: `Bearer ${demo.apiKey}` },
      })
    ).json();
    const front = await (await fetch(`${server.url}/api/stores/by-subdomain/demo/storefront`)).json();
    // DEMO10 took its 10 % (to the cent).
    expect(Math.abs(order.price - front.products[0].price * 0.9)).toBeLessThanOrEqual(0.01);
    expect((await pay(server.url, { orderId: orderId!, amount: order.price })).status).toBe(200);
    const after = await example('list-paid-orders.mjs', { SVC_API_KEY: demo.apiKey, SVC_STORE_ID: demo.storeId });
    expect(after.code, after.stderr).toBe(0);
    expect(after.stdout).toContain('example-buyer@example.test');
    expect(after.stdout).toMatch(
      new RegExp(`^1 paid orders since .*, ${order.price.toFixed(2).replace('.', '\\.')} in all$`, 'm'),
    );
  });

  it('list-paid-orders reports a wrong key as a typed error and exits 1', async () => {
    const wrong = await example('list-paid-orders.mjs', {
      SVC_API_KEY: `sk_${'x'.repeat(40)}`,
      SVC_STORE_ID: demo.storeId,
    });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('SvcAuthenticationError 401 unauthorized');
  });

  it('webhook-receiver registers itself, verifies the test event and cleans up', async () => {
    const receiver = await example('webhook-receiver.mjs', { SVC_API_KEY: demo.apiKey, SVC_STORE_ID: demo.storeId });
    expect(receiver.code, receiver.stderr).toBe(0);
    expect(receiver.stdout).toMatch(/^verified webhook\.test \S+/m);
    const left = await fetch(`${server.url}/api/merchant/v1/stores/${demo.storeId}/webhooks`, {
      headers: { authorization: `Bearer ${demo.apiKey}` },
    });
    // The example's endpoint is gone; only the demo store's own (disabled) one is left.
    expect((await left.json()).webhooks.map((hook: { name: string }) => hook.name)).toEqual([
      'Fulfilment bot (example)',
    ]);
  });

  it('license-check activates this machine once, validates at every start and deactivates on uninstall', async () => {
    const storefront = await (await fetch(`${server.url}/api/stores/by-subdomain/demo/storefront`)).json();
    const game = (storefront.products as Array<{ id: string; price: number; deliveryMethods: string[] }>).find((p) =>
      p.deliveryMethods.includes('licenseKeys'),
    )!;
    const bought = await buy(server.url, { storeId: demo.storeId, productId: game.id, email: 'licensee@example.test' });
    expect(bought.price).toBe(game.price);
    const key = (await (await fetch(`${server.url}/api/orders/${bought.id}/keys?token=${bought.token}`)).json()).keys[0]
      .key as string;
    const env = {
      SVC_PRODUCT_ID: game.id,
      LICENSE_KEY: key,
      STATE_FILE: path.join(mkdtempSync(path.join(tmpdir(), 'svc-license-')), 'state.json'),
      INSTANCE_NAME: 'build-agent',
    };

    const first = await example('license-check.mjs', env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('activated build-agent: 1 of 2 activations in use');
    expect(first.stdout).toMatch(/license valid until \d{4}-/);
    const second = await example('license-check.mjs', env);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).not.toContain('activated');
    expect(second.stdout).toContain('license valid');
    const removed = await run(process.execPath, [path.join(EXAMPLES, 'license-check.mjs'), 'uninstall'], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, SVC_BASE_URL: server.url, ...env },
    });
    expect(removed.stdout).toContain('deactivated build-agent: 0 of 2 activations in use');
    const wrong = await example('license-check.mjs', { ...env, LICENSE_KEY: 'NOT-A-KEY' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('not_found');
  });

  it('license-offline keeps the lease online and starts from it offline, and refuses a lease it cannot verify', async () => {
    const storefront = await (await fetch(`${server.url}/api/stores/by-subdomain/demo/storefront`)).json();
    const game = (storefront.products as Array<{ id: string; deliveryMethods: string[] }>).find((p) =>
      p.deliveryMethods.includes('licenseKeys'),
    )!;
    const bought = await buy(server.url, { storeId: demo.storeId, productId: game.id, email: 'offline@example.test' });
    const key = (await (await fetch(`${server.url}/api/orders/${bought.id}/keys?token=${bought.token}`)).json()).keys[0]
      .key as string;
    const stateFile = path.join(mkdtempSync(path.join(tmpdir(), 'svc-lease-')), 'lease.json');
    const env = {
      SVC_STORE_ID: demo.storeId,
      SVC_PRODUCT_ID: game.id,
      LICENSE_KEY: key,
      STATE_FILE: stateFile,
      INSTANCE_NAME: 'plane-laptop',
    };
    const online = await example('license-offline.mjs', env);
    expect(online.code, online.stderr).toBe(0);
    expect(online.stdout).toContain('online: lease refreshed');
    expect(online.stdout).toMatch(/license valid offline until \d{4}-/);
    // No service at this address: the kept lease decides, verified with no network.
    const offline = await example('license-offline.mjs', { ...env, SVC_BASE_URL: 'http://127.0.0.1:9' });
    expect(offline.code, offline.stderr).toBe(0);
    expect(offline.stdout).toMatch(/offline \(\w+\): using the kept lease/);
    expect(offline.stdout).toMatch(/license valid offline until \d{4}-/);
    // A lease altered on disk no longer verifies.
    const kept = JSON.parse(readFileSync(stateFile, 'utf8'));
    const [header, payload, signature] = kept.lease.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    claims.exp += 365 * 86_400;
    kept.lease = [header, Buffer.from(JSON.stringify(claims)).toString('base64url'), signature].join('.');
    writeFileSync(stateFile, JSON.stringify(kept));
    const forged = await example('license-offline.mjs', { ...env, SVC_BASE_URL: 'http://127.0.0.1:9' });
    expect(forged.code).toBe(3);
    expect(forged.stdout).toContain('no valid lease (signature)');
  });
});
