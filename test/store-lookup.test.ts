/** Black-box: GET /api/store/{subdomain} on the built server, over REST and /trpc. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openOrm, type Orm } from '../apps/server/src/db/orm.js';
import { createStore, uniqueSubdomain } from './support/factories.js';
import { startServer } from './support/server.js';

let server: Awaited<ReturnType<typeof startServer>>;
let orm: Orm;

beforeAll(async () => {
  server = await startServer();
  orm = await openOrm(server.db.url, { poolMax: 2 });
});

afterAll(async () => {
  await orm?.close();
  await server?.stop();
});

function trpcGet(path: string, input: unknown) {
  return fetch(`${server.url}/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input))}`);
}

describe('GET /api/store/{subdomain}', () => {
  it('answers 200 with exactly the public fields of an existing store', async () => {
    const store = await createStore(orm.em.fork(), { name: 'Pixel Goods', currency: 'EUR' });
    const response = await fetch(`${server.url}/api/store/${store.subdomain}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const body = await response.json();
    expect(body).toEqual({
      id: store.id,
      name: 'Pixel Goods',
      subdomain: store.subdomain,
      currency: 'EUR',
      // The store's look (docs/architecture.md, The faces): public, a theme draws the storefront with it.
      description: '',
      accentColor: null,
      logoUrl: null,
      createdAt: store.createdAt.toISOString(),
    });
    // No settings, origins or ban flag leak into the public view.
    expect(Object.keys(body).sort()).toEqual([
      'accentColor',
      'createdAt',
      'currency',
      'description',
      'id',
      'logoUrl',
      'name',
      'subdomain',
    ]);
  });

  it('matches the subdomain case-insensitively', async () => {
    const store = await createStore(orm.em.fork());
    const response = await fetch(`${server.url}/api/store/${store.subdomain.toUpperCase()}`);
    expect(response.status).toBe(200);
    expect((await response.json()).id).toBe(store.id);
  });

  it('answers 404 in our error body for an unknown store', async () => {
    const response = await fetch(`${server.url}/api/store/${uniqueSubdomain('missing')}`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: 'Store not found.', code: 'not_found' });
  });

  it('answers 403 store_banned for a banned store', async () => {
    const store = await createStore(orm.em.fork(), { banned: true });
    const response = await fetch(`${server.url}/api/store/${store.subdomain}`);
    expect(response.status).toBe(403);
    expect((await response.json()).code).toBe('store_banned');
  });

  it('gives the same answers through /trpc', async () => {
    const store = await createStore(orm.em.fork());
    const rest = await (await fetch(`${server.url}/api/store/${store.subdomain}`)).json();
    const ok = await trpcGet('stores.lookup', { subdomain: store.subdomain });
    expect(ok.status).toBe(200);
    expect((await ok.json()).result.data).toEqual(rest);

    const missing = await trpcGet('stores.lookup', { subdomain: uniqueSubdomain('missing') });
    expect(missing.status).toBe(404);
    const error = (await missing.json()).error;
    expect(error.message).toBe('Store not found.');
    expect(error.data).toMatchObject({ code: 'not_found', httpStatus: 404 });
    expect(error.data.stack).toBeUndefined();
  });

  it('has no route-level rate limit', async () => {
    const store = await createStore(orm.em.fork());
    const statuses = await Promise.all(
      Array.from({ length: 40 }, () => fetch(`${server.url}/api/store/${store.subdomain}`).then((r) => r.status)),
    );
    expect(new Set(statuses)).toEqual(new Set([200]));
    const response = await fetch(`${server.url}/api/store/${store.subdomain}`);
    expect(response.headers.get('x-ratelimit-limit')).toBeNull();
  });

  it('rejects unknown query parameters with 400', async () => {
    const store = await createStore(orm.em.fork());
    const response = await fetch(`${server.url}/api/store/${store.subdomain}?admin=1`);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 'validation_failed', issues: [{ path: 'admin' }] });
  });
});

describe('operations', () => {
  it('answers /healthz, /readyz and /metrics', async () => {
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', checks: { database: 'ok', redis: 'ok' } });
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toContain('http_request_duration_seconds_bucket');
    expect(metrics).toContain('process_resident_memory_bytes');
  });

  it('serves the OpenAPI document and a docs page whose assets come from this origin', async () => {
    const doc = await (await fetch(`${server.url}/api/openapi.json`)).json();
    expect(doc.openapi).toMatch(/^3\.1/);
    expect(doc.paths['/api/store/{subdomain}'].get).toBeDefined();
    const page = await fetch(`${server.url}/docs`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThan(0);
    for (const asset of assets) {
      expect(asset.startsWith('/')).toBe(true);
      expect((await fetch(`${server.url}${asset}`)).status).toBe(200);
    }
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
  });

  it('logs requests without credentials', async () => {
    await fetch(`${server.url}/api/store/${uniqueSubdomain()}`, {
      headers: { authorization: 'Bearer sk_supersecretvalue', cookie: 'svc_session=topsecretcookie' },
    });
    await server.logsSettled();
    const output = server.output();
    expect(output).toContain('[redacted]');
    expect(output).not.toContain('sk_supersecretvalue');
    expect(output).not.toContain('topsecretcookie');
  });

  it('stops cleanly on SIGTERM', async () => {
    const other = await startServer();
    expect(await other.stop()).toBe(0);
  });
});
