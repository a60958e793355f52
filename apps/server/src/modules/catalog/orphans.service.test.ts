/**
 * The orphan sweep against the real database and a real S3-compatible store (s3rver on
 * loopback): objects no row names are removed once a day old; named ones and young ones stay.
 */
import { Readable } from 'node:stream';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../../test/support/env.js';
import { createStore } from '../../../../../test/support/factories.js';
import { serviceContext } from '../../../../../test/support/in-process.js';
import { startS3Storage, type RunningS3Server } from '../../../../../test/support/s3-server.js';
import { openOrm, type Orm } from '../../db/orm.js';
import { ManualClock } from '../../lib/clock.js';
import { S3FileStorage } from '../../lib/s3-storage.js';
import { createProduct } from './catalog.service.js';
import { uploadProductFile } from './files.service.js';
import { uploadProductImage } from './images.service.js';
import { ORPHAN_MIN_AGE_MS, sweepOrphanedObjects } from './orphans.service.js';

let orm: Orm;
let s3: RunningS3Server;
let storage: S3FileStorage;
let started: Awaited<ReturnType<typeof startS3Storage>> | undefined;

beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 4 });
  started = await startS3Storage();
  ({ s3, storage } = started);
});

afterAll(async () => {
  await started?.dispose();
  await orm?.close();
});

function contextAt(clock: ManualClock) {
  const base = serviceContext(orm, clock);
  return { ...base, em: orm.em.fork(), deps: { ...base.deps, storage } };
}

describe('the orphan sweep', () => {
  it('removes the objects no row names once they are a day old, and keeps files, images and young objects', async () => {
    const clock = new ManualClock(Date.now());
    const store = await createStore(orm.em.fork());
    const product = await createProduct(contextAt(clock), {
      storeId: store.id,
      name: 'Swept',
      price: 5,
      deliveryMethods: ['downloadFiles'],
    });
    await uploadProductFile(contextAt(clock), {
      storeId: store.id,
      productId: product.id,
      name: 'kept.pdf',
      contentType: 'application/pdf',
      stream: Readable.from([Buffer.from('a product file')]),
    });
    const png = await sharp({ create: { width: 600, height: 300, channels: 3, background: '#335577' } })
      .png()
      .toBuffer();
    await uploadProductImage(contextAt(clock), {
      storeId: store.id,
      productId: product.id,
      stream: Readable.from([png]),
    });
    const named = await s3.keys(`${store.id}/`);
    // The original and its two renditions, and the file.
    expect(named).toHaveLength(4);
    // What a crash between a row's removal and its object's leaves behind.
    const orphans = [`${store.id}/0000orphanfile`, `${store.id}/0000orphanimage-w480`, `${store.id}/proofs/0000orphan`];
    for (const key of orphans) await s3.put(key, Buffer.from('left behind'));

    // Young: nothing goes.
    expect(await sweepOrphanedObjects(contextAt(clock))).toBe(0);
    expect(await s3.keys(`${store.id}/`)).toEqual([...named, ...orphans].sort());

    clock.advance(ORPHAN_MIN_AGE_MS + 60_000);
    const removed = await sweepOrphanedObjects(contextAt(clock));
    expect(removed).toBe(orphans.length);
    expect(await s3.keys(`${store.id}/`)).toEqual(named);
  });
});
