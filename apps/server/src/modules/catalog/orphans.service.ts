/**
 * The orphan sweep: objects in the object store that no row names any more. A row and its object
 * are removed one after the other (the row's transaction first, then the object; an upload writes
 * the object first, then the row), so a process that dies between the two leaves an object behind.
 * An object is swept once it is a day old (an upload in flight has no row yet) and no `file` row
 * (product files, logos, payment proofs) or product image names it (docs/decisions.md, #43).
 */
import { checkedKey } from '../../lib/storage.js';
import type { ServiceContext } from '../request/context.js';
import { StoredFileSchema } from './catalog.entities.js';
import { listedImageIds } from './catalog.repo.js';

/** Older than any upload in flight. */
export const ORPHAN_MIN_AGE_MS = 24 * 60 * 60_000;
const BATCH = 500;
/** `<storeId>/<imageId>` (an original) or `<storeId>/<imageId>-w<width>` (a rendition). */
const IMAGE_KEY = /^([^/]+)\/([^/]+?)(?:-w\d+)?$/;

/** Removes the store's orphaned objects; returns how many. Local disk lists nothing: it is swept by no one. */
export async function sweepOrphanedObjects(ctx: ServiceContext): Promise<number> {
  const { storage } = ctx.deps;
  if (!storage.list) return 0;
  const cutoff = ctx.clock.now().getTime() - ORPHAN_MIN_AGE_MS;
  let removed = 0;
  let batch: string[] = [];
  for await (const object of storage.list()) {
    if (object.modifiedAt.getTime() > cutoff || !isSvcKey(object.key)) continue;
    batch.push(object.key);
    if (batch.length < BATCH) continue;
    removed += await removeUnnamed(ctx, batch);
    batch = [];
  }
  if (batch.length > 0) removed += await removeUnnamed(ctx, batch);
  return removed;
}

/** Only keys of the shape svc makes are ever swept (an object put there by hand is not svc's to remove). */
function isSvcKey(key: string): boolean {
  try {
    checkedKey(key);
    return true;
  } catch {
    return false;
  }
}

async function removeUnnamed(ctx: ServiceContext, keys: string[]): Promise<number> {
  const em = ctx.em.fork();
  const files = await em.find(StoredFileSchema, { storageKey: { $in: keys } }, { fields: ['storageKey'] });
  const named = new Set(files.map((file) => file.storageKey));
  const images = keys.flatMap((key) => {
    const match = IMAGE_KEY.exec(key);
    return match ? [{ key, storeId: match[1]!, imageId: match[2]! }] : [];
  });
  const listed = await listedImageIds(
    em,
    [...new Set(images.map((image) => image.storeId))],
    images.map((image) => image.imageId),
  );
  for (const image of images) if (listed.has(image.imageId)) named.add(image.key);
  let removed = 0;
  for (const key of keys) {
    if (named.has(key)) continue;
    await ctx.deps.storage.remove(key);
    removed++;
  }
  if (removed > 0) ctx.log.info({ removed }, 'removed objects no row names');
  return removed;
}
