/**
 * Deleting a store's test data at the service level (test mode: docs/architecture.md), against the real
 * database and file storage: a job per store (asking again answers it), run in batches by the
 * runner, every test row and stored object of the store gone, every live row (and another
 * store's test rows) exactly as before; a runner that died is taken over once its lease ran out.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../test/support/env.js';
import { createStore } from '../../../../test/support/factories.js';
import { codeOf, serviceContext } from '../../../../test/support/in-process.js';
import { openOrm, type Orm } from '../db/orm.js';
import { newId } from '../lib/ids.js';
import { addBlacklistEntry } from '../modules/blacklist/blacklist.service.js';
import { createProduct } from '../modules/catalog/catalog.service.js';
import { createOrder } from './place-order.js';
import { createCoupon } from '../modules/coupons/coupons.service.js';
import type { ServiceContext } from '../modules/request/context.js';
import { fanOutBatch } from '../modules/webhooks/claims.repo.js';
import { createWebhook } from '../modules/webhooks/endpoints.service.js';
import { claimWipe } from '../modules/test-data/test-data.repo.js';
import {
  getTestDataWipe,
  requestTestDataWipe,
  requireTestMode,
  runTestDataWipes,
} from '../modules/test-data/test-data.service.js';
import { PER_MODE_TABLES as PER_MODE, modeTablesInDatabase } from '../../../../test/support/modes.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 3 });
});
afterAll(() => orm?.close());

const buyer = { ip: '203.0.113.7', userAgent: 'test', country: 'DE' };
function inMode(base: ServiceContext, livemode: boolean): ServiceContext {
  return { ...base, em: orm.em.fork(), livemode };
}

/** Every row of the store's per-mode tables (and their children) of one mode, as JSON, in a stable order. */
async function rowsOf(storeId: string, livemode: boolean): Promise<Record<string, unknown[]>> {
  const em = orm.em.fork();
  const out: Record<string, unknown[]> = {};
  const byStore: Record<string, string> = {
    product: `store_id = ?`,
    file: `store_id = ?`,
    coupon: `store_id = ?`,
    blacklist_entry: `store_id = ?`,
    order: `store_id = ?`,
    customer: `store_id = ?`,
    event: `store_id = ?`,
    webhook: `store_id = ?`,
    webhook_delivery: `store_id = ?`,
    ticket: `store_id = ?`,
    product_plan: `product_id in (select id from product where store_id = ?)`,
    license_key: `product_id in (select id from product where store_id = ?)`,
    license_instance: `license_key_id in (select k.id from license_key k join product p on p.id = k.product_id where p.store_id = ?)`,
    order_line: `order_id in (select id from "order" where store_id = ?)`,
    ticket_message: `ticket_id in (select id from ticket where store_id = ?)`,
    subscription: `store_id = ?`,
    saved_payment_method: `store_id = ?`,
    test_gateway_charge: `method_id in (select id from saved_payment_method where store_id = ?)`,
    license_signing_key: `store_id = ?`,
    invoice_counter: `store_id = ?`,
  };
  for (const table of PER_MODE) {
    const rows = await em.execute<Array<{ row: unknown }>>(
      // By the whole row's text: invoice_counter has no id of its own.
      `select to_jsonb(t) as row from "${table}" t where ${byStore[table]} and livemode = ? order by to_jsonb(t)::text`,
      [storeId, livemode],
    );
    out[table] = rows.map((r) => r.row);
  }
  return out;
}

/** A store with one of everything in each mode: products with a stored file and image, an order, its event and delivery. */
async function populate(base: ServiceContext, storeId: string) {
  const stored: Record<'live' | 'test', string[]> = { live: [], test: [] };
  for (const livemode of [true, false]) {
    const ctx = inMode(base, livemode);
    const tag = livemode ? 'live' : 'test';
    await createWebhook(ctx, {
      storeId,
      name: tag,
      url: `http://127.0.0.1:9/${tag}`,
      events: ['order.created', 'product.created'],
    });
    const product = await createProduct(ctx, {
      storeId,
      name: `${tag} product`,
      price: 3,
      deliveryMethods: ['manualDelivery'],
    });
    // A recurring product with a plan.
    await createProduct(ctx, {
      storeId,
      name: `${tag} subscription`,
      deliveryMethods: ['manualDelivery'],
      plans: [{ interval: 'month', intervalCount: 1, price: 9, trialDays: 0, active: true }],
    });
    // A stored file and an image with a rendition, as the catalog stores them.
    const fileKey = `${storeId}/${newId()}`;
    const imageId = newId();
    for (const key of [fileKey, `${storeId}/${imageId}`, `${storeId}/${imageId}-w480`]) {
      await base.deps.storage.write(key, Readable.from([Buffer.from(key)]), 1_000);
      stored[tag].push(key);
    }
    const em = orm.em.fork();
    await em.execute(
      `insert into file (id, store_id, livemode, product_id, name, content_type, size, sha256, storage_key, created_at)
       values (?, ?, ?, ?, 'f.txt', 'text/plain', 1, repeat('0', 64), ?, now())`,
      [newId(), storeId, livemode, product.id, fileKey],
    );
    await em.execute(`update product set images = ? where id = ?`, [
      JSON.stringify([{ id: imageId, contentType: 'image/png', size: 1, sha256: '0', variants: [{ width: 480 }] }]),
      product.id,
    ]);
    // A key in stock with an instance (raw: the License API's own path needs a sold key).
    const keyId = newId();
    await em.execute(
      `insert into license_key (id, product_id, livemode, value_enc, value_hash, status, created_at)
       values (?, ?, ?, 'x', ?, 'available', now())`,
      [keyId, product.id, livemode, newId()],
    );
    await em.execute(
      `insert into license_instance (id, license_key_id, livemode, name, created_at) values (?, ?, ?, 'pc', now())`,
      [newId(), keyId, livemode],
    );
    await createCoupon(ctx, { storeId, code: `C${tag}`, discountType: 'percent', discountValue: 10 });
    await addBlacklistEntry(ctx, { storeId, kind: 'email', value: `blocked-${tag}@example.test` });
    for (let i = 0; i < 3; i++)
      await createOrder(
        ctx,
        { store: storeId, cart: [{ productId: product.id, quantity: 1 }], email: `buyer${i}@example.test` },
        // The seller's side may buy the store's test products (the world's test orders).
        { ...buyer, testMode: () => Promise.resolve(!livemode) },
      );
    // A subscription (raw: checkout does not make them yet).
    await em.execute(
      `insert into subscription (id, store_id, livemode, product_name, plan_id, interval, interval_count, unit_price_minor,
         quantity, currency, status, customer_email, payment_method, first_order_id, anchor, current_period_start,
         current_period_end, created_at, updated_at)
       values (?, ?, ?, 'Plan', ?, 'month', 1, 900, 1, 'USD', 'active', 'sub@example.test', 'test', ?, now(), now(),
         now() + interval '1 month', now(), now())`,
      [newId(), storeId, livemode, newId(), newId()],
    );
    await em.execute(`insert into customer (id, store_id, livemode, email, created_at) values (?, ?, ?, ?, now())`, [
      newId(),
      storeId,
      livemode,
      `customer-${tag}@example.test`,
    ]);
    // The mode's invoice and credit note counters (raw: the orders above are not taxed).
    await em.execute(
      `insert into invoice_counter (store_id, livemode, kind, year, last) values (?, ?, 'INV', 2026, 3), (?, ?, 'CN', 2026, 1)`,
      [storeId, livemode, storeId, livemode],
    );
  }
  // Deliveries of this store's events (others' events in the shared outbox go out too).
  for (let round = 0; round < 50; round++) {
    const left = await orm.em
      .fork()
      .execute<Array<{ n: string }>>(`select count(*) as n from event where store_id = ? and dispatched_at is null`, [
        storeId,
      ]);
    if (Number(left[0]!.n) === 0) break;
    await fanOutBatch(orm.em.fork(), 500, new Date());
  }
  return stored;
}

const storageDir = (base: ServiceContext) => base.deps.config.fileStorageDir;

describe('deleting a store’s test data', () => {
  it('walks every table of the schema that has a livemode column (a new per-mode table must be added here)', async () => {
    expect(await modeTablesInDatabase(orm.em.fork())).toEqual([...PER_MODE].sort());
  });

  it('deletes every test row and stored object of the store, in batches, and nothing live or of another store', async () => {
    const base = serviceContext(orm);
    const store = await createStore(orm.em.fork());
    const other = await createStore(orm.em.fork());
    const stored = await populate(base, store.id);
    await populate(base, other.id);

    const liveBefore = await rowsOf(store.id, true);
    const otherTestBefore = await rowsOf(other.id, false);
    const testBefore = await rowsOf(store.id, false);
    expect(testBefore.order).toHaveLength(3);
    expect(testBefore.webhook_delivery!.length).toBeGreaterThan(0);

    const test = inMode(base, false);
    const job = await requestTestDataWipe(test, { storeId: store.id }, 'user:someone');
    expect(job).toMatchObject({ storeId: store.id, status: 'queued', deleted: {}, error: null, startedAt: null });
    // Asked again while it waits: the same job.
    expect((await requestTestDataWipe(test, { storeId: store.id }, 'user:someone')).id).toBe(job.id);

    // Batches of 2 rows: every table of more than two rows takes several transactions.
    expect(await runTestDataWipes(base, { batch: 2 })).toBe(1);
    const done = await getTestDataWipe(test, { storeId: store.id, jobId: job.id });
    expect([done.status, done.error]).toEqual(['succeeded', null]);
    expect(done.finishedAt).not.toBeNull();
    expect(done.startedAt).not.toBeNull();
    // The counts are the rows there were.
    for (const table of PER_MODE) expect(done.deleted[table] ?? 0, table).toBe(testBefore[table]!.length);

    const testAfter = await rowsOf(store.id, false);
    for (const table of PER_MODE) expect(testAfter[table], table).toEqual([]);
    expect(await rowsOf(store.id, true)).toEqual(liveBefore);
    expect(await rowsOf(other.id, false)).toEqual(otherTestBefore);

    for (const key of stored.test) expect(existsSync(path.join(storageDir(base), key)), key).toBe(false);
    for (const key of stored.live) expect(existsSync(path.join(storageDir(base), key)), key).toBe(true);

    // Once it finished, asking again starts a new job.
    const again = await requestTestDataWipe(test, { storeId: store.id }, 'user:someone');
    expect(again.id).not.toBe(job.id);
    await runTestDataWipes(base);
    expect((await getTestDataWipe(test, { storeId: store.id, jobId: again.id })).status).toBe('succeeded');
  });

  it('answers 404 for another store’s job and an unknown one; a live context may not use the merchant routes', async () => {
    const base = serviceContext(orm);
    const store = await createStore(orm.em.fork());
    const other = await createStore(orm.em.fork());
    const job = await requestTestDataWipe(inMode(base, false), { storeId: store.id }, 'api_key:k');
    expect(await codeOf(getTestDataWipe(inMode(base, false), { storeId: other.id, jobId: job.id }))).toBe('not_found');
    expect(await codeOf(getTestDataWipe(inMode(base, false), { storeId: store.id, jobId: newId() }))).toBe('not_found');
    expect(await codeOf(Promise.resolve().then(() => requireTestMode(inMode(base, true))))).toBe('test_key_required');
    await runTestDataWipes(base);
  });

  it('takes over a job whose runner died once its lease ran out', async () => {
    const base = serviceContext(orm);
    const store = await createStore(orm.em.fork());
    await populate(base, store.id);
    const test = inMode(base, false);
    const job = await requestTestDataWipe(test, { storeId: store.id }, 'user:someone');

    // A runner took it and died: its lease still runs, so no other runner takes it.
    const now = new Date();
    const claimed = await claimWipe(orm.em.fork(), { now, lease: new Date(now.getTime() + 60_000) });
    expect(claimed?.id).toBe(job.id);
    await runTestDataWipes(base);
    expect((await getTestDataWipe(test, { storeId: store.id, jobId: job.id })).status).toBe('running');

    // Its lease ran out: the next runner finishes it.
    await orm.em
      .fork()
      .execute(`update test_data_wipe set locked_until = now() - interval '1 second' where id = ?`, [job.id]);
    await runTestDataWipes(base);
    const done = await getTestDataWipe(test, { storeId: store.id, jobId: job.id });
    expect(done.status).toBe('succeeded');
    expect(done.deleted.order).toBe(3);
    expect((await rowsOf(store.id, false)).order).toEqual([]);
    expect((await rowsOf(store.id, true)).order).toHaveLength(3);
  });

  it('gives a job back when stopped between two batches, and the next run finishes it', async () => {
    const base = serviceContext(orm);
    const store = await createStore(orm.em.fork());
    await populate(base, store.id);
    const test = inMode(base, false);
    const job = await requestTestDataWipe(test, { storeId: store.id }, 'user:someone');
    // The process stops while the first stored object is removed.
    const stop = new AbortController();
    const storage = base.deps.storage;
    const stopping = {
      ...base.deps,
      storage: {
        write: storage.write.bind(storage),
        read: storage.read.bind(storage),
        remove: (key: string) => {
          stop.abort();
          return storage.remove(key);
        },
      },
    };
    expect(await runTestDataWipes({ ...base, deps: stopping }, { signal: stop.signal })).toBe(1);
    const given = await getTestDataWipe(test, { storeId: store.id, jobId: job.id });
    expect(given.status).toBe('running');
    expect(given.deleted.event).toBeGreaterThan(0);
    expect(given.deleted.order).toBeUndefined();
    // Given back, not leased: the next run takes it at once.
    await runTestDataWipes(base, { batch: 1 });
    const done = await getTestDataWipe(test, { storeId: store.id, jobId: job.id });
    expect(done.status).toBe('succeeded');
    expect(done.deleted.order).toBe(3);
  });
});
