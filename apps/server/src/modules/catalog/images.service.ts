/**
 * Product images (issue #30, docs/architecture.md, The faces): at most PRODUCT_IMAGES_MAX per product, each a PNG,
 * JPEG or WebP of at most PRODUCT_IMAGE_MAX_BYTES, its type read from its first bytes as a
 * logo's is. At upload `sharp` makes WebP renditions 480 and 960 px wide (never wider than the
 * original) once, in its turn of the image queue (image-work.ts); they are kept in the files' storage beside the original and served as they are,
 * immutable, by the image's address. The product row's `images` column lists them in order; this
 * module is its one writer.
 */
import { inTransaction } from '../request/transaction.js';
import { Readable } from 'node:stream';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { describeBytes, PRODUCT_IMAGE_MAX_BYTES, PRODUCT_IMAGES_MAX, type TProductImage } from '@svc/schemas';
import { AppError, invalidField } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { FileTooLargeError } from '../../lib/storage.js';
import type { ServiceContext } from '../request/context.js';
import { ProductSchema, type Product, type ProductImageRecord } from './catalog.entities.js';
import { selectImageStore } from './catalog.repo.js';
import { DECODE, pictureSize, unreadable, withImageTurn, type SharpFactory } from './image-work.js';
import { logoTypeOf } from './logo.service.js';
import { findProduct } from './products.js';

/** The renditions' widths; an original narrower than one gets its own width instead (no upscaling). */
export const IMAGE_WIDTHS = [480, 960] as const;

/** Where an image's original, or its rendition of a width, is kept. */
function storageKeyOf(storeId: string, imageId: string, width?: number): string {
  return width === undefined ? `${storeId}/${imageId}` : `${storeId}/${imageId}-w${width}`;
}

/** A rendition's address: immutable, since an image id never names other bytes. */
export function imageUrl(productId: string, imageId: string, width: number): string {
  return `/images/${productId}/${imageId}/${width}.webp`;
}

export function toImageView(productId: string, image: ProductImageRecord): TProductImage {
  const variants = image.variants.map((v) => ({
    width: v.width,
    height: v.height,
    url: imageUrl(productId, image.id, v.width),
  }));
  const widest = variants[variants.length - 1]!;
  return { id: image.id, width: widest.width, height: widest.height, url: widest.url, variants };
}

async function bufferOf(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The product, locked for the rest of the transaction: image changes of one product go one at a time. */
async function lockedProduct(
  em: EntityManager,
  storeId: string,
  livemode: boolean,
  productId: string,
): Promise<Product> {
  const product = await em.findOne(
    ProductSchema,
    { id: productId, store: storeId, livemode, deletedAt: null },
    { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
  );
  if (!product) throw new AppError('not_found', 'Product not found.');
  return product;
}

function full(): AppError {
  return new AppError('conflict', `A product has at most ${PRODUCT_IMAGES_MAX} images; remove one first.`);
}

/**
 * The WebP renditions of an image, narrowest first: one per width of IMAGE_WIDTHS, none wider than
 * the original. The original is decoded once, into the widest rendition's pixels, which the
 * narrower ones are made from. 415 for what does not decode, 413 past the pixel cap (image-work.ts).
 */
async function renditions(
  sharp: SharpFactory,
  original: Buffer,
): Promise<{ width: number; height: number; data: Buffer }[]> {
  const size = await pictureSize(sharp, original, 'The image');
  const widths = [...new Set(IMAGE_WIDTHS.map((w) => Math.min(w, size.shownWidth)))];
  try {
    const widest = await sharp(original, DECODE)
      .rotate()
      .resize({ width: widths[widths.length - 1]!, withoutEnlargement: true })
      .raw()
      .toBuffer({ resolveWithObject: true });
    const raw = { raw: { width: widest.info.width, height: widest.info.height, channels: widest.info.channels } };
    const made = [];
    for (const width of widths) {
      const { data, info } = await sharp(widest.data, raw)
        .resize({ width, withoutEnlargement: true })
        .webp({ quality: 80 })
        .toBuffer({ resolveWithObject: true });
      made.push({ width: info.width, height: info.height, data });
    }
    return made;
  } catch {
    throw unreadable('The image');
  }
}

/**
 * Adds an image after the product's others: 404 for a product not the store's, 409 when it has
 * PRODUCT_IMAGES_MAX already, 413 past PRODUCT_IMAGE_MAX_BYTES or the pixel cap, 415 for
 * anything but a PNG, JPEG or WebP that decodes, 503 when too many images wait to be decoded
 * (image-work.ts). A refused image leaves nothing in storage.
 */
export async function uploadProductImage(
  ctx: ServiceContext,
  input: { storeId: string; productId: string; stream: Readable },
): Promise<{ images: TProductImage[] }> {
  const product = await findProduct(ctx, input.storeId, ctx.livemode, input.productId);
  // Checked before the upload is stored, to spare the work; again under the lock below.
  if (product.images.length >= PRODUCT_IMAGES_MAX) throw full();
  const id = newId();
  const written: string[] = [];
  try {
    const originalKey = storageKeyOf(input.storeId, id);
    let stored;
    try {
      written.push(originalKey);
      stored = await ctx.deps.storage.write(originalKey, input.stream, PRODUCT_IMAGE_MAX_BYTES);
    } catch (error) {
      if (error instanceof FileTooLargeError)
        throw new AppError(
          'payload_too_large',
          `Each image must be ${describeBytes(PRODUCT_IMAGE_MAX_BYTES)} or smaller.`,
        );
      throw error;
    }
    // Read and decoded in its turn: an upload waiting for one holds no more than its stored file.
    const { contentType, made } = await withImageTurn(async (sharp) => {
      const original = await bufferOf(ctx.deps.storage.read(originalKey));
      const type = logoTypeOf(original.subarray(0, 12));
      if (!type) throw new AppError('unsupported_media_type', 'An image is a PNG, JPEG or WebP.');
      return { contentType: type, made: await renditions(sharp, original) };
    });
    const variants = [];
    for (const rendition of made) {
      const key = storageKeyOf(input.storeId, id, rendition.width);
      written.push(key);
      await ctx.deps.storage.write(key, Readable.from([rendition.data]), rendition.data.length);
      variants.push({ width: rendition.width, height: rendition.height });
    }
    const record: ProductImageRecord = { id, contentType, size: stored.size, sha256: stored.sha256, variants };
    const saved = await inTransaction(ctx, async (tx) => {
      const locked = await lockedProduct(tx.em, input.storeId, ctx.livemode, input.productId);
      if (locked.images.length >= PRODUCT_IMAGES_MAX) throw full();
      locked.images = [...locked.images, record];
      locked.updatedAt = ctx.clock.now();
      await tx.em.flush();
      return locked;
    });
    return { images: saved.images.map((image) => toImageView(saved.id, image)) };
  } catch (error) {
    for (const key of written) await ctx.deps.storage.remove(key);
    throw error;
  }
}

/** Removes one image and its files; 404 when the product has no such image. */
export async function deleteProductImage(
  ctx: ServiceContext,
  input: { storeId: string; productId: string; imageId: string },
): Promise<void> {
  const removed = await inTransaction(ctx, async (tx) => {
    const product = await lockedProduct(tx.em, input.storeId, ctx.livemode, input.productId);
    const image = product.images.find((i) => i.id === input.imageId);
    if (!image) throw new AppError('not_found', 'Image not found.');
    product.images = product.images.filter((i) => i !== image);
    product.updatedAt = ctx.clock.now();
    await tx.em.flush();
    return image;
  });
  await ctx.deps.storage.remove(storageKeyOf(input.storeId, removed.id));
  for (const v of removed.variants) await ctx.deps.storage.remove(storageKeyOf(input.storeId, removed.id, v.width));
}

/** Puts the product's images in the order given, which names each of them exactly once (else 400). */
export async function reorderProductImages(
  ctx: ServiceContext,
  input: { storeId: string; productId: string; imageIds: string[] },
): Promise<{ images: TProductImage[] }> {
  return inTransaction(ctx, async (tx) => {
    const product = await lockedProduct(tx.em, input.storeId, ctx.livemode, input.productId);
    const byId = new Map(product.images.map((i) => [i.id, i]));
    const same =
      input.imageIds.length === byId.size &&
      new Set(input.imageIds).size === byId.size &&
      input.imageIds.every((id) => byId.has(id));
    if (!same) throw invalidField('imageIds', "Name each of the product's images once, in the new order.");
    product.images = input.imageIds.map((id) => byId.get(id)!);
    product.updatedAt = ctx.clock.now();
    await tx.em.flush();
    return { images: product.images.map((image) => toImageView(product.id, image)) };
  });
}

/** A rendition for the image address: 404 unless a product a buyer may reach has this image at this width. */
export async function productImageFile(
  ctx: ServiceContext,
  input: { productId: string; imageId: string; width: number },
): Promise<{ storageKey: string }> {
  const storeId = await selectImageStore(ctx.em, input.productId, input.imageId, input.width);
  if (!storeId) throw new AppError('not_found', 'No such image.');
  return { storageKey: storageKeyOf(storeId, input.imageId, input.width) };
}
