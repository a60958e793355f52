/**
 * Test mode's isolation, black-box (issue 31, docs/architecture.md, Test mode). One seller's store holds two worlds:
 * live objects made with a live key and the dashboard as it is, test objects made with a test
 * key and the dashboard under `X-Svc-Mode: test` (products with key stock, a file and an image,
 * a coupon, a blacklist entry, an endpoint with a delivery, a paid and a pending order, a
 * license with an instance, events, a ticket, a customer).
 *
 * The route list is read from the route table itself (`routeTable(appRouter, PLAIN_ROUTES)`):
 * every merchant route and every store dashboard route. Each one that names an object by id is
 * called in each mode with the other mode's ids, and must answer 404 in our error body without
 * anything of the other world, exactly as for an object of another store. Each list and
 * aggregate (orders, customers, licenses, the events API, the delivery log, the Home figures) in
 * one mode holds and counts only that mode's objects. Afterwards both worlds read back as before.
 * A parameter that names an object of neither mode (a member, shared by both) is listed with its
 * reason; a route with an unknown parameter fails the test, so a new route cannot be forgotten.
 *
 * Then a test checkout end to end: test product, test order (the seller's side only: a stranger
 * cannot order a test product), the test gateway, a test license answered by the License API in
 * test mode, and its events delivered to the test endpoint only.
 */
import { randomBytes } from 'node:crypto';
import { API_KEY_SCOPES, ERROR_CODES } from '@svc/schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLAIN_ROUTES } from '../apps/server/src/http/plain-routes.js';
import { appRouter } from '../apps/server/src/api/app-router.js';
import { routeTable, type RouteEntry } from '../apps/server/src/api/route-table.js';
import { insertInvoicedOrder } from './support/orders.js';
import { buy, pay, TEST_GATEWAY_SECRET } from './support/payments.js';
import { clientIp, registerSeller, uniqueEmail, createStoreFor, type Seller } from './support/seller.js';
import { startServer } from './support/server.js';
import { insertSubscriptions } from './support/subscriptions.js';
import { sweep } from './support/sweep.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

type Mode = 'live' | 'test';
const OTHER: Record<Mode, Mode> = { live: 'test', test: 'live' };

const TABLE = routeTable(appRouter, PLAIN_ROUTES);
/** Every route that acts on one store for a merchant key or a member of the store. */
const STORE_ROUTES = TABLE.entries.filter(
  (entry) =>
    entry.params.includes('storeId') &&
    (entry.policy.auth.kind === 'apiKey' || (entry.policy.auth.kind === 'session' && entry.policy.auth.store)),
);

/** Path parameters that name no object of either mode: the store's shared records (docs/architecture.md, Test mode). */
const SHARED_PARAMS: Record<string, string> = {
  memberId: "a store member: members are the store's, shared by both modes",
  jobId: "a test-data wipe job: the store's, readable whatever the mode",
};

/** A 1x1 PNG, for each world's product image. */
const TINY_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGNgYGAAAAAEAAH2FzhVAAAAAElFTkSuQmCC',
  'base64',
);

interface World {
  mode: Mode;
  key: string;
  ids: Record<string, string>;
  price: number;
  buyer: string;
  /** Strings of this world that the other mode must never show. */
  secrets: string[];
}

let server: Awaited<ReturnType<typeof startServer>>;
let seller: Seller;
let storeId: string;
const worlds = {} as Record<Mode, World>;

const modeHeader = (mode: Mode): Record<string, string> => (mode === 'test' ? { 'x-svc-mode': 'test' } : {});

/** A dashboard call in `mode`: the session cookie, the CSRF token on writes, X-Svc-Mode for test. */
function dash(mode: Mode, method: string, path: string, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = { cookie: seller.cookie, ...modeHeader(mode) };
  if (method !== 'GET') headers['x-csrf-token'] = seller.csrfToken;
  if (body !== undefined) headers['content-type'] = 'application/json';
  return fetch(`${server.url}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

function upload(mode: Mode, path: string, part: Blob, name: string): Promise<Response> {
  const form = new FormData();
  form.append('file', part, name);
  return fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { cookie: seller.cookie, 'x-csrf-token': seller.csrfToken, ...modeHeader(mode) },
    body: form,
  });
}

function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp(), ...headers },
    body: JSON.stringify(body),
  });
}

async function ok(response: Response, status: number, what: string) {
  const text = await response.text();
  expect(response.status, `${what}: ${text}`).toBe(status);
  return text ? JSON.parse(text) : undefined;
}

async function buildWorld(mode: Mode, price: number): Promise<World> {
  const tag = `${mode}-${randomBytes(4).toString('hex')}`;
  const s = `/api/dashboard/stores/${storeId}`;
  const ids: Record<string, string> = {};
  const created = await ok(
    await dash(mode, 'POST', '/api/dashboard/api-keys', {
      name: `key ${tag}`,
      mode,
      scopes: [...API_KEY_SCOPES],
      storeIds: [storeId],
    }),
    201,
    'key',
  );
  expect(created.apiKey.mode).toBe(mode);
  expect(created.key.startsWith(`sk_${mode}_`)).toBe(true);
  const productName = `Product ${tag}`;
  const product = await ok(
    await dash(mode, 'POST', `${s}/products`, {
      name: productName,
      price,
      deliveryMethods: ['licenseKeys', 'downloadFiles'],
    }),
    201,
    'product',
  );
  expect(product.livemode).toBe(mode === 'live');
  ids.productId = product.id;
  const licenseKeys = Array.from({ length: 4 }, (_, i) => `LK-${tag}-${i}`);
  await ok(await dash(mode, 'POST', `${s}/products/${product.id}/license-keys`, { keys: licenseKeys }), 200, 'keys');
  ids.keyId = (await ok(await dash(mode, 'GET', `${s}/products/${product.id}/license-keys`), 200, 'keys')).keys[0].id;
  const fileName = `goods-${tag}.txt`;
  ids.fileId = (
    await ok(
      await upload(mode, `${s}/products/${product.id}/files`, new Blob([`contents ${tag}`]), fileName),
      201,
      'file',
    )
  ).id;
  ids.imageId = (
    await ok(
      await upload(
        mode,
        `${s}/products/${product.id}/images`,
        new Blob([new Uint8Array(TINY_PNG)], { type: 'image/png' }),
        'p.png',
      ),
      201,
      'image',
    )
  ).images[0].id;
  const couponCode = `C${tag.replace('-', '').toUpperCase()}`;
  ids.couponId = (
    await ok(
      await dash(mode, 'POST', `${s}/coupons`, { code: couponCode, discountType: 'percent', discountValue: 10 }),
      201,
      'coupon',
    )
  ).id;
  const blocked = uniqueEmail(`blocked-${tag}`);
  ids.entryId = (
    await ok(await dash(mode, 'POST', `${s}/blacklist`, { kind: 'email', value: blocked }), 201, 'entry')
  ).id;
  const hookName = `hook-${tag}`;
  ids.webhookId = (
    await ok(
      await dash(mode, 'POST', `${s}/webhooks`, {
        name: hookName,
        url: `http://127.0.0.1:9/${tag}`,
        events: ['product.deleted'],
      }),
      201,
      'webhook',
    )
  ).id;
  ids.deliveryId = (await ok(await dash(mode, 'POST', `${s}/webhooks/${ids.webhookId}/test`), 200, 'ping')).delivery.id;

  const buyer = uniqueEmail(`buyer-${tag}`);
  // A test product is ordered by the seller's side only: here with the test key (as a theme's server would).
  const placed = async () => {
    const body = await ok(
      await post(
        '/api/orders/create',
        { storeId, cart: [{ productId: product.id, quantity: 1 }], email: buyer },
        mode === 'test' ? { authorization: `Bearer ${created.key}` } : {},
      ),
      201,
      'order',
    );
    return { id: body.order.id as string, token: body.checkoutToken as string };
  };
  // A test product is bought only with the store's own credential beside the request (its test key).
  const paid = await buy(server.url, {
    storeId,
    productId: product.id,
    email: buyer,
    headers: mode === 'test' ? { authorization: `Bearer ${created.key}` } : {},
  });
  expect(paid.price).toBe(price);
  const pending = await placed();
  await ok(
    await post('/api/checkout/start', { orderId: pending.id, token: pending.token, paymentMethod: 'manual' }),
    200,
    'checkout start',
  );
  const proof = new FormData();
  proof.append('file', new Blob([`proof ${tag}`], { type: 'text/plain' }), `proof-${tag}.txt`);
  await ok(
    await fetch(`${server.url}/api/orders/${pending.id}/payment-proof?token=${pending.token}`, {
      method: 'POST',
      body: proof,
    }),
    201,
    'proof',
  );
  ids.orderId = paid.id;
  ids.pendingOrder = pending.id;
  // An order of this mode with an invoice and a credit note, so their PDFs have something to reach.
  ids.invoicedOrder = (
    await insertInvoicedOrder(server.db.url, storeId, { livemode: mode === 'live', customerEmail: buyer })
  ).id;
  const soldKey = (await ok(await fetch(`${server.url}/api/orders/${paid.id}/keys?token=${paid.token}`), 200, 'keys'))
    .keys[0].key as string;
  const activated = await ok(
    await post('/api/v1/licenses/activate', { productId: product.id, key: soldKey, instanceName: `pc-${tag}` }),
    200,
    'activation',
  );
  expect(activated.license.livemode).toBe(mode === 'live');
  ids.licenseId = activated.license.id;
  ids.instanceId = activated.instance.id;
  ids.eventId = (
    await ok(
      await fetch(`${server.url}/api/merchant/v1/stores/${storeId}/events?limit=1`, {
        headers: { authorization: `Bearer ${created.key}` },
      }),
      200,
      'events',
    )
  ).events[0].id;
  const subject = `ticket-${tag}`;
  ids.ticketId = (
    await ok(
      await post('/api/tickets', { orderId: paid.id, token: paid.token, subject, message: `message ${tag}` }),
      201,
      'ticket',
    )
  ).id;
  // A subscription of this mode (as checkout will write it; a test one runs on its own clock).
  ids.subscriptionId = (
    await insertSubscriptions(server.db.url, storeId, [
      { livemode: mode === 'live', productId: product.id, productName, customerEmail: buyer },
    ])
  )[0]!;
  if (mode === 'live') {
    // A customer of the store (the customer area's sign-in, with the code the dev mailbox holds):
    // the test mode's customer list must not show it.
    await ok(await post('/api/customer/auth/start', { storeId, email: buyer }), 204, 'customer code');
    const mailbox = await (await fetch(`${server.url}/dev/mailbox.json`)).json();
    const mail = (mailbox.emails as Array<{ to: string; text: string }>).find((m) => m.to.includes(buyer));
    const code = /\b(\d{6})\b/.exec(mail?.text ?? '')?.[1];
    await ok(await post('/api/customer/auth/verify', { storeId, email: buyer, code }), 200, 'customer verify');
    const customers = await ok(await dash(mode, 'GET', `${s}/customers`), 200, 'customers');
    expect(customers.customers.map((c: { email: string }) => c.email)).toEqual([buyer]);
  }
  return {
    mode,
    key: created.key,
    ids,
    price,
    buyer,
    secrets: [
      ...Object.values(ids),
      created.key,
      created.key.slice(0, 14),
      productName,
      ...licenseKeys,
      soldKey,
      fileName,
      couponCode,
      blocked,
      hookName,
      buyer,
      subject,
      paid.token,
      pending.token,
    ],
  };
}

// ---------------------------------------------------------------------------------------------
// Calls built from the route table

/** A body that would be valid for the route, so only the object's mode stands in the way. */
function validBody(entry: RouteEntry, objects: World): Record<string, unknown> | undefined {
  const key = `${entry.method} ${entry.path.replace(/^\/api\/(dashboard|merchant\/v1)/, '')}`;
  const table: Record<string, Record<string, unknown>> = {
    'PATCH /stores/{storeId}/orders/{orderId}': { note: 'changed across modes' },
    'POST /stores/{storeId}/orders/{orderId}/mark-delivered': { content: 'delivered across modes' },
    'PATCH /stores/{storeId}/products/{productId}': { name: 'Renamed across modes' },
    'POST /stores/{storeId}/products/{productId}/license-keys': { keys: ['PLANTED-ACROSS-MODES'] },
    'PUT /stores/{storeId}/products/{productId}/images/order': { imageIds: [objects.ids.imageId] },
    'PATCH /stores/{storeId}/coupons/{couponId}': { discountValue: 100, discountType: 'percent', maxUses: null },
    'PATCH /stores/{storeId}/tickets/{ticketId}': { status: 'closed' },
    'POST /stores/{storeId}/tickets/{ticketId}/messages': { message: 'written across modes' },
    'PATCH /stores/{storeId}/webhooks/{webhookId}': { url: 'http://127.0.0.1:9/stolen', enabled: true },
    'POST /stores/{storeId}/webhooks/{webhookId}/replay': {
      from: '2020-01-01T00:00:00Z',
      to: '2100-01-01T00:00:00Z',
    },
    'POST /stores/{storeId}/subscriptions/{subscriptionId}/cancel': { atPeriodEnd: false },
    'POST /stores/{storeId}/subscriptions/{subscriptionId}/pause': {},
    'PATCH /stores/{storeId}/subscriptions/{subscriptionId}': { quantity: 2, prorate: false },
    'POST /stores/{storeId}/subscriptions/{subscriptionId}/resume': {},
    // A live caller is refused a live subscription's clock (403); another mode's subscription is 404 first.
    'POST /stores/{storeId}/subscriptions/{subscriptionId}/advance': { to: '2100-01-01T00:00:00Z' },
    // The endpoint's own mode's event: only the endpoint's mode stands in the way.
    'POST /stores/{storeId}/webhooks/{webhookId}/resend': { eventId: objects.ids.eventId },
  };
  return table[key];
}

function idFor(entry: RouteEntry, name: string, objects: World): string {
  if (name === 'orderId' && /\/(invoice|credit-note)$/.test(entry.path)) return objects.ids.invoicedOrder!;
  if (name === 'orderId')
    return /mark-paid|cancel|payment-proof/.test(entry.path) ? objects.ids.pendingOrder! : objects.ids.orderId!;
  const value = objects.ids[name];
  if (!value) throw new Error(`no ${name} for ${entry.method} ${entry.path}`);
  return value;
}

interface Call {
  label: string;
  /** A route for test mode only (a test subscription's clock). */
  testOnly?: boolean;
  liveCaller?: boolean;
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string | FormData;
}

/** `caller`'s mode (its key, or the dashboard under its X-Svc-Mode) on `objects`' ids. */
/** A report's period: the last 300 days and the next one, around everything the worlds hold. */
const REPORT_PERIOD = `?from=${new Date(Date.now() - 300 * 86_400_000).toISOString()}&to=${new Date(Date.now() + 86_400_000).toISOString()}`;

function callOf(entry: RouteEntry, caller: World, objects: World): Call {
  // A read that needs a query (a change's preview, a report's period) gets a valid one, so only the mode stands in the way.
  const query = entry.path.endsWith('/preview-update')
    ? '?quantity=2'
    : entry.path.endsWith('/reports/tax')
      ? REPORT_PERIOD
      : '';
  const url =
    entry.path.replace(/\{(\w+)\}/g, (_, name: string) =>
      name === 'storeId' ? storeId : idFor(entry, name, objects),
    ) + query;
  const headers: Record<string, string> = { 'x-forwarded-for': clientIp(), accept: 'application/json' };
  if (entry.policy.auth.kind === 'apiKey') headers.authorization = `Bearer ${caller.key}`;
  else {
    Object.assign(headers, { cookie: seller.cookie }, modeHeader(caller.mode));
    if (entry.method !== 'GET') headers['x-csrf-token'] = seller.csrfToken;
  }
  let body: string | FormData | undefined;
  if ((entry.plain as { body?: string } | undefined)?.body === 'multipart') {
    body = new FormData();
    body.append('file', new Blob([new Uint8Array(TINY_PNG)], { type: 'image/png' }), 'planted.png');
  } else {
    const json = validBody(entry, objects);
    if (json) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(json);
    }
  }
  return {
    label: `${entry.method} ${entry.path} (${caller.mode} caller, ${objects.mode} ids)`,
    testOnly: entry.path.endsWith('/advance'),
    liveCaller: caller.mode === 'live',
    method: entry.method,
    url,
    headers,
    body,
  };
}

const ERROR_CODE_SET = new Set<string>(ERROR_CODES);

async function run(call: Call, other: World): Promise<string[]> {
  const response = await fetch(`${server.url}${call.url}`, {
    method: call.method,
    headers: call.headers,
    body: call.body,
  });
  const text = await response.text();
  const problems: string[] = [];
  // A test clock refuses every live caller before it looks anything up (403 test_key_required,
  // whatever the id): nothing of either mode is read. Every other route answers 404.
  const want =
    call.testOnly && call.liveCaller ? { status: 403, code: 'test_key_required' } : { status: 404, code: 'not_found' };
  if (response.status !== want.status) problems.push(`status ${response.status} (want ${want.status})`);
  try {
    const body = JSON.parse(text);
    if (typeof body.error !== 'string' || !ERROR_CODE_SET.has(body.code) || body.code !== want.code)
      problems.push(`not our ${want.code} body`);
  } catch {
    problems.push('body is not JSON');
  }
  const sent = `${call.url} ${typeof call.body === 'string' ? call.body : ''}`;
  const leaked = other.secrets.filter(
    (secret) => secret.length >= 6 && text.includes(secret) && !sent.includes(secret),
  );
  if (leaked.length > 0) problems.push(`leaks the other mode's ${leaked.join(', ')}`);
  return problems.length > 0
    ? [`${call.label} -> ${response.status}: ${problems.join('; ')} :: ${text.slice(0, 200)}`]
    : [];
}

const runAll = (calls: Array<[Call, World]>) => sweep(calls, ([call, other]) => run(call, other));

const objectParams = (entry: RouteEntry) => entry.params.filter((name) => name !== 'storeId');
const perModeRoutes = () =>
  STORE_ROUTES.filter(
    (entry) => objectParams(entry).length > 0 && !objectParams(entry).some((p) => p in SHARED_PARAMS),
  );

/** What a mode reads of its own objects, to compare before and after the sweep. */
async function snapshot(w: World): Promise<Record<string, unknown>> {
  const s = `/api/dashboard/stores/${storeId}`;
  const paths = [
    `${s}/products/${w.ids.productId}`,
    `${s}/products/${w.ids.productId}/license-keys`,
    `${s}/products/${w.ids.productId}/files`,
    `${s}/coupons/${w.ids.couponId}`,
    `${s}/blacklist`,
    `${s}/webhooks/${w.ids.webhookId}`,
    `${s}/webhooks/${w.ids.webhookId}/deliveries`,
    `${s}/orders/${w.ids.orderId}`,
    `${s}/orders/${w.ids.pendingOrder}`,
    `${s}/licenses/${w.ids.licenseId}`,
    `${s}/tickets/${w.ids.ticketId}`,
    `${s}/events/${w.ids.eventId}`,
    `${s}/subscriptions/${w.ids.subscriptionId}`,
  ];
  const out: Record<string, unknown> = {};
  for (const p of paths) out[p] = await ok(await dash(w.mode, 'GET', p), 200, `snapshot ${p}`);
  return out;
}

const before = {} as Record<Mode, Record<string, unknown>>;

beforeAll(async () => {
  server = await startServer({ TEST_GATEWAY_SECRET, MERCHANT_RATE_LIMIT_PER_MINUTE: '1000000' });
  seller = await registerSeller(server.url, uniqueEmail('modes'));
  storeId = (await createStoreFor(seller, 'Two modes')).id;
  worlds.live = await buildWorld('live', 10);
  worlds.test = await buildWorld('test', 7);
  before.live = await snapshot(worlds.live);
  before.test = await snapshot(worlds.test);
}, 180_000);

afterAll(() => server?.stop());

describe('test mode: a test key or test dashboard call never reaches a live object, and the other way round', () => {
  it('reads the routes from the route table: every object parameter is per mode or listed as shared', () => {
    const known = new Set([...Object.keys(worlds.live.ids), 'storeId', ...Object.keys(SHARED_PARAMS)]);
    const unknown = STORE_ROUTES.flatMap((entry) =>
      entry.params.filter((name) => !known.has(name)).map((name) => `${entry.method} ${entry.path}: ${name}`),
    );
    expect(unknown).toEqual([]);
    // The sweep covers the merchant API and the dashboard, procedures and plain routes alike.
    const swept = perModeRoutes();
    expect(swept.filter((e) => e.policy.auth.kind === 'apiKey').length).toBeGreaterThan(25);
    expect(swept.filter((e) => e.policy.auth.kind === 'session').length).toBeGreaterThan(35);
    expect(swept.some((e) => e.source === 'plain')).toBe(true);
  });

  it("reaches each mode's own objects with the same calls (control: the paths and credentials are right)", async () => {
    const reads = perModeRoutes().filter((entry) => entry.method === 'GET');
    for (const mode of ['live', 'test'] as const) {
      for (const entry of reads) {
        const call = callOf(entry, worlds[mode], worlds[mode]);
        const response = await fetch(`${server.url}${call.url}`, { headers: call.headers });
        expect(response.status, `${call.label}: ${await response.clone().text()}`).toBe(200);
      }
    }
    expect(reads.length).toBeGreaterThan(20);
  });

  it('answers every route that names an object of the other mode with 404 and nothing of it, in both directions', async () => {
    const calls: Array<[Call, World]> = [];
    for (const mode of ['live', 'test'] as const) {
      const caller = worlds[mode];
      const other = worlds[OTHER[mode]];
      for (const entry of perModeRoutes()) calls.push([callOf(entry, caller, other), other]);
    }
    const failures = await runAll(calls);
    console.info(`mode sweep: ${calls.length} calls over ${perModeRoutes().length} routes`);
    expect(failures).toEqual([]);
  }, 120_000);

  it("lists, in each mode, only that mode's objects: every list route of the table, the events API, the delivery log, licenses", async () => {
    const lists = STORE_ROUTES.filter((entry) => entry.method === 'GET' && objectParams(entry).length === 0);
    const withObjects = perModeRoutes().filter((entry) => entry.method === 'GET');
    expect(lists.map((e) => e.path)).toEqual(
      expect.arrayContaining([
        '/api/merchant/v1/stores/{storeId}/events',
        '/api/merchant/v1/stores/{storeId}/licenses',
        '/api/merchant/v1/stores/{storeId}/subscriptions',
        '/api/merchant/v1/stores/{storeId}/orders',
        '/api/dashboard/stores/{storeId}/customers',
        '/api/dashboard/stores/{storeId}/stats',
      ]),
    );
    for (const mode of ['live', 'test'] as const) {
      const own = worlds[mode];
      const other = worlds[OTHER[mode]];
      for (const entry of [...lists, ...withObjects]) {
        const call = callOf(entry, own, own);
        const response = await fetch(`${server.url}${call.url}`, { headers: call.headers });
        const text = await response.text();
        expect(response.status, `${call.label}: ${text}`).toBe(200);
        expect(
          other.secrets.filter((secret) => secret.length >= 6 && text.includes(secret)),
          call.label,
        ).toEqual([]);
      }
      // The lists do hold this mode's own objects.
      const merchant = (path: string) =>
        fetch(`${server.url}/api/merchant/v1/stores/${storeId}${path}`, {
          headers: { authorization: `Bearer ${own.key}` },
        }).then((r) => r.json());
      const orders = await merchant('/orders?limit=100');
      expect(orders.orders.map((o: { id: string }) => o.id).sort()).toEqual(
        [own.ids.orderId, own.ids.pendingOrder, own.ids.invoicedOrder].sort(),
      );
      expect(orders.orders.every((o: { livemode: boolean }) => o.livemode === (mode === 'live'))).toBe(true);
      const licenses = await merchant('/licenses');
      expect(licenses.licenses.map((l: { id: string }) => l.id)).toEqual([own.ids.licenseId]);
      const subscriptions = await merchant('/subscriptions');
      expect(subscriptions.subscriptions.map((l: { id: string }) => l.id)).toEqual([own.ids.subscriptionId]);
      const events = await merchant('/events?limit=100');
      expect(events.events.length).toBeGreaterThan(0);
      expect(events.events.every((e: { livemode: boolean }) => e.livemode === (mode === 'live'))).toBe(true);
      const deliveries = await merchant(`/webhooks/${own.ids.webhookId}/deliveries`);
      expect(deliveries.deliveries.map((d: { id: string }) => d.id)).toContain(own.ids.deliveryId);
    }
  });

  it("counts, in each mode, only that mode's orders in the Home figures", async () => {
    for (const mode of ['live', 'test'] as const) {
      const stats = await ok(await dash(mode, 'GET', `/api/dashboard/stores/${storeId}/stats`), 200, 'stats');
      // One paid order of the mode's own price (10 live, 7 test): the other mode's is not counted.
      expect(stats.today).toEqual({ revenue: worlds[mode].price, orders: 1 });
      expect(stats.last30Days).toEqual({ revenue: worlds[mode].price, orders: 1 });
    }
  });

  it('ignores X-Svc-Mode on a merchant call (the key decides) and refuses a dashboard mode that is neither live nor test', async () => {
    const live = await fetch(`${server.url}/api/merchant/v1/stores/${storeId}/orders/${worlds.live.ids.orderId}`, {
      headers: { authorization: `Bearer ${worlds.live.key}`, 'x-svc-mode': 'test' },
    });
    expect(live.status).toBe(200);
    const bad = await dash('live', 'GET', `/api/dashboard/stores/${storeId}/orders`);
    expect(bad.status).toBe(200);
    const typo = await fetch(`${server.url}/api/dashboard/stores/${storeId}/orders`, {
      headers: { cookie: seller.cookie, 'x-svc-mode': 'Test ' },
    });
    expect(typo.status).toBe(400);
    expect(await typo.json()).toMatchObject({ code: 'validation_failed', error: 'X-Svc-Mode must be live or test.' });
  });

  it('left every object of both modes as it was', async () => {
    expect(await snapshot(worlds.live)).toEqual(before.live);
    expect(await snapshot(worlds.test)).toEqual(before.test);
  });
});

describe('a test checkout end to end', () => {
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
  });
  afterAll(() => receiver?.close());

  it('takes a test product through a test order, the test gateway and a test license; its events reach the test endpoint only', async () => {
    const s = `/api/dashboard/stores/${storeId}`;
    const events = ['order.created', 'order.paid', 'license.activated'];
    for (const mode of ['live', 'test'] as const)
      await ok(
        await dash(mode, 'POST', `${s}/webhooks`, { name: `e2e ${mode}`, url: `${receiver.url}/${mode}`, events }),
        201,
        `${mode} endpoint`,
      );
    const product = await ok(
      await fetch(`${server.url}/api/merchant/v1/stores/${storeId}/products`, {
        method: 'POST',
        headers: { authorization: `Bearer ${worlds.test.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'E2E test product', price: 3, deliveryMethods: ['licenseKeys'] }),
      }),
      201,
      'test product',
    );
    expect(product.livemode).toBe(false);
    await ok(
      await fetch(`${server.url}/api/merchant/v1/stores/${storeId}/products/${product.id}/license-keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${worlds.test.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ keys: [`E2E-${randomBytes(6).toString('hex')}`] }),
      }),
      200,
      'stock',
    );
    // The buyer's side: the public checkout takes the product's mode, for the seller's side only
    // (the test key here; a browser would carry a preview token). A stranger cannot order it.
    const cart = [{ productId: product.id, quantity: 1 }];
    const stranger = await post('/api/v1/checkout', { shopId: storeId, cart, email: uniqueEmail('stranger') });
    expect(stranger.status).toBe(400);
    expect((await stranger.json()).code).toBe('product_unavailable');
    const checkout = await ok(
      await post(
        '/api/v1/checkout',
        { shopId: storeId, cart, email: uniqueEmail('e2e-buyer') },
        { authorization: `Bearer ${worlds.test.key}` },
      ),
      200,
      'checkout',
    );
    const orderId = checkout.orderId as string;
    const token = new URL(checkout.url as string).searchParams.get('token')!;
    await ok(await pay(server.url, { orderId, amount: 3 }), 200, 'test payment');
    const order = await ok(
      await fetch(`${server.url}/api/merchant/v1/stores/${storeId}/orders/${orderId}`, {
        headers: { authorization: `Bearer ${worlds.test.key}` },
      }),
      200,
      'test order',
    );
    expect(order).toMatchObject({ livemode: false, status: 'completed' });
    // The live key does not see it.
    expect(
      (
        await fetch(`${server.url}/api/merchant/v1/stores/${storeId}/orders/${orderId}`, {
          headers: { authorization: `Bearer ${worlds.live.key}` },
        })
      ).status,
    ).toBe(404);
    const key = (await ok(await fetch(`${server.url}/api/orders/${orderId}/keys?token=${token}`), 200, 'keys')).keys[0]
      .key as string;
    const activated = await ok(
      await post('/api/v1/licenses/activate', { productId: product.id, key, instanceName: 'e2e' }),
      200,
      'activate',
    );
    expect(activated.license.livemode).toBe(false);
    const validated = await ok(
      await post('/api/v1/licenses/validate', { productId: product.id, key }),
      200,
      'validate',
    );
    expect(validated).toMatchObject({ valid: true, license: { livemode: false } });

    const hits = await receiver.waitFor(3, { where: (hit) => hit.path === '/test', timeoutMs: 30_000 });
    expect(hits.map((hit) => hit.body?.event).sort()).toEqual(['license.activated', 'order.created', 'order.paid']);
    expect(hits.every((hit) => (hit.body as { livemode?: boolean }).livemode === false)).toBe(true);
    // A live order afterwards reaches the live endpoint; once it has, the live endpoint has
    // received that order's events and nothing of the test checkout.
    const liveOrder = await ok(
      await post('/api/orders/create', {
        storeId,
        cart: [{ productId: worlds.live.ids.productId, quantity: 1 }],
        email: uniqueEmail('live-buyer'),
      }),
      201,
      'live order',
    );
    await receiver.waitFor(1, { where: (hit) => hit.path === '/live', timeoutMs: 30_000 });
    const live = receiver.received.filter((hit) => hit.path === '/live');
    expect(live.map((hit) => [hit.body?.event, (hit.body?.data as { order?: { id: string } }).order?.id])).toEqual([
      ['order.created', liveOrder.order.id],
    ]);
    expect(live[0]!.rawBody).not.toContain(orderId);
  }, 60_000);
});
