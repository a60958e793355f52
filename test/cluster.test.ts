/**
 * Past one process, black-box: two `svc serve` and two `svc worker` processes (the built server)
 * on one PostgreSQL database and one Redis, requests spread over both APIs. A rate limit is exact
 * across them, an Idempotency-Key replays whichever process answers, concurrent settlements
 * through both sell no key twice, and every order.created reaches each subscribed endpoint once
 * per attempt although four dispatchers (two in the APIs, two workers) claim deliveries.
 * bench/cluster.mjs runs the same shape at scale and measures it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveKey, seal } from '../apps/server/src/lib/crypto.js';
import { newId } from '../apps/server/src/lib/ids.js';
import { newWebhookSecret } from '../apps/server/src/modules/webhooks/signing.js';
import { createProduct, importKeys } from './support/catalog.js';
import { freshDatabase } from './support/databases.js';
import { TEST_REDIS_URL } from './support/env.js';
import { pay, TEST_GATEWAY_SECRET } from './support/payments.js';
import { clientIp, createKeyFor, createStoreFor, dashboard, registerSeller, type Seller } from './support/seller.js';
import { spawnServer, spawnWorker, type RunningServer, type RunningWorker } from './support/server.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

const MERCHANT_LIMIT = 20;
const encryptionKey = randomBytes(32);
let db: Awaited<ReturnType<typeof freshDatabase>>;
let sql: pg.Client;
const apis: RunningServer[] = [];
let workers: RunningWorker[] = [];
let receiver: WebhookReceiver;
let seller: Seller;
let storeId: string;
const secrets = new Map<string, string>();

/** The API that answers the i-th request: they take turns. */
const api = (i: number) => apis[i % apis.length]!.url;

beforeAll(async () => {
  db = await freshDatabase();
  const env = {
    DATABASE_URL: db.url,
    REDIS_URL: TEST_REDIS_URL,
    // One deployment: the processes share the Redis prefix (rate-limit windows, wake-ups).
    REDIS_KEY_PREFIX: `svc-test:${randomBytes(6).toString('hex')}:`,
    TRUST_PROXY: '127.0.0.1',
    DATA_DIR: mkdtempSync(path.join(tmpdir(), 'svc-cluster-')),
    APP_ENCRYPTION_KEY: encryptionKey.toString('base64'),
    MERCHANT_RATE_LIMIT_PER_MINUTE: String(MERCHANT_LIMIT),
    WEBHOOK_POLL_MS: '200',
    TEST_GATEWAY_SECRET,
  };
  // The first applies the migrations; the others start on the migrated database.
  apis.push(await spawnServer(env));
  apis.push(await spawnServer(env));
  workers = [spawnWorker(env), spawnWorker(env)];
  sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  receiver = await startWebhookReceiver({ secretFor: (p) => secrets.get(p) });

  seller = await registerSeller(api(0));
  storeId = (await createStoreFor(seller)).id;
  for (const endpoint of ['/a', '/b']) {
    const secret = newWebhookSecret();
    secrets.set(endpoint, secret);
    await sql.query(
      `insert into webhook (id, store_id, name, url, secret_enc, secret_prefix, events, enabled, failure_count, created_at, updated_at)
       values ($1, $2, $3, $4, $5, $6, $7, true, 0, now(), now())`,
      [
        newId(),
        storeId,
        `receiver ${endpoint}`,
        `${receiver.url}${endpoint}`,
        seal(deriveKey(encryptionKey, 'webhook-secret'), secret),
        secret.slice(0, 12),
        ['order.created'],
      ],
    );
  }
}, 120_000);

afterAll(async () => {
  for (const child of [...apis, ...workers])
    if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill('SIGKILL');
  await receiver?.close();
  await sql?.end();
  await db?.drop();
});

function checkout(base: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return fetch(`${base}/api/v1/checkout`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp(), ...headers },
    body: JSON.stringify(body),
  });
}

describe('two API processes and two workers on one database and one Redis', () => {
  it('keeps a merchant key to its budget exactly, whichever process answers', async () => {
    const { key } = await createKeyFor(seller, { scopes: ['order:read'], storeIds: [storeId] });
    const remaining: string[] = [];
    for (let i = 0; i < MERCHANT_LIMIT; i++) {
      const response = await fetch(`${api(i)}/api/merchant/v1/stores/${storeId}/orders`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(response.status, `request ${i + 1}`).toBe(200);
      remaining.push(response.headers.get('x-ratelimit-remaining')!);
    }
    // One window: the budget counts down across both processes.
    expect(remaining).toEqual(Array.from({ length: MERCHANT_LIMIT }, (_, i) => String(MERCHANT_LIMIT - 1 - i)));
    for (const server of apis) {
      const refused = await fetch(`${server.url}/api/merchant/v1/stores/${storeId}/orders`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(refused.status).toBe(429);
      expect((await refused.json()).code).toBe('rate_limited');
    }
  });

  it('keeps a client address to a route budget exactly, whichever process answers', async () => {
    const ip = clientIp();
    const activate = (base: string) =>
      fetch(`${base}/api/v1/licenses/activate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
        body: JSON.stringify({ productId: 'nosuchproduct000000000000', key: 'NOPE', instanceName: 'x' }),
      });
    // licenses.activate: 60 per minute and address; an unknown product still spends it.
    for (let i = 0; i < 60; i++) expect((await activate(api(i))).status, `request ${i + 1}`).toBe(404);
    for (const server of apis) expect((await activate(server.url)).status).toBe(429);
  });

  it('keeps an account to its sign-in budget exactly, whichever process answers and from whichever address', async () => {
    const account = await registerSeller(api(1));
    const login = (i: number, password: string) =>
      fetch(`${api(i)}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp() },
        body: JSON.stringify({ email: account.email, password }),
      });
    for (let i = 0; i < 10; i++) {
      const guess = await login(i, `guess ${i}`);
      expect(guess.status, `guess ${i + 1}`).toBe(401);
      expect((await guess.json()).code, `guess ${i + 1}`).toBe('unauthorized');
    }
    // Past the budget, on either process, the right password alone asks for the e-mailed code.
    for (let i = 0; i < apis.length; i++) {
      const refused = await login(i, account.password);
      expect(refused.status).toBe(401);
      expect((await refused.json()).code).toBe('sign_in_code_required');
    }
  });

  it('replays an Idempotency-Key on the other process and creates one order', async () => {
    const product = await createProduct(seller, storeId, {
      name: 'Guide',
      price: 4,
      deliveryMethods: ['manualDelivery'],
    });
    const body = { shopId: storeId, cart: [{ productId: product.id, quantity: 1 }], email: 'twice@example.test' };
    const key = `cluster-${randomBytes(8).toString('hex')}`;
    const first = await checkout(api(0), body, { 'idempotency-key': key });
    expect(first.status).toBe(200);
    const firstBody = await first.text();
    const second = await checkout(api(1), body, { 'idempotency-key': key });
    expect(second.status).toBe(200);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await second.text()).toBe(firstBody);
    const orders = await sql.query(
      `select o.id from "order" o join order_line l on l.order_id = o.id where l.product_id = $1`,
      [product.id],
    );
    expect(orders.rows.map((row) => row.id)).toEqual([JSON.parse(firstBody).orderId]);
  });

  it('sells no key twice: 100 orders paid at once through both processes against 50 keys', async () => {
    const product = await createProduct(seller, storeId, { name: 'Race', price: 1, deliveryMethods: ['licenseKeys'] });
    await importKeys(
      seller,
      storeId,
      product.id,
      Array.from({ length: 50 }, (_, i) => `CL-${i}-${randomBytes(4).toString('hex')}`),
    );
    const ids = Array.from(
      { length: 100 },
      (_, i) => `clu${String(i).padStart(4, '0')}${randomBytes(6).toString('hex')}`,
    );
    // Pending orders straight into the database (checkout is not what is raced here).
    const values = ids.map((_, i) => `($${i + 3})`).join(', ');
    await sql.query(
      `with o as (insert into "order" (id, store_id, status, product_name, price_minor, currency, customer_email, created_at, updated_at)
         select v.id, $1, 'pending', 'Race', 100, 'USD', 'race@example.test', now(), now() from (values ${values}) v(id) returning id)
       insert into order_line (id, order_id, product_id, product_name, quantity, unit_price_minor)
       select 'l' || substr(o.id, 2), o.id, $2, 'Race', 1, 100 from o`,
      [storeId, product.id, ...ids],
    );
    const outcomes = await Promise.all(
      ids.map(async (orderId, i) => {
        const response = await pay(api(i), { orderId, amount: 1 });
        const text = await response.text();
        return response.status === 200
          ? (JSON.parse(text) as { outcome: string }).outcome
          : `${response.status} ${text}`;
      }),
    );
    expect(outcomes.filter((outcome) => outcome !== 'settled')).toEqual([]);
    const { rows } = await sql.query(
      `select (select count(*)::int from license_key where product_id = $1 and status = 'assigned') as assigned,
              (select count(distinct order_id)::int from license_key where product_id = $1 and status = 'assigned') as orders_with_keys,
              (select count(*)::int from "order" where id = any($2) and status = 'completed') as completed,
              (select count(*)::int from "order" where id = any($2) and status = 'processing') as processing,
              (select count(*)::int from payment where order_id = any($2)) as payments,
              (select count(*)::int from (select order_id from license_key where product_id = $1 and order_id is not null group by order_id having count(*) > 1) d) as doubled`,
      [product.id, ids],
    );
    expect(rows[0]).toEqual({
      assigned: 50,
      orders_with_keys: 50,
      completed: 50,
      processing: 50,
      payments: 100,
      doubled: 0,
    });
  });

  it('numbers 200 taxed orders paid at once through both processes INV-<year>-1 to -200, no gap, no repeat', async () => {
    // A store of its own, with tax on: Germany's 19 % added on top.
    const taxStore = (await createStoreFor(seller, 'Taxed')).id;
    const patched = await dashboard(seller, 'PATCH', `/api/dashboard/stores/${taxStore}`, {
      settings: {
        tax: {
          behavior: 'exclusive',
          originCountry: 'DE',
          registrations: ['DE'],
          sellerName: 'Beispiel GmbH',
          sellerAddress: 'Hauptstraße 1, 10115 Berlin',
          sellerTaxId: 'DE136695976',
        },
      },
    });
    expect(patched.status, await patched.clone().text()).toBe(200);
    const product = await createProduct(seller, taxStore, {
      name: 'Invoice',
      price: 10,
      deliveryMethods: ['manualDelivery'],
    });
    const orderIds = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const response = await checkout(api(i), {
          shopId: taxStore,
          cart: [{ productId: product.id, quantity: 1 }],
          email: `inv${i}@example.test`,
          country: 'DE',
        });
        expect(response.status, await response.clone().text()).toBe(200);
        return ((await response.json()) as { orderId: string }).orderId;
      }),
    );
    // Paid at once, each through the other process than the one that placed it: 10.00 + 19 %.
    const outcomes = await Promise.all(
      orderIds.map(async (orderId, i) => {
        const response = await pay(api(i + 1), { orderId, amount: 11.9 });
        const text = await response.text();
        return response.status === 200
          ? (JSON.parse(text) as { outcome: string }).outcome
          : `${response.status} ${text}`;
      }),
    );
    expect(outcomes.filter((outcome) => outcome !== 'settled')).toEqual([]);
    const { rows } = await sql.query<{ invoice_number: string; paid_at: Date }>(
      'select invoice_number, paid_at from "order" where id = any($1)',
      [orderIds],
    );
    const year = new Date().getUTCFullYear();
    expect(new Set(rows.map((row) => row.paid_at.getUTCFullYear()))).toEqual(new Set([year]));
    const numbers = rows.map((row) => Number(row.invoice_number.replace(`INV-${year}-`, ''))).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
  });

  it('delivers every order.created to each endpoint once per attempt, with four dispatchers', async () => {
    const product = await createProduct(seller, storeId, {
      name: 'Notes',
      price: 2,
      deliveryMethods: ['manualDelivery'],
    });
    const placed = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const response = await checkout(api(i), {
          shopId: storeId,
          cart: [{ productId: product.id, quantity: 1 }],
          email: `buyer${i}@example.test`,
        });
        expect(response.status).toBe(200);
        return (await response.json()).orderId as string;
      }),
    );
    const { rows: events } = await sql.query<{ id: string; order_id: string }>(
      `select id, payload->'order'->>'id' as order_id from event where store_id = $1 and type = 'order.created'`,
      [storeId],
    );
    // One event per order placed here, none twice (and the earlier checkouts' own).
    const perOrder = events.filter((event) => placed.includes(event.order_id)).map((event) => event.order_id);
    expect(perOrder.sort()).toEqual([...placed].sort());
    const settledDeliveries = async () =>
      (
        await sql.query(
          `select count(*)::int as n from webhook_delivery d join event e on e.id = d.event_id where e.store_id = $1 and d.status = 'success'`,
          [storeId],
        )
      ).rows[0].n;
    await expect.poll(settledDeliveries, { timeout: 30_000, interval: 100 }).toBe(2 * events.length);

    // Stopped, every process has finished what it was sending: what the receiver has is all there is.
    const codes = await Promise.all([...apis, ...workers].map((child) => child.stop()));
    expect(codes).toEqual([0, 0, 0, 0]);
    const hits = receiver.received.map((hit) => `${hit.path} ${hit.eventId}`).sort();
    expect(hits).toEqual(events.flatMap((event) => ['/a', '/b'].map((endpoint) => `${endpoint} ${event.id}`)).sort());
    expect(receiver.received.every((hit) => hit.serviceSignatureValid && hit.standardSignatureValid)).toBe(true);
    const { rows: attempts } = await sql.query<{ id: string; attempt: number }>(
      `select d.id, d.attempt from webhook_delivery d join event e on e.id = d.event_id where e.store_id = $1`,
      [storeId],
    );
    // One attempt per endpoint and event (each answered 2xx the first time), each sent exactly once.
    expect(attempts).toHaveLength(2 * events.length);
    expect(attempts.every((row) => row.attempt === 1)).toBe(true);
    expect(receiver.received.map((hit) => hit.deliveryId).sort()).toEqual(attempts.map((row) => row.id).sort());
    const ordersSent = new Set(
      receiver.received.map((hit) => (hit.body?.data.order as { id: string } | undefined)?.id),
    );
    for (const orderId of placed) expect(ordersSent.has(orderId), orderId).toBe(true);
  });
});
