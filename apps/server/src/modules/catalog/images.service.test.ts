/** Product image rules against the real database and storage, without HTTP. */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../../test/support/env.js';
import { createStore } from '../../../../../test/support/factories.js';
import { serviceContext } from '../../../../../test/support/in-process.js';
import { openOrm, type Orm } from '../../db/orm.js';
import { createProduct } from './catalog.service.js';
import { deleteProductImage, productImageFile, reorderProductImages, uploadProductImage } from './images.service.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 4 });
});
afterAll(() => orm?.close());

// One storage directory for the whole file (each serviceContext has a configuration, and so a
// directory, of its own), each call a fresh EntityManager.
let base: ReturnType<typeof serviceContext>;
const ctx = () => {
  base ??= serviceContext(orm);
  return { ...base, em: orm.em.fork() };
};

async function productOfNewStore() {
  const store = await createStore(orm.em.fork());
  const product = await createProduct(ctx(), {
    storeId: store.id,
    name: 'Pictured',
    price: 5,
    deliveryMethods: ['manualDelivery'],
  });
  return { storeId: store.id, productId: product.id };
}

const png = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: '#447799' } })
    .png()
    .toBuffer();

/** The files the store has in storage (originals and renditions). */
async function storedFiles(storeId: string): Promise<string[]> {
  const dir = path.join(ctx().deps.config.fileStorageDir, storeId);
  return readdir(dir).catch(() => []);
}

describe('uploadProductImage', () => {
  it('keeps the original and one WebP per width, never wider than the original; the address finds each', async () => {
    const target = await productOfNewStore();
    const { images } = await uploadProductImage(ctx(), { ...target, stream: Readable.from([await png(700, 350)]) });
    const [image] = images;
    expect(image!.variants.map((v) => [v.width, v.height])).toEqual([
      [480, 240],
      [700, 350],
    ]);
    expect((await storedFiles(target.storeId)).sort()).toEqual(
      [image!.id, `${image!.id}-w480`, `${image!.id}-w700`].sort(),
    );
    for (const width of [480, 700]) {
      const { storageKey } = await productImageFile(ctx(), { productId: target.productId, imageId: image!.id, width });
      expect(storageKey).toBe(`${target.storeId}/${image!.id}-w${width}`);
    }
    await expect(
      productImageFile(ctx(), { productId: target.productId, imageId: image!.id, width: 960 }),
    ).rejects.toMatchObject({ appCode: 'not_found' });
  });

  it('leaves nothing in storage when it refuses an image', async () => {
    const target = await productOfNewStore();
    const notAPicture = Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      Buffer.alloc(64),
    ]);
    await expect(uploadProductImage(ctx(), { ...target, stream: Readable.from([notAPicture]) })).rejects.toMatchObject({
      appCode: 'unsupported_media_type',
    });
    await expect(
      uploadProductImage(ctx(), { ...target, stream: Readable.from([Buffer.from('plain text')]) }),
    ).rejects.toMatchObject({ appCode: 'unsupported_media_type' });
    await expect(
      uploadProductImage(ctx(), { ...target, stream: Readable.from([Buffer.alloc(2 * 1024 * 1024 + 1)]) }),
    ).rejects.toMatchObject({ appCode: 'payload_too_large' });
    expect(await storedFiles(target.storeId)).toEqual([]);
  });

  it('takes at most 5 images even when uploads race, and keeps no file of a refused one', async () => {
    const target = await productOfNewStore();
    const picture = await png(40, 30);
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, () => uploadProductImage(ctx(), { ...target, stream: Readable.from([picture]) })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
    for (const r of results.filter((r) => r.status === 'rejected'))
      expect(r.reason).toMatchObject({ appCode: 'conflict' });
    // 5 originals and 5 renditions (40 px wide: one width each).
    expect(await storedFiles(target.storeId)).toHaveLength(10);
  });
});

describe('reorderProductImages and deleteProductImage', () => {
  it('reorders only with every image named once, and removes an image with its files', async () => {
    const target = await productOfNewStore();
    await uploadProductImage(ctx(), { ...target, stream: Readable.from([await png(20, 20)]) });
    const { images } = await uploadProductImage(ctx(), { ...target, stream: Readable.from([await png(30, 30)]) });
    const [a, b] = images.map((i) => i.id);
    for (const imageIds of [[a!], [a!, a!], [a!, b!, b!], [a!, 'x'.repeat(24)]])
      await expect(reorderProductImages(ctx(), { ...target, imageIds })).rejects.toMatchObject({
        appCode: 'validation_failed',
      });
    const reordered = await reorderProductImages(ctx(), { ...target, imageIds: [b!, a!] });
    expect(reordered.images.map((i) => i.width)).toEqual([30, 20]);

    await deleteProductImage(ctx(), { ...target, imageId: b! });
    expect((await storedFiles(target.storeId)).sort()).toEqual([a!, `${a!}-w20`].sort());
    await expect(deleteProductImage(ctx(), { ...target, imageId: b! })).rejects.toMatchObject({ appCode: 'not_found' });
  });
});
