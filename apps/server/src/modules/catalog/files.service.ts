/** Downloadable files attached to products: upload into storage, list, delete. */
import type { Readable } from 'node:stream';
import { AppError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { FileTooLargeError } from '../../lib/storage.js';
import type { ServiceContext } from '../request/context.js';
import { ProductSchema, StoredFileSchema, type StoredFile } from './catalog.entities.js';
import { describeBytes } from '@svc/schemas';

export interface FileView {
  id: string;
  livemode: boolean;
  productId: string | null;
  name: string;
  contentType: string;
  size: number;
  sha256: string;
  createdAt: string;
}

export function toFileView(file: StoredFile): FileView {
  return {
    id: file.id,
    livemode: file.livemode,
    productId: file.product?.id ?? null,
    name: file.name,
    contentType: file.contentType,
    size: file.size,
    sha256: file.sha256,
    createdAt: file.createdAt.toISOString(),
  };
}

/** A name safe to show and to send back in Content-Disposition. */
function cleanName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  const cleaned = base
    // eslint-disable-next-line no-control-regex -- it matches control characters on purpose, to remove them
    .replace(/[\u0000-\u001f\u007f"]/g, '')
    .trim()
    .slice(0, 255);
  return cleaned || 'file';
}

async function findUploadTarget(ctx: ServiceContext, storeId: string, productId: string) {
  const product = await ctx.em.findOne(ProductSchema, {
    id: productId,
    store: storeId,
    livemode: ctx.livemode,
    deletedAt: null,
  });
  if (!product) throw new AppError('not_found', 'Product not found.');
  return product;
}

export async function uploadProductFile(
  ctx: ServiceContext,
  input: { storeId: string; productId: string; name: string; contentType: string; stream: Readable },
): Promise<FileView> {
  const product = await findUploadTarget(ctx, input.storeId, input.productId);
  const id = newId();
  const storageKey = `${input.storeId}/${id}`;
  let stored;
  try {
    stored = await ctx.deps.storage.write(storageKey, input.stream, ctx.deps.config.fileMaxBytes);
  } catch (error) {
    if (error instanceof FileTooLargeError)
      throw new AppError('payload_too_large', `A file must be ${describeBytes(error.maxBytes)} or smaller.`);
    throw error;
  }
  try {
    const file = ctx.em.create(StoredFileSchema, {
      id,
      store: input.storeId,
      livemode: product.livemode,
      product,
      name: cleanName(input.name),
      contentType: input.contentType.slice(0, 100) || 'application/octet-stream',
      size: stored.size,
      sha256: stored.sha256,
      storageKey,
      createdAt: ctx.clock.now(),
    });
    await ctx.em.flush();
    return toFileView(file);
  } catch (error) {
    // No row, no file: a failed insert must not leave an orphan in storage.
    await ctx.deps.storage.remove(storageKey);
    throw error;
  }
}

export async function listProductFiles(
  ctx: ServiceContext,
  input: { storeId: string; productId: string },
): Promise<FileView[]> {
  await findUploadTarget(ctx, input.storeId, input.productId);
  const files = await ctx.em.find(
    StoredFileSchema,
    { product: input.productId, store: input.storeId, livemode: ctx.livemode },
    { orderBy: { createdAt: 'asc', id: 'asc' } },
  );
  return files.map(toFileView);
}

export async function deleteProductFile(
  ctx: ServiceContext,
  input: { storeId: string; productId: string; fileId: string },
): Promise<void> {
  const file = await ctx.em.findOne(StoredFileSchema, {
    id: input.fileId,
    product: input.productId,
    store: input.storeId,
    livemode: ctx.livemode,
  });
  if (!file) throw new AppError('not_found', 'File not found.');
  await ctx.em.remove(file).flush();
  await ctx.deps.storage.remove(file.storageKey);
}
