/**
 * Black-box: deleting a store's test data (issue 31 item 6, docs/architecture.md, Test mode) on a started server. A
 * store holds 100,000 test orders with their lines, events and webhook deliveries (seeded in SQL
 * with generate_series), test customers and license keys, and live products, orders, events,
 * deliveries, customers and licenses beside them; another store has test data of its own.
 *
 * A test key's DELETE answers 202 with the job; the server's background job deletes in batches.
 * While it runs, 20 live checkouts (paid through the test gateway) all succeed. After it: the job
 * says `succeeded` with its counts, no test row of the store is left, the test key lists nothing,
 * and a `pg_dump --data-only` of the database holds every live row of before byte for byte: each
 * COPY line of a table with `livemode` whose column is `t` (located from the COPY header), and
 * every line of the store's own tables (`store`, `store_member`) and of the order children
 * without the column (`payment`, `feedback`); the only new lines are the live checkouts' rows.
 * Another store's test rows are untouched. A live key is 403 `test_key_required`; another
 * store's job and an unknown job are 404.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buy, TEST_GATEWAY_SECRET } from './support/payments.js';
import { clientIp, createStoreFor, dashboard, registerSeller, type Seller } from './support/seller.js';
import { startServer } from './support/server.js';
import { PER_MODE_TABLES as PER_MODE } from './support/modes.js';

const run = promisify(execFile);

const TEST_ORDERS = 100_000;
const LIVE_ORDERS = 2_000;
const LIVE_CHECKOUTS = 20;

let server: Awaited<ReturnType<typeof startServer>>;
let db: pg.Client;
let seller: Seller;
let shop: { id: string };
let other: { id: string };
const keys = {} as Record<'test' | 'live' | 'otherTest', string>;

async function createKey(storeId: string, mode: 'live' | 'test'): Promise<string> {
  const response = await dashboard(seller, 'POST', '/api/dashboard/api-keys', {
    name: `${mode} key`,
    mode,
    scopes: ['product:read', 'product:write', 'order:read', 'webhook:read', 'webhook:write', 'event:read'],
    storeIds: [storeId],
  });
  expect(response.status, await response.clone().text()).toBe(201);
  const { key } = (await response.json()) as { key: string };
  expect(key.startsWith(`sk_${mode}_`)).toBe(true);
  return key;
}

function merchant(key: string, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${server.url}/api/merchant/v1${path}`, {
    method,
    headers: {
      accept: 'application/json',
      authorization: `Bearer ${key}`,
      'x-forwarded-for': clientIp(),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function created(response: Promise<Response>): Promise<{ id: string }> {
  const answer = await response;
  expect(answer.status, await answer.clone().text()).toBe(201);
  return (await answer.json()) as { id: string };
}

/** Seeds `count` orders of one mode with a line, an event and a delivery each, in four statements. */
async function seedOrders(storeId: string, webhookId: string, livemode: boolean, count: number): Promise<void> {
  const tag = `${randomBytes(4).toString('hex')}${livemode ? 'l' : 't'}`;
  const status = 'completed';
  const id = (kind: string) => `'${tag}${kind}' || lpad(g::text, 12, '0')`;
  await db.query(
    `insert into "order" (id, store_id, livemode, status, product_name, price_minor, paid_minor, currency, customer_email, created_at, updated_at)
     select ${id('o')}, $1, $2, $3, 'Seeded', 1000, 1000, 'USD', 'buyer' || g || '@example.test',
            now() - g * interval '1 second', now()
     from generate_series(1, $4) g`,
    [storeId, livemode, status, count],
  );
  await db.query(
    `insert into order_line (id, order_id, livemode, product_name, quantity, unit_price_minor, position)
     select ${id('l')}, ${id('o')}, $1, 'Seeded', 1, 1000, 0 from generate_series(1, $2) g`,
    [livemode, count],
  );
  await db.query(
    `insert into event (id, store_id, livemode, type, payload, created_at, dispatched_at)
     select 'evt_' || ${id('e')}, $1, $2, 'order.created', jsonb_build_object('order', jsonb_build_object('id', ${id('o')})), now(), now()
     from generate_series(1, $3) g`,
    [storeId, livemode, count],
  );
  await db.query(
    `insert into webhook_delivery (id, webhook_id, store_id, livemode, event_id, event, attempt, status, due_at, response_code, created_at, updated_at)
     select ${id('d')}, $1, $2, $3, 'evt_' || ${id('e')}, 'order.created', 1, 'success', now(), 200, now(), now()
     from generate_series(1, $4) g`,
    [webhookId, storeId, livemode, count],
  );
}

/** Customers and license keys (half of them with an instance) of one mode. */
async function seedCustomersAndKeys(storeId: string, productId: string, livemode: boolean, count: number) {
  const tag = `${randomBytes(4).toString('hex')}${livemode ? 'l' : 't'}`;
  await db.query(
    `insert into customer (id, store_id, livemode, email, created_at)
     select '${tag}c' || lpad(g::text, 12, '0'), $1, $2, 'customer' || g || '@example.test', now()
     from generate_series(1, $3) g`,
    [storeId, livemode, count],
  );
  await db.query(
    `insert into license_key (id, product_id, livemode, value_enc, value_hash, status, created_at)
     select '${tag}k' || lpad(g::text, 12, '0'), $1, $2, 'sealed', md5('${tag}' || g) || md5(g || '${tag}'), 'available', now()
     from generate_series(1, $3) g`,
    [productId, livemode, count],
  );
  await db.query(
    `insert into license_instance (id, license_key_id, livemode, name, created_at)
     select '${tag}i' || lpad(g::text, 12, '0'), '${tag}k' || lpad(g::text, 12, '0'), $1, 'machine', now()
     from generate_series(1, $2 / 2) g`,
    [livemode, count],
  );
}

/** The store's rows of one mode, per table (children through their parents). */
async function countRows(storeId: string, livemode: boolean): Promise<Record<string, number>> {
  const where: Record<string, string> = {
    product_plan: `product_id in (select id from product where store_id = $1)`,
    license_key: `product_id in (select id from product where store_id = $1)`,
    license_instance: `license_key_id in (select k.id from license_key k join product p on p.id = k.product_id where p.store_id = $1)`,
    order_line: `order_id in (select id from "order" where store_id = $1)`,
    ticket_message: `ticket_id in (select id from ticket where store_id = $1)`,
    test_gateway_charge: `method_id in (select id from saved_payment_method where store_id = $1)`,
  };
  const out: Record<string, number> = {};
  for (const table of PER_MODE) {
    const { rows } = await db.query<{ n: string }>(
      `select count(*) as n from "${table}" where ${where[table] ?? 'store_id = $1'} and livemode = $2`,
      [storeId, livemode],
    );
    out[table] = Number(rows[0]!.n);
  }
  return out;
}

/** Tables without `livemode` whose every line is compared: the store's own, and the orders' children. */
const WHOLE_TABLES = new Set(['store', 'store_member', 'payment', 'feedback']);

/**
 * The live lines of a `pg_dump --data-only`: each COPY line of a table with `livemode` whose
 * column (found by its position in the COPY header) is `t`, and every line of WHOLE_TABLES.
 * Also the test lines of `storeId` (any table with the column whose line names it), to check
 * another store's test data.
 */
async function dump(storeId: string): Promise<{ live: string[]; testOf: string[] }> {
  const { stdout } = await run('pg_dump', ['--data-only', '--no-owner', `--dbname=${server.db.url}`], {
    maxBuffer: 1024 * 1024 * 1024,
  });
  const live: string[] = [];
  const testOf: string[] = [];
  let table: string | undefined;
  let modeColumn = -1;
  for (const line of stdout.split('\n')) {
    if (table === undefined) {
      const copy = /^COPY public\.("?)([a-z_]+)\1 \((.*)\) FROM stdin;$/.exec(line);
      if (copy) {
        table = copy[2]!;
        modeColumn = copy[3]!.split(', ').indexOf('livemode');
      }
      continue;
    }
    if (line === '\\.') {
      table = undefined;
      continue;
    }
    if (modeColumn >= 0) {
      const mode = line.split('\t')[modeColumn];
      if (mode === 't') live.push(`${table}\t${line}`);
      else if (mode === 'f' && line.includes(storeId)) testOf.push(`${table}\t${line}`);
    } else if (WHOLE_TABLES.has(table)) live.push(`${table}\t${line}`);
  }
  return { live: live.sort(), testOf: testOf.sort() };
}

/** A live order of `productId`, bought and paid. */
async function checkout(productId: string): Promise<{ orderId: string; email: string }> {
  const email = `live-${randomBytes(4).toString('hex')}@example.test`;
  const { id: orderId, price } = await buy(server.url, { storeId: shop.id, productId, email, ip: clientIp() });
  expect(price).toBe(5);
  return { orderId, email };
}

interface Job {
  id: string;
  storeId: string;
  status: string;
  deleted: Record<string, number>;
  error: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

async function job(key: string, storeId: string, jobId: string): Promise<Job> {
  const response = await merchant(key, 'GET', `/stores/${storeId}/test-data/${jobId}`);
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as Job;
}

/** Polls the job until `done` says so (a deadline, no sleeping a guessed time). */
async function until(key: string, jobId: string, done: (job: Job) => boolean, ms = 150_000): Promise<Job> {
  const deadline = Date.now() + ms;
  for (;;) {
    const seen = await job(key, shop.id, jobId);
    if (done(seen)) return seen;
    if (Date.now() > deadline) throw new Error(`job still ${seen.status} after ${ms} ms`);
    // Every 250 ms: the key's rate limit is the merchant's, and a slow machine's wipe of 100,000
    // orders at 20 polls a second used it up before the next test's calls (429).
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

beforeAll(async () => {
  server = await startServer({ TEST_GATEWAY_SECRET });
  db = new pg.Client({ connectionString: server.db.url });
  await db.connect();
  seller = await registerSeller(server.url);
  shop = await createStoreFor(seller, 'Wiped Shop');
  other = await createStoreFor(seller, 'Other Shop');
  keys.test = await createKey(shop.id, 'test');
  keys.live = await createKey(shop.id, 'live');
  keys.otherTest = await createKey(other.id, 'test');
}, 60_000);
afterAll(async () => {
  await db?.end();
  await server?.stop();
});

describe('deleting a store’s test data', () => {
  it('deletes 100,000 test orders with their events and deliveries in the background; live rows stay byte for byte, live checkouts during it all succeed', async () => {
    const product = { deliveryMethods: ['manualDelivery'], price: 5 };
    const liveProduct = await created(
      merchant(keys.live, 'POST', `/stores/${shop.id}/products`, { ...product, name: 'Live one' }),
    );
    const testProduct = await created(
      merchant(keys.test, 'POST', `/stores/${shop.id}/products`, { ...product, name: 'Test one' }),
    );
    const otherTestProduct = await created(
      merchant(keys.otherTest, 'POST', `/stores/${other.id}/products`, { ...product, name: 'Other test' }),
    );
    // Endpoints for an event nothing here sends: the live one is never written to during the test.
    const hook = { url: 'http://127.0.0.1:9/hook', events: ['license.disabled'] };
    const liveHook = await created(merchant(keys.live, 'POST', `/stores/${shop.id}/webhooks`, { ...hook, name: 'l' }));
    const testHook = await created(merchant(keys.test, 'POST', `/stores/${shop.id}/webhooks`, { ...hook, name: 't' }));
    const otherHook = await created(
      merchant(keys.otherTest, 'POST', `/stores/${other.id}/webhooks`, { ...hook, name: 'o' }),
    );

    await seedOrders(shop.id, testHook.id, false, TEST_ORDERS);
    await seedOrders(shop.id, liveHook.id, true, LIVE_ORDERS);
    await seedOrders(other.id, otherHook.id, false, 100);
    await seedCustomersAndKeys(shop.id, testProduct.id, false, 500);
    await seedCustomersAndKeys(shop.id, liveProduct.id, true, 200);
    await seedCustomersAndKeys(other.id, otherTestProduct.id, false, 20);
    await db.query('analyze');
    // The products' own events are fanned out (dispatched_at written) before the first dump.
    const deadline = Date.now() + 30_000;
    while (Number((await db.query(`select count(*) as n from event where dispatched_at is null`)).rows[0].n) > 0) {
      if (Date.now() > deadline) throw new Error('events still undispatched');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }

    const testBefore = await countRows(shop.id, false);
    expect(testBefore.order).toBe(TEST_ORDERS);
    expect(testBefore.event).toBe(TEST_ORDERS + 1); // and the product's
    expect(testBefore.webhook_delivery).toBe(TEST_ORDERS);
    const before = await dump(other.id);
    expect(before.live.length).toBeGreaterThan(4 * LIVE_ORDERS);
    expect(before.testOf.length).toBeGreaterThan(300);

    // A live key may not: 403 in our error body, saying a test key is needed.
    const refused = await merchant(keys.live, 'DELETE', `/stores/${shop.id}/test-data`);
    expect(refused.status).toBe(403);
    const refusal = (await refused.json()) as { code: string; error: string };
    expect(refusal.code).toBe('test_key_required');
    expect(refusal.error).toMatch(/test.*key/i);

    const accepted = await merchant(keys.test, 'DELETE', `/stores/${shop.id}/test-data`);
    expect(accepted.status, await accepted.clone().text()).toBe(202);
    const queued = (await accepted.json()) as Job;
    expect(queued).toMatchObject({ storeId: shop.id, error: null, finishedAt: null });
    expect(['queued', 'running']).toContain(queued.status);
    // Asked again (merchant or dashboard) while it waits or runs: the same job.
    const again = await merchant(keys.test, 'DELETE', `/stores/${shop.id}/test-data`);
    expect(again.status).toBe(202);
    expect(((await again.json()) as Job).id).toBe(queued.id);
    const twin = await dashboard(seller, 'DELETE', `/api/dashboard/stores/${shop.id}/test-data`);
    expect(twin.status).toBe(202);
    expect(((await twin.json()) as Job).id).toBe(queued.id);

    // Live checkouts while the wipe runs: every one is taken and paid.
    const started = await until(keys.test, queued.id, (j) => j.status !== 'queued');
    expect(started.status).toBe('running');
    const checkouts = await Promise.all(Array.from({ length: LIVE_CHECKOUTS }, () => checkout(liveProduct.id)));
    // They finished before the wipe did: they ran beside it, not after it.
    const during = await job(keys.test, shop.id, queued.id);
    expect(during.status).toBe('running');
    const done = await until(keys.test, queued.id, (j) => j.status === 'succeeded' || j.status === 'failed');
    expect([done.status, done.error]).toEqual(['succeeded', null]);
    expect(done.startedAt).not.toBeNull();
    expect(Date.parse(done.finishedAt!)).toBeGreaterThanOrEqual(Date.parse(done.startedAt!));
    // The counts are what there was.
    for (const table of PER_MODE) expect(done.deleted[table] ?? 0, table).toBe(testBefore[table]);
    console.log(
      `wipe of ${TEST_ORDERS} test orders: ${Date.parse(done.finishedAt!) - Date.parse(done.startedAt!)} ms, ${LIVE_CHECKOUTS} live checkouts beside it`,
    );

    const statuses = await db.query<{ status: string }>(`select status from "order" where id = any($1)`, [
      checkouts.map((c) => c.orderId),
    ]);
    expect(statuses.rows).toHaveLength(LIVE_CHECKOUTS);
    for (const row of statuses.rows) expect(['paid', 'processing', 'completed']).toContain(row.status);

    // No test row of the store is left; the live ones and the other store's test ones are as they were.
    for (const [table, n] of Object.entries(await countRows(shop.id, false))) expect(n, table).toBe(0);
    const after = await dump(other.id);
    expect(after.testOf).toEqual(before.testOf);
    const remaining = new Map<string, number>();
    for (const line of after.live) remaining.set(line, (remaining.get(line) ?? 0) + 1);
    const missing: string[] = [];
    for (const line of before.live) {
      const n = remaining.get(line) ?? 0;
      if (n === 0) missing.push(line);
      else remaining.set(line, n - 1);
    }
    expect(missing).toEqual([]);
    // What is new is the checkouts' own rows (their orders, lines, payments, events, customers).
    const markers = checkouts.flatMap((c) => [c.orderId, c.email]);
    const unexplained = [...remaining.entries()]
      .filter(([, n]) => n > 0)
      .map(([line]) => line)
      .filter((line) => !markers.some((marker) => line.includes(marker)));
    expect(unexplained).toEqual([]);

    // The test key lists nothing.
    for (const path of ['orders', 'products', 'webhooks', 'events']) {
      const listed = await merchant(keys.test, 'GET', `/stores/${shop.id}/${path}`);
      expect(listed.status, path).toBe(200);
      const body = (await listed.json()) as Record<string, unknown>;
      const items = Object.values(body).find(Array.isArray) as unknown[];
      expect(items, path).toEqual([]);
    }
    // The dashboard's twin reads the same job.
    const seen = await dashboard(seller, 'GET', `/api/dashboard/stores/${shop.id}/test-data/${queued.id}`);
    expect(seen.status).toBe(200);
    expect(await seen.json()).toEqual(done);
  }, 240_000);

  it('answers 403 to a live key, 404 for another store’s job and for an unknown one', async () => {
    const accepted = await merchant(keys.otherTest, 'DELETE', `/stores/${other.id}/test-data`);
    expect(accepted.status).toBe(202);
    const otherJob = (await accepted.json()) as Job;

    const live = await merchant(keys.live, 'GET', `/stores/${shop.id}/test-data/${otherJob.id}`);
    expect(live.status).toBe(403);
    expect(((await live.json()) as { code: string }).code).toBe('test_key_required');

    // Another store's job through this store's path: 404, as an unknown one.
    for (const jobId of [otherJob.id, 'nosuchjob0000000000000000']) {
      const response = await merchant(keys.test, 'GET', `/stores/${shop.id}/test-data/${jobId}`);
      expect(response.status).toBe(404);
      expect(((await response.json()) as { code: string }).code).toBe('not_found');
    }
    // A test key of this store cannot reach the other store at all.
    const elsewhere = await merchant(keys.test, 'GET', `/stores/${other.id}/test-data/${otherJob.id}`);
    expect(elsewhere.status).toBe(403);
  });
});
