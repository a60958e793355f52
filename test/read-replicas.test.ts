/**
 * Read replicas, black-box: the built server on a private primary and its streaming replica
 * (DATABASE_REPLICA_URLS). With the replica's WAL replay paused, what was just written is there
 * through the primary at once (the order and the product by id, read-after-write), while the
 * listings (orders, products, events) still answer the replica's older page; once replay resumes
 * they catch up. Which server answered is told by what each can know.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct } from './support/catalog.js';
import { TEST_REDIS_URL } from './support/env.js';
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
  if (!bin) throw new Error('the PostgreSQL server binaries (initdb, postgres, pg_basebackup) are not installed under /usr/lib/postgresql');
  cluster = await startReplicatedPostgres(bin);
  server = await spawnServer({
    DATABASE_URL: cluster.primaryUrl,
    DATABASE_REPLICA_URLS: cluster.replicaUrl,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: `svc-test:${randomBytes(6).toString('hex')}:`,
    TRUST_PROXY: '127.0.0.1',
    DATA_DIR: mkdtempSync(path.join(tmpdir(), 'svc-replica-data-')),
    APP_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  });
  seller = await registerSeller(server.url);
  storeId = (await createStoreFor(seller)).id;
  key = (await createKeyFor(seller, { scopes: ['order:read', 'product:read', 'event:read'], storeIds: [storeId] })).key;
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await cluster?.destroy();
});

async function merchant<T>(pathname: string): Promise<{ status: number; body: T }> {
  const response = await fetch(`${server.url}/api/merchant/v1/stores/${storeId}${pathname}`, { headers: { authorization: `Bearer ${key}` } });
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

const listedOrders = async () => (await merchant<{ orders: Array<{ id: string }> }>('/orders')).body.orders.map((o) => o.id).sort();
const listedProducts = async () => (await merchant<{ products: Array<{ id: string }> }>('/products')).body.products.map((p) => p.id).sort();
const listedEvents = async () => (await merchant<{ events: Array<{ data: { order?: { id: string } } }> }>('/events')).body.events.map((e) => e.data.order?.id).filter(Boolean).sort();

describe('listings on a read replica', () => {
  it('serves the listings from the replica and every read-after-write from the primary', async () => {
    const product = await createProduct(seller, storeId, { name: 'Guide', price: 3, deliveryMethods: ['manualDelivery'] });
    const earlier = [await checkout(product.id), await checkout(product.id)].sort();
    // Streaming replication is quick but not instant: the listings show both once it has replayed them.
    await expect.poll(listedOrders, { timeout: 15_000, interval: 50 }).toEqual(earlier);
    await expect.poll(listedEvents, { timeout: 15_000, interval: 50 }).toEqual(earlier);
    expect(await listedProducts()).toEqual([product.id]);

    await cluster.onReplica('select pg_wal_replay_pause()');
    await expect.poll(async () => (await cluster.onReplica('select pg_get_wal_replay_pause_state() as state')).rows[0].state, { timeout: 10_000, interval: 50 }).toBe('paused');
    try {
      const later = await checkout(product.id);
      const added = await createProduct(seller, storeId, { name: 'Second guide', price: 5, deliveryMethods: ['manualDelivery'] });

      // Read-after-write: the primary has them at once.
      const order = await merchant<{ id: string; status: string }>(`/orders/${later}`);
      expect(order.status).toBe(200);
      expect(order.body).toMatchObject({ id: later, status: 'pending' });
      const fetched = await merchant<{ id: string; name: string }>(`/products/${added.id}`);
      expect(fetched.status).toBe(200);
      expect(fetched.body).toMatchObject({ id: added.id, name: 'Second guide' });

      // The listings answer from the replica, which has not replayed them.
      expect(await listedOrders()).toEqual(earlier);
      expect(await listedEvents()).toEqual(earlier);
      expect(await listedProducts()).toEqual([product.id]);
    } finally {
      await cluster.onReplica('select pg_wal_replay_resume()');
    }
    await expect.poll(async () => (await listedOrders()).length, { timeout: 15_000, interval: 50 }).toBe(3);
    await expect.poll(async () => (await listedProducts()).length, { timeout: 15_000, interval: 50 }).toBe(2);
    await expect.poll(async () => (await listedEvents()).length, { timeout: 15_000, interval: 50 }).toBe(3);
  });
});
