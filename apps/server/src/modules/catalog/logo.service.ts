/**
 * The store's logo (DESIGN §9.2): one PNG, JPEG or WebP of at most 1 MB, stored like product
 * files (a `file` row of the store, no product, in the same storage) and named by the store's
 * `logoFileId`. Here, not in the stores module: the file table is the catalog's, and the stores
 * module must not import it (the catalog imports stores).
 */
import type { Readable } from 'node:stream';
import { AppError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { FileTooLargeError } from '../../lib/storage.js';
import type { ServiceContext } from '../request/context.js';
import { StoreSchema } from '../stores/stores.entities.js';
import { toPublicStore } from '../stores/stores.service.js';
import { StoredFileSchema } from './catalog.entities.js';

export const LOGO_MAX_BYTES = 1024 * 1024;

/** The image type a file's first bytes say, of the three a logo may be. */
export function logoTypeOf(head: Buffer): 'image/png' | 'image/jpeg' | 'image/webp' | undefined {
  if (head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (head.subarray(0, 4).toString('latin1') === 'RIFF' && head.subarray(8, 12).toString('latin1') === 'WEBP')
    return 'image/webp';
  return undefined;
}

async function headOf(stream: Readable, bytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    chunks.push(chunk as Buffer);
    size += (chunk as Buffer).length;
    if (size >= bytes) break;
  }
  stream.destroy();
  return Buffer.concat(chunks).subarray(0, bytes);
}

/**
 * Stores a new logo in place of the old one (whose file is then removed). The type is decided by
 * the bytes, not by what the client said; anything else is 415, anything larger 413.
 */
export async function uploadStoreLogo(
  ctx: ServiceContext,
  input: { storeId: string; stream: Readable },
): Promise<{ logoUrl: string | null }> {
  const store = await ctx.em.findOneOrFail(StoreSchema, { id: input.storeId });
  const id = newId();
  const storageKey = `${store.id}/${id}`;
  let stored;
  try {
    stored = await ctx.deps.storage.write(storageKey, input.stream, LOGO_MAX_BYTES);
  } catch (error) {
    if (error instanceof FileTooLargeError)
      throw new AppError('payload_too_large', `A logo may be at most ${LOGO_MAX_BYTES} bytes.`);
    throw error;
  }
  try {
    const contentType = logoTypeOf(await headOf(ctx.deps.storage.read(storageKey), 12));
    if (!contentType) throw new AppError('unsupported_media_type', 'A logo is a PNG, JPEG or WebP image.');
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
