/**
 * Read replicas, black-box: the built server on a private primary and its streaming replica
 * (DATABASE_REPLICA_URLS). With the replica's WAL replay paused, what was just written is there
 * through the primary at once (the order, the product and the license by id, read-after-write),
 * while the listings (orders, products, events, licenses) still answer the replica's older page; once replay resumes
 * they catch up. Which server answered is told by what each can know.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createProduct, importKeys } from './support/catalog.js';
import { TEST_REDIS_URL } from './support/env.js';
import { buy, TEST_GATEWAY_SECRET } from './support/payments.js';
import { postgresBinaries, startReplicatedPostgres, type ReplicatedPostgres } from './support/replicated-postgres.js';
import { clientIp, createKeyFor, createStoreFor, registerSeller, type Seller } from './support/seller.js';
import { spawnServer, type RunningServer } from './support/server.js';

const bin = postgresBinaries();
let cluster: ReplicatedPostgres;
let server: RunningServer;
let seller: Seller;
let storeId: string;
let key: string;

beforeAll(async () => {
  if (!bin)
    throw new Error(
      'the PostgreSQL server binaries (initdb, postgres, pg_basebackup) are not installed under /usr/lib/postgresql',
    );
  cluster = await startReplicatedPostgres(bin);
  server = await spawnServer({
    DATABASE_URL: cluster.primaryUrl,
    DATABASE_REPLICA_URLS: cluster.replicaUrl,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: `svc-test:${randomBytes(6).toString('hex')}:`,
    TRUST_PROXY: '127.0.0.1',
    DATA_DIR: mkdtempSync(path.join(tmpdir(), 'svc-replica-data-')),
    APP_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    TEST_GATEWAY_SECRET,
  });
  seller = await registerSeller(server.url);
  storeId = (await createStoreFor(seller)).id;
  key = (
    await createKeyFor(seller, {
      scopes: ['order:read', 'product:read', 'event:read', 'license:read'],
      storeIds: [storeId],
    })
  ).key;
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await cluster?.destroy();
});

async function merchant<T>(pathname: string): Promise<{ status: number; body: T }> {
  const response = await fetch(`${server.url}/api/merchant/v1/stores/${storeId}${pathname}`, {
    headers: { authorization: `Bearer ${key}` },
  });
  return { status: response.status, body: (await response.json()) as T };
}

async function checkout(productId: string): Promise<string> {
  const response = await fetch(`${server.url}/api/v1/checkout`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp() },
    body: JSON.stringify({ shopId: storeId, cart: [{ productId, quantity: 1 }], email: 'buyer@example.test' }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { orderId: string }).orderId;
}

/** A license sold through checkout and the test gateway: its order, and its id read from the primary. */
async function sellLicense(productId: string): Promise<{ orderId: string; licenseId: string }> {
  const { id: orderId } = await buy(server.url, { storeId, productId, email: 'buyer@example.test' });
  const client = new pg.Client({ connectionString: cluster.primaryUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string }>('select id from license_key where order_id = $1', [orderId]);
    expect(rows).toHaveLength(1);
    return { orderId, licenseId: rows[0]!.id };
  } finally {
    await client.end();
  }
}

const listedLicenses = async () =>
  (await merchant<{ licenses: Array<{ id: string }> }>('/licenses')).body.licenses.map((l) => l.id).sort();
const listedOrders = async () =>
  (await merchant<{ orders: Array<{ id: string }> }>('/orders')).body.orders.map((o) => o.id).sort();
const listedProducts = async () =>
  (await merchant<{ products: Array<{ id: string }> }>('/products')).body.products.map((p) => p.id).sort();
/** The orders of the order.created events listed. */
const listedEvents = async () =>
  (await merchant<{ events: Array<{ event: string; data: { order?: { id: string } } }> }>('/events')).body.events
    .filter((e) => e.event === 'order.created')
    .map((e) => e.data.order?.id)
    .sort();

describe('listings on a read replica', () => {
  it('serves the listings from the replica and every read-after-write from the primary', async () => {
    const product = await createProduct(seller, storeId, {
      name: 'Guide',
      price: 3,
      deliveryMethods: ['manualDelivery'],
    });
    const app = await createProduct(seller, storeId, { name: 'App', price: 7, deliveryMethods: ['licenseKeys'] });
    await importKeys(seller, storeId, app.id, [
      `RA-${randomBytes(6).toString('hex')}`,
      `RB-${randomBytes(6).toString('hex')}`,
    ]);
    const sold = await sellLicense(app.id);
    const earlier = [await checkout(product.id), await checkout(product.id), sold.orderId].sort();
    const products = [product.id, app.id].sort();
    // Streaming replication is quick but not instant: the listings show them once it has replayed them.
    await expect.poll(listedOrders, { timeout: 15_000, interval: 50 }).toEqual(earlier);
    await expect.poll(listedEvents, { timeout: 15_000, interval: 50 }).toEqual(earlier);
    await expect.poll(listedLicenses, { timeout: 15_000, interval: 50 }).toEqual([sold.licenseId]);
    expect(await listedProducts()).toEqual(products);

    await cluster.onReplica('select pg_wal_replay_pause()');
    await expect
      .poll(async () => (await cluster.onReplica('select pg_get_wal_replay_pause_state() as state')).rows[0].state, {
        timeout: 10_000,
        interval: 50,
      })
      .toBe('paused');
    let later: string;
    let added: { id: string };
    let another: { orderId: string; licenseId: string };
    try {
      later = await checkout(product.id);
      added = await createProduct(seller, storeId, {
        name: 'Second guide',
        price: 5,
        deliveryMethods: ['manualDelivery'],
      });
      another = await sellLicense(app.id);

      // Read-after-write: the primary has them at once.
      const order = await merchant<{ id: string; status: string }>(`/orders/${later}`);
      expect(order.status).toBe(200);
      expect(order.body).toMatchObject({ id: later, status: 'pending' });
      const fetched = await merchant<{ id: string; name: string }>(`/products/${added.id}`);
      expect(fetched.status).toBe(200);
      expect(fetched.body).toMatchObject({ id: added.id, name: 'Second guide' });
      const license = await merchant<{ id: string; status: string }>(`/licenses/${another.licenseId}`);
      expect(license.status).toBe(200);
      expect(license.body).toMatchObject({ id: another.licenseId, status: 'active' });

      // The listings answer from the replica, which has not replayed them.
      expect(await listedOrders()).toEqual(earlier);
      expect(await listedEvents()).toEqual(earlier);
      expect(await listedProducts()).toEqual(products);
      expect(await listedLicenses()).toEqual([sold.licenseId]);
    } finally {
      await cluster.onReplica('select pg_wal_replay_resume()');
    }
    await expect
      .poll(listedOrders, { timeout: 15_000, interval: 50 })
      .toEqual([...earlier, later, another.orderId].sort());
    await expect
      .poll(listedEvents, { timeout: 15_000, interval: 50 })
      .toEqual([...earlier, later, another.orderId].sort());
    await expect.poll(listedProducts, { timeout: 15_000, interval: 50 }).toEqual([...products, added.id].sort());
    await expect
      .poll(listedLicenses, { timeout: 15_000, interval: 50 })
      .toEqual([sold.licenseId, another.licenseId].sort());
  });
});
