/**
 * The checkout benchmark compares the service with a floor (bench/floors/checkout-floor.mjs) that
 * does the same database work in plain SQL; the comparison is fair only while both store the same
 * rows. Here one cart (two lines: a manual-delivery product twice, a license-key product once) is
 * checked out on each, against its own database provisioned through the service's API, and the
 * order, its lines and its order.created event must be the same (ids, number, times and token
 * hash aside, which differ between any two orders).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orderShape, type OrderShape } from '../bench/lib/order-shape.mjs';
import { createProduct, importKeys } from './support/catalog.js';
import { createStoreFor, registerSeller } from './support/seller.js';
import { REPO_ROOT, startServer } from './support/server.js';

const PUBLIC_URL = 'https://shop.floor.test';
const USER_AGENT = 'svc-test/1 (floor comparison)';

type Server = Awaited<ReturnType<typeof startServer>>;
const servers: Server[] = [];
let floor: { url: string; process: ChildProcess } | undefined;

afterAll(async () => {
  floor?.process.kill('SIGTERM');
  for (const server of servers) await server.stop();
});

/** A store with the cart's two products on the service at `server`; returns the checkout body. */
async function provision(
  server: Server,
): Promise<{ shopId: string; cart: Array<{ productId: string; quantity: number }>; email: string }> {
  const seller = await registerSeller(server.url);
  const store = await createStoreFor(seller, 'Floor comparison');
  const manual = await createProduct(seller, store.id, {
    name: 'Hand delivered',
    price: 9.99,
    deliveryMethods: ['manualDelivery'],
  });
  const keyed = await createProduct(seller, store.id, {
    name: 'Game key',
    price: 25,
    deliveryMethods: ['licenseKeys'],
  });
  await importKeys(seller, store.id, keyed.id, ['KEY-1', 'KEY-2']);
  return {
    shopId: store.id,
    cart: [
      { productId: manual.id, quantity: 2 },
      { productId: keyed.id, quantity: 1 },
    ],
    email: 'buyer@example.test',
  };
}

/** Starts the floor on `databaseUrl` and resolves with its address once it listens. */
function startFloor(databaseUrl: string): Promise<{ url: string; process: ChildProcess }> {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bench/floors/checkout-floor.mjs')], {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH,
      PORT: '0',
      FLOOR_DATABASE_URL: databaseUrl,
      FLOOR_PUBLIC_URL: PUBLIC_URL,
      NODE_ENV: 'production',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const port = /"msg":"floor listening[^"]*".*?"port":(\d+)/.exec(output)?.[1];
      if (port) resolve({ url: `http://127.0.0.1:${port}`, process: child });
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`the floor exited with ${code}: ${output}`)));
  });
}

async function checkout(url: string, body: unknown): Promise<{ orderId: string; token: string }> {
  const response = await fetch(`${url}/api/v1/checkout`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': USER_AGENT },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  const answer = (await response.json()) as { url: string; orderId: string };
  expect(Object.keys(answer).sort()).toEqual(['orderId', 'url']);
  const match = /^(.+)\/checkout\/([^/?]+)\?token=([^&]+)$/.exec(answer.url);
  expect(match?.[1]).toBe(PUBLIC_URL);
  expect(match?.[2]).toBe(answer.orderId);
  return { orderId: answer.orderId, token: decodeURIComponent(match![3]!) };
}

async function shapeOf(databaseUrl: string, orderId: string): Promise<OrderShape> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return await orderShape(client, orderId);
  } finally {
    await client.end();
  }
}

describe('the checkout floor', () => {
  let service: Server;
  let floorDb: Server['db'];
  let serviceBody: Awaited<ReturnType<typeof provision>>;
  let floorBody: Awaited<ReturnType<typeof provision>>;

  beforeAll(async () => {
    // Two databases, each migrated and provisioned by the service; the second one's service stops
    // before the floor serves it (its dispatcher would otherwise mark the floor's events).
    service = await startServer({ PUBLIC_URL });
    servers.push(service);
    serviceBody = await provision(service);
    const setup = await startServer({ PUBLIC_URL });
    floorBody = await provision(setup);
    floorDb = setup.db;
    setup.process.kill('SIGTERM');
    await new Promise((resolve) => setup.process.once('exit', resolve));
    servers.push({ ...setup, stop: async () => (await setup.db.drop(), 0) });
    floor = await startFloor(floorDb.url);
  }, 180_000);

  it('stores the same order, lines and order.created event as the service for one cart', async () => {
    const mine = await checkout(service.url, serviceBody);
    const theirs = await checkout(floor!.url, floorBody);
    const serviceShape = await shapeOf(service.db.url, mine.orderId);
    const floorShape = await shapeOf(floorDb.url, theirs.orderId);
    // Each stores the SHA-256 of a 32-byte token, never the token.
    for (const [shape, { token }] of [
      [serviceShape, mine],
      [floorShape, theirs],
    ] as const) {
      expect(Buffer.from(token, 'base64url')).toHaveLength(32);
      expect(shape.tokenHash).toBe(createHash('sha256').update(token).digest('hex'));
    }
    expect(serviceShape.shape.lines).toHaveLength(2);
    expect(serviceShape.shape.events).toHaveLength(1);
    expect(floorShape.shape).toEqual(serviceShape.shape);
  }, 60_000);
});
