/**
 * The store's logo (docs/architecture.md, The faces): one PNG, JPEG or WebP of at most 1 MB, encoded again as product
 * images are (no metadata, bounded pixels; image-work.ts) and stored like product
 * files (a `file` row of the store, no product, in the same storage) and named by the store's
 * `logoFileId`. Here, not in the stores module: the file table is the catalog's, and the stores
 * module must not import it (the catalog imports stores).
 */
import { Readable } from 'node:stream';
import { AppError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { FileTooLargeError } from '../../lib/storage.js';
import type { ServiceContext } from '../request/context.js';
import { StoreSchema } from '../stores/stores.entities.js';
import { toPublicStore } from '../stores/store-views.js';
import { StoredFileSchema } from './catalog.entities.js';
import { DECODE, pictureSize, unreadable, withImageTurn } from './image-work.js';
import { describeBytes } from '@svc/schemas';

export const LOGO_MAX_BYTES = 1024 * 1024;

type LogoType = 'image/png' | 'image/jpeg' | 'image/webp';

/** The image type a file's first bytes say, of the three a logo may be. */
export function logoTypeOf(head: Buffer): LogoType | undefined {
  if (head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (head.subarray(0, 4).toString('latin1') === 'RIFF' && head.subarray(8, 12).toString('latin1') === 'WEBP')
    return 'image/webp';
  return undefined;
}

/** The largest side of a stored logo: the pages show it at 40 px, link previews at a few hundred. */
export const LOGO_MAX_SIDE = 512;

async function bufferOf(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * The logo as it is stored and served: decoded and encoded again in its own format, turned as its
 * EXIF orientation says, at most LOGO_MAX_SIDE px a side, and without any of the upload's metadata
 * (sharp writes none unless asked: no EXIF GPS position, no Artist, no ICC or XMP). 415 for what
 * does not decode (not a picture, cut short), 413 past the pixel cap (image-work.ts).
 */
async function reencoded(upload: Buffer, type: LogoType): Promise<Buffer> {
  return withImageTurn(async (sharp) => {
    await pictureSize(sharp, upload, 'The logo');
    try {
      const picture = sharp(upload, DECODE)
        .rotate()
        .resize({ width: LOGO_MAX_SIDE, height: LOGO_MAX_SIDE, fit: 'inside', withoutEnlargement: true });
      if (type === 'image/png') return await picture.png().toBuffer();
      if (type === 'image/jpeg') return await picture.jpeg({ quality: 85 }).toBuffer();
      return await picture.webp({ quality: 85 }).toBuffer();
    } catch {
      throw unreadable('The logo');
    }
  });
}

/**
 * Stores a new logo in place of the old one (whose file is then removed). The type is decided by
 * the bytes, not by what the client said; anything else is 415, anything larger 413. What is
 * stored is the logo encoded again (reencoded), never the uploaded bytes.
 */
export async function uploadStoreLogo(
  ctx: ServiceContext,
  input: { storeId: string; stream: Readable },
): Promise<{ logoUrl: string | null }> {
  const store = await ctx.em.findOneOrFail(StoreSchema, { id: input.storeId });
  const id = newId();
  const storageKey = `${store.id}/${id}`;
  // The upload is held in a file of its own until it has been read: a refused one leaves nothing.
  const uploadKey = `${store.id}/${id}-upload`;
  try {
    await ctx.deps.storage.write(uploadKey, input.stream, LOGO_MAX_BYTES);
  } catch (error) {
    await ctx.deps.storage.remove(uploadKey);
    if (error instanceof FileTooLargeError)
      throw new AppError('payload_too_large', `The logo must be ${describeBytes(LOGO_MAX_BYTES)} or smaller.`);
    throw error;
  }
  let stored;
  let contentType: LogoType;
  try {
    const upload = await bufferOf(ctx.deps.storage.read(uploadKey));
    const type = logoTypeOf(upload.subarray(0, 12));
    if (!type) throw new AppError('unsupported_media_type', 'A logo is a PNG, JPEG or WebP image.');
    contentType = type;
    const logo = await reencoded(upload, type);
    stored = await ctx.deps.storage.write(storageKey, Readable.from([logo]), logo.length);
  } finally {
    await ctx.deps.storage.remove(uploadKey);
  }
  try {
    const previous = store.logoFileId
      ? await ctx.em.findOne(StoredFileSchema, { id: store.logoFileId, store: store.id })
      : null;
    const now = ctx.clock.now();
    ctx.em.create(StoredFileSchema, {
      id,
      store: store.id,
      product: null,
      name: 'logo',
      contentType,
      size: stored.size,
      sha256: stored.sha256,
      storageKey,
      createdAt: now,
    });
    store.logoFileId = id;
    store.updatedAt = now;
    if (previous) ctx.em.remove(previous);
    await ctx.em.flush();
    if (previous) await ctx.deps.storage.remove(previous.storageKey);
    return { logoUrl: toPublicStore(store).logoUrl };
  } catch (error) {
    // No row, no file: a refused or failed logo leaves nothing in storage.
    await ctx.deps.storage.remove(storageKey);
    throw error;
  }
}

/** Removes the store's logo (nothing to do without one). */
export async function deleteStoreLogo(ctx: ServiceContext, input: { storeId: string }): Promise<void> {
  const store = await ctx.em.findOneOrFail(StoreSchema, { id: input.storeId });
  if (!store.logoFileId) return;
  const file = await ctx.em.findOne(StoredFileSchema, { id: store.logoFileId, store: store.id });
  store.logoFileId = null;
  store.updatedAt = ctx.clock.now();
  if (file) ctx.em.remove(file);
  await ctx.em.flush();
  if (file) await ctx.deps.storage.remove(file.storageKey);
}

/** The logo a storefront shows: the store's current one, by subdomain and file id; 404 otherwise. */
export async function storeLogo(
  ctx: ServiceContext,
  input: { subdomain: string; fileId: string },
): Promise<{ contentType: string; size: number; storageKey: string }> {
  const store = await ctx.em.findOne(StoreSchema, { subdomain: input.subdomain.toLowerCase(), banned: false });
  if (!store || store.logoFileId !== input.fileId) throw new AppError('not_found', 'No such logo.');
  const file = await ctx.em.findOne(StoredFileSchema, { id: input.fileId, store: store.id });
  if (!file) throw new AppError('not_found', 'No such logo.');
  return { contentType: file.contentType, size: file.size, storageKey: file.storageKey };
}
