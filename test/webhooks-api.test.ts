/** Black-box: the merchant webhook API (endpoints, secrets, validation, scopes, SSRF rules). */
import { execFileSync } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addStaff, createKeyFor, createStoreFor, registerSeller, type Seller } from './support/seller.js';
import { startServer } from './support/server.js';

let server: Awaited<ReturnType<typeof startServer>>;
let seller: Seller;
let store: { id: string };
let key: string;

beforeAll(async () => {
  server = await startServer();
  seller = await registerSeller(server.url);
  store = await createStoreFor(seller);
  key = (
    await createKeyFor(seller, { scopes: ['webhook:read', 'webhook:write', 'webhook:delete'], storeIds: [store.id] })
  ).key;
});
afterAll(() => server?.stop());

function api(method: string, path: string, body?: unknown, bearer = key, base = server.url, storeId = store.id) {
  return fetch(`${base}/api/merchant/v1/stores/${storeId}/webhooks${path}`, {
    method,
    headers: {
      authorization: `Bearer ${bearer}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const valid = { name: 'Orders to ERP', url: 'http://127.0.0.1:9/hook', events: ['order.created', 'order.completed'] };

describe('webhook endpoints', () => {
  it('creates with 201 and a whsec_ secret shown once; list and get never show it', async () => {
    const created = await api('POST', '', valid);
    expect(created.status).toBe(201);
    const body = await created.json();
    expect(body).toEqual({
      id: expect.any(String),
      storeId: store.id,
      livemode: true,
      name: 'Orders to ERP',
      url: 'http://127.0.0.1:9/hook',
      secretPrefix: body.secret.slice(0, 12),
      events: ['order.created', 'order.completed'],
      enabled: true,
      failureCount: 0,
      disabledAt: null,
      disabledReason: null,
      lastDeliveredAt: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    const listText = await (await api('GET', '')).text();
    const getText = await (await api('GET', `/${body.id}`)).text();
    for (const text of [listText, getText]) {
      expect(text).not.toContain(body.secret);
      expect(text).not.toContain('"secret"');
    }
    expect(JSON.parse(listText).webhooks.map((w: { id: string }) => w.id)).toContain(body.id);
    const dump = execFileSync('pg_dump', ['--data-only', '--table=webhook', server.db.url], { encoding: 'utf8' });
    expect(dump).toContain(body.secretPrefix);
    expect(dump).not.toContain(body.secret);
  });

  it('updates any subset, disables and re-enables, rotates and deletes', async () => {
    const { id, secret } = await (await api('POST', '', valid)).json();
    const renamed = await (await api('PATCH', `/${id}`, { name: 'Renamed' })).json();
    expect(renamed).toMatchObject({ name: 'Renamed', url: valid.url, events: valid.events });
    const disabled = await (await api('PATCH', `/${id}`, { enabled: false })).json();
    expect(disabled).toMatchObject({ enabled: false, disabledAt: expect.any(String) });
    const enabled = await (await api('PATCH', `/${id}`, { enabled: true, events: ['product.updated'] })).json();
    expect(enabled).toMatchObject({ enabled: true, disabledAt: null, failureCount: 0, events: ['product.updated'] });
    const rotated = await api('POST', `/${id}/rotate`);
    expect(rotated.status).toBe(200);
    const after = await rotated.json();
    expect(after.secret).toMatch(/^whsec_/);
    expect(after.secret).not.toBe(secret);
    expect(after.secretPrefix).toBe(after.secret.slice(0, 12));
    expect((await api('DELETE', `/${id}`)).status).toBe(204);
    expect((await api('GET', `/${id}`)).status).toBe(404);
  });

  it.each([
    ['an invalid url', { ...valid, url: 'not a url' }, 'url_not_allowed'],
    ['an ftp url', { ...valid, url: 'ftp://example.com/x' }, 'url_not_allowed'],
    ['http to a host that is not loopback', { ...valid, url: 'http://example.com/hook' }, 'url_not_allowed'],
    ['credentials in the url', { ...valid, url: 'https://user:pw@example.com/hook' }, 'url_not_allowed'],
    ['no events', { ...valid, events: [] }, 'validation_failed'],
    ['an unknown event', { ...valid, events: ['order.exploded'] }, 'validation_failed'],
    ['webhook.test as a subscription', { ...valid, events: ['webhook.test'] }, 'validation_failed'],
    ['an unknown field', { ...valid, secret: 'whsec_mine' }, 'validation_failed'],
    ['invalid JSON', '{"name":', 'invalid_json'],
  ])('refuses %s with 400', async (_name, body, code) => {
    const response = await api('POST', '', body);
    expect(response.status).toBe(400);
    expect((await response.json()).code).toBe(code);
  });

  it('keeps at most 16 per store', async () => {
    const other = await createStoreFor(seller);
    const otherKey = (await createKeyFor(seller, { scopes: ['webhook:write'], storeIds: [other.id] })).key;
    for (let i = 0; i < 16; i++)
      expect((await api('POST', '', valid, otherKey, server.url, other.id)).status).toBe(201);
    const over = await api('POST', '', valid, otherKey, server.url, other.id);
    expect(over.status).toBe(400);
    expect((await over.json()).code).toBe('webhook_limit_reached');
  });

  it("answers 404 for another store's webhook", async () => {
    const other = await createStoreFor(seller);
    const otherKey = (await createKeyFor(seller, { scopes: ['webhook:read', 'webhook:write'], storeIds: [other.id] }))
      .key;
    const { id } = await (await api('POST', '', valid, otherKey, server.url, other.id)).json();
    expect((await api('GET', `/${id}`)).status).toBe(404);
    expect((await api('PATCH', `/${id}`, { name: 'x' })).status).toBe(404);
    expect((await api('POST', `/${id}/rotate`)).status).toBe(404);
  });

  it("pages a delivery log with its own cursor and refuses it on another webhook's log or filter", async () => {
    const own = await createStoreFor(seller);
    const ownKey = (await createKeyFor(seller, { scopes: ['webhook:read', 'webhook:write'], storeIds: [own.id] })).key;
    const call = (method: string, path: string, body?: unknown) => api(method, path, body, ownKey, server.url, own.id);
    const first = (await (await call('POST', '', valid)).json()).id as string;
    const second = (await (await call('POST', '', valid)).json()).id as string;
    // Each test ping is one logged attempt (failed: nothing listens on port 9).
    for (const id of [first, first, second, second]) expect((await call('POST', `/${id}/test`)).status).toBe(200);

    const page = await (await call('GET', `/${first}/deliveries?limit=1`)).json();
    expect(page).toMatchObject({ hasMore: true, nextCursor: expect.any(String) });
    const cursor = encodeURIComponent(page.nextCursor);
    const next = await call('GET', `/${first}/deliveries?limit=1&cursor=${cursor}`);
    expect(next.status).toBe(200);
    expect((await next.json()).deliveries).toHaveLength(1);

    for (const path of [`/${second}/deliveries?limit=1`, `/${first}/deliveries?limit=1&event=webhook.test`]) {
      const refused = await call('GET', `${path}&cursor=${cursor}`);
      expect(refused.status, path).toBe(400);
      const body = await refused.json();
      expect(body.code).toBe('validation_failed');
      expect(body.issues.map((issue: { path: string }) => issue.path)).toEqual(['cursor']);
    }
  });
});

describe('scopes and ceilings', () => {
  it('webhook:read cannot create; webhook:write cannot delete; no manageSettings behind the key: 403', async () => {
    const readOnly = (await createKeyFor(seller, { scopes: ['webhook:read'], storeIds: [store.id] })).key;
    const create = await api('POST', '', valid, readOnly);
    expect(create.status).toBe(403);
    expect((await create.json()).code).toBe('scope_missing');
    const writer = (await createKeyFor(seller, { scopes: ['webhook:write'], storeIds: [store.id] })).key;
    const { id } = await (await api('POST', '', valid, writer)).json();
    const remove = await api('DELETE', `/${id}`, undefined, writer);
    expect(remove.status).toBe(403);
    expect((await remove.json()).code).toBe('scope_missing');

    const staff = await registerSeller(server.url);
    await addStaff(seller, store.id, staff, ['viewOrders', 'editOrders']);
    const staffKey = (await createKeyFor(staff, { scopes: ['webhook:read', 'webhook:write'], storeIds: [store.id] }))
      .key;
    const ceiling = await api('GET', '', undefined, staffKey);
    expect(ceiling.status).toBe(403);
    expect((await ceiling.json()).code).toBe('permission_missing');
  });
});

describe('receivers in production', () => {
  let production: Awaited<ReturnType<typeof startServer>>;
  let prodKey: string;
  let prodStore: { id: string };

  beforeAll(async () => {
    production = await startServer({
      NODE_ENV: 'production',
      PUBLIC_URL: 'https://api.shop.example',
      SMTP_URL: 'smtp://127.0.0.1:9',
    });
    const owner = await registerSeller(production.url);
    prodStore = await createStoreFor(owner);
    prodKey = (await createKeyFor(owner, { scopes: ['webhook:write'], storeIds: [prodStore.id] })).key;
  });
  afterAll(() => production?.stop());

  it.each([
    'http://hooks.example.com/x',
    'https://127.0.0.1/x',
    'https://10.1.2.3/x',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]/x',
    'https://[::ffff:127.0.0.1]/x',
    'https://[::ffff:7f00:1]/x',
    'https://[::127.0.0.1]/x',
    'https://[2002:7f00:1::]/x',
    'https://[fec0::1]/x',
    'https://[2001:0:7f00:1::]/x',
    'https://[64:ff9b::a00:1]/x',
    'https://[fd00::1]/x',
    'https://[fe80::1]/x',
    'https://[ff02::1]/x',
    'https://[2001:db8::1]/x',
    'https://2130706433/x',
    'https://0x7f000001/x',
    'https://localhost/x',
    'https://192.168.1.10:8443/x',
    'https://100.64.0.1/x',
  ])('refuses %s', async (url) => {
    const response = await api('POST', '', { ...valid, url }, prodKey, production.url, prodStore.id);
    expect(response.status).toBe(400);
    expect((await response.json()).code).toBe('url_not_allowed');
  });

  it('accepts https to a public address', async () => {
    const response = await api(
      'POST',
      '',
      { ...valid, url: 'https://1.1.1.1/hooks' },
      prodKey,
      production.url,
      prodStore.id,
    );
    expect(response.status).toBe(201);
  });
});

describe('test ping to a real receiver, and rotation', () => {
  interface Received {
    headers: Record<string, string | string[] | undefined>;
    body: Buffer;
  }

  /** The interface's scheme: hex HMAC-SHA256 of "<t>.<raw body>" keyed with the secret. */
  function verifyService(secret: string, r: Received): boolean {
    const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(r.headers['x-service-signature']));
    if (!match) return false;
    const expected = createHmac('sha256', secret)
      .update(Buffer.concat([Buffer.from(`${match[1]}.`), r.body]))
      .digest('hex');
    return timingSafeEqual(Buffer.from(expected), Buffer.from(match[2]!));
  }

  /** Standard Webhooks, written from its spec: base64 HMAC of "<id>.<timestamp>.<body>" keyed with the decoded secret. */
  function verifyStandard(secret: string, r: Received): boolean {
    const id = String(r.headers['webhook-id']);
    const timestamp = String(r.headers['webhook-timestamp']);
    const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
    const expected = createHmac('sha256', key)
      .update(`${id}.${timestamp}.${r.body.toString('utf8')}`)
      .digest('base64');
    return String(r.headers['webhook-signature'])
      .split(' ')
      .some((part) => part === `v1,${expected}`);
  }

  it('sends webhook.test signed both ways; after rotate the old secret fails and the new one passes; disabled -> 400', async () => {
    const received: Received[] = [];
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks) });
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok thanks');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const port = (receiver.address() as { port: number }).port;
    try {
      const { id, secret } = await (await api('POST', '', { ...valid, url: `http://127.0.0.1:${port}/hooks` })).json();
      const first = await api('POST', `/${id}/test`);
      expect(first.status).toBe(200);
      const { delivery } = await first.json();
      expect(delivery).toMatchObject({
        webhookId: id,
        event: 'webhook.test',
        attempt: 1,
        status: 'success',
        responseCode: 200,
        responseBodyPreview: 'ok thanks',
        eventId: expect.stringMatching(/^evt_/),
      });
      expect(delivery.durationMs).toBeGreaterThanOrEqual(0);
      const ping = received.at(-1)!;
      expect(ping.headers['x-service-event']).toBe('webhook.test');
      expect(ping.headers['x-service-event-id']).toBe(delivery.eventId);
      expect(ping.headers['webhook-id']).toBe(delivery.eventId);
      expect(JSON.parse(ping.body.toString())).toMatchObject({
        id: delivery.eventId,
        event: 'webhook.test',
        storeId: store.id,
      });
      expect(verifyService(secret, ping)).toBe(true);
      expect(verifyStandard(secret, ping)).toBe(true);
      // The log keeps the headers the attempt went out with: the signatures as the receiver got them.
      for (const name of [
        'x-service-signature',
        'webhook-signature',
        'webhook-timestamp',
        'x-service-delivery-id',
        'content-type',
      ]) {
        expect(ping.headers[name]).toBeTruthy();
        expect(delivery.requestHeaders[name]).toBe(ping.headers[name]);
      }
      expect(verifyService(secret, { ...ping, body: Buffer.concat([ping.body, Buffer.from(' ')]) })).toBe(false);

      const { secret: rotated } = await (await api('POST', `/${id}/rotate`)).json();
      await api('POST', `/${id}/test`);
      const after = received.at(-1)!;
      expect(verifyService(secret, after)).toBe(false);
      expect(verifyStandard(secret, after)).toBe(false);
      expect(verifyService(rotated, after)).toBe(true);
      expect(verifyStandard(rotated, after)).toBe(true);

      const log = await (await api('GET', `/${id}/deliveries`)).json();
      expect(log.deliveries.map((d: { event: string; status: string }) => [d.event, d.status])).toEqual([
        ['webhook.test', 'success'],
        ['webhook.test', 'success'],
      ]);
      expect(log.hasMore).toBe(false);
      // Newest first: the attempt signed with the rotated secret, with the headers it was sent with.
      expect(log.deliveries[0].requestHeaders['x-service-signature']).toBe(after.headers['x-service-signature']);
      expect(log.deliveries[1].requestHeaders['x-service-signature']).toBe(ping.headers['x-service-signature']);
      const refreshed = await (await api('GET', `/${id}`)).json();
      expect(refreshed.lastDeliveredAt).not.toBeNull();

      await api('PATCH', `/${id}`, { enabled: false });
      const disabled = await api('POST', `/${id}/test`);
      expect(disabled.status).toBe(400);
      expect((await disabled.json()).code).toBe('webhook_disabled');
    } finally {
      receiver.close();
    }
  });
});
