/**
 * Black-box: outgoing webhooks from the built server, as a merchant's receiver sees them. An
 * order placed through the theme checkout reaches two endpoints exactly once each, with the same
 * event id, although the server is killed (SIGKILL) while the receiver is still down; and
 * `svc worker` delivers on its own and stops cleanly on SIGTERM.
 *
 * The endpoints are written into the server's database directly (sealed with the server's
 * APP_ENCRYPTION_KEY), as the webhook API would store them.
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
import { createProduct } from './support/catalog.js';
import { freshDatabase } from './support/databases.js';
import { TEST_REDIS_URL } from './support/env.js';
import { clientIp, createStoreFor, registerSeller } from './support/seller.js';
import { spawnServer, spawnWorker, type RunningServer } from './support/server.js';
import { reservePort, startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

const encryptionKey = randomBytes(32);
let db: Awaited<ReturnType<typeof freshDatabase>>;
let sql: pg.Client;
let env: Record<string, string>;
let receiver: WebhookReceiver | undefined;
let receiverPort: number;
const servers: RunningServer[] = [];
const secrets = new Map<string, string>();
const webhookIds: Record<string, string> = {};
let storeId: string;

beforeAll(async () => {
  db = await freshDatabase();
  env = {
    DATABASE_URL: db.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: `svc-test:${randomBytes(6).toString('hex')}:`,
    TRUST_PROXY: '127.0.0.1',
    DATA_DIR: mkdtempSync(path.join(tmpdir(), 'svc-bb-')),
    APP_ENCRYPTION_KEY: encryptionKey.toString('base64'),
    WEBHOOK_POLL_MS: '200',
  };
  sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  receiverPort = await reservePort();
});

afterAll(async () => {
  for (const server of servers)
    if (server.process.exitCode === null && server.process.signalCode === null) server.process.kill('SIGKILL');
  await receiver?.close();
  await sql?.end();
  await db?.drop();
});

async function start(): Promise<RunningServer> {
  const server = await spawnServer(env);
  servers.push(server);
  return server;
}

async function insertWebhook(path: string): Promise<string> {
  const secret = newWebhookSecret();
  const id = newId();
  await sql.query(
    `insert into webhook (id, store_id, name, url, secret_enc, secret_prefix, events, enabled, failure_count, created_at, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, true, 0, now(), now())`,
    [
      id,
      storeId,
      `receiver ${path}`,
      `http://127.0.0.1:${receiverPort}${path}`,
      seal(deriveKey(encryptionKey, 'webhook-secret'), secret),
      secret.slice(0, 12),
      ['order.created'],
    ],
  );
  secrets.set(path, secret);
  webhookIds[path] = id;
  return id;
}

const attempts = async (eventId: string) =>
  (
    await sql.query<{ path: string; attempt: number; status: string }>(
      `select w.url as path, d.attempt, d.status from webhook_delivery d join webhook w on w.id = d.webhook_id
       where d.event_id = $1 order by w.url, d.attempt`,
      [eventId],
    )
  ).rows.map((row) => [new URL(row.path).pathname, row.attempt, row.status]);

describe('delivery across a crash', () => {
  it('delivers an order.created committed before a SIGKILL exactly once to each endpoint, with the same event id', async () => {
    const first = await start();
    const seller = await registerSeller(first.url);
    storeId = (await createStoreFor(seller)).id;
    const product = await createProduct(seller, storeId, {
      name: 'E-book',
      price: 5,
      deliveryMethods: ['manualDelivery'],
    });
    await insertWebhook('/a');
    await insertWebhook('/b');

    // The receiver is not listening yet: the first attempts fail and the next ones are queued.
    const checkout = await fetch(`${first.url}/api/v1/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp() },
      body: JSON.stringify({
        shopId: storeId,
        cart: [{ productId: product.id, quantity: 1 }],
        email: 'buyer@example.test',
      }),
    });
    expect(checkout.status).toBe(200);
    const { orderId } = await checkout.json();
    const { rows: events } = await sql.query<{ id: string; payload: { order: { id: string } } }>(
      `select id, payload from event where store_id = $1 and type = 'order.created'`,
      [storeId],
    );
    expect(events).toHaveLength(1);
    const eventId = events[0]!.id;
    expect(events[0]!.payload.order.id).toBe(orderId);
    await expect
      .poll(() => attempts(eventId), { timeout: 10_000, interval: 50 })
      .toEqual([
        ['/a', 1, 'failed'],
        ['/a', 2, 'queued'],
        ['/b', 1, 'failed'],
        ['/b', 2, 'queued'],
      ]);

    first.process.kill('SIGKILL');
    await new Promise((resolve) => first.process.once('exit', resolve));

    receiver = await startWebhookReceiver({ port: receiverPort, secretFor: (p) => secrets.get(p) });
    const second = await start();
    const hits = await receiver.waitFor(2, { timeoutMs: 20_000 });
    await new Promise((resolve) => setTimeout(resolve, 1_500)); // nothing more arrives
    expect(receiver.received).toHaveLength(2);
    expect(hits.map((hit) => hit.path).sort()).toEqual(['/a', '/b']);
    for (const hit of hits) {
      expect(hit.eventId).toBe(eventId);
      expect(hit.headers['webhook-id']).toBe(eventId);
      expect(hit.headers['x-service-event']).toBe('order.created');
      expect(hit.serviceSignatureValid).toBe(true);
      expect(hit.standardSignatureValid).toBe(true);
      expect(hit.body).toMatchObject({
        id: eventId,
        event: 'order.created',
        storeId,
        data: { order: { id: orderId } },
      });
    }
    expect(await attempts(eventId)).toEqual([
      ['/a', 1, 'failed'],
      ['/a', 2, 'success'],
      ['/b', 1, 'failed'],
      ['/b', 2, 'success'],
    ]);
    const { rows: hooks } = await sql.query(
      'select failure_count, last_delivered_at from webhook where store_id = $1',
      [storeId],
    );
    expect(hooks.every((hook) => hook.failure_count === 0 && hook.last_delivered_at !== null)).toBe(true);

    // Shutting down waits for the dispatcher and exits cleanly.
    expect(await second.stop()).toBe(0);
  });
});

describe('svc worker', () => {
  it('delivers events on its own and stops on SIGTERM', async () => {
    expect(receiver, 'the crash test ran first').toBeDefined();
    // An event committed while no dispatcher ran (the API process died right after its commit).
    const eventId = `evt_${newId()}`;
    await sql.query(
      `insert into event (id, store_id, type, payload, created_at) values ($1, $2, 'order.created', $3, now())`,
      [eventId, storeId, JSON.stringify({ order: { id: 'ord_worker' } })],
    );
    const before = receiver!.received.length;
    const worker = spawnWorker(env);
    let exitCode: number | null;
    try {
      const hits = await receiver!.waitFor(before + 2, { timeoutMs: 20_000 });
      const fresh = hits.slice(before);
      expect(fresh.map((hit) => hit.path).sort()).toEqual(['/a', '/b']);
      expect(fresh.every((hit) => hit.eventId === eventId && hit.serviceSignatureValid)).toBe(true);
      // The log line travels through the stdout pipe and may arrive after the deliveries (seen in full runs).
      await expect.poll(() => worker.output(), { timeout: 5_000 }).toContain('svc worker delivering webhooks');
      expect(worker.output()).not.toContain('svc listening');
    } finally {
      exitCode = await worker.stop();
    }
    expect(exitCode).toBe(0);
    expect(worker.output()).toContain('"msg":"stopped"');
    expect(await attempts(eventId)).toEqual([
      ['/a', 1, 'success'],
      ['/b', 1, 'success'],
    ]);
  });
});
