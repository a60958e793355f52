/**
 * A keyed product's license-key stock: adding keys (sealed, deduplicated by their hash), listing
 * them masked (dashboard and merchant API), deleting an unsold one, counting what is available
 * per product and what each order line holds, and taking an order's keys back on a refund.
 * Claiming keys for an order line is one SKIP LOCKED statement of the repository (claimKeys);
 * the values' crypto is license-key-crypto.ts's.
 */
import { raw } from '@mikro-orm/core';
import type { FilterQuery } from '@mikro-orm/postgresql';
import type { TMerchantKeyListQuery } from '@svc/schemas';
import { cursorScope, decodeCursor, keysetPage } from '../../lib/cursor.js';
import { AppError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { ServiceContext } from '../request/context.js';
import { LicenseKeySchema, type LicenseKey, type Product } from './catalog.entities.js';
import { insertKeys } from './catalog.repo.js';
import { decryptLicenseKey, keySealer, maskKey } from './license-key-crypto.js';
import { findProduct } from './products.js';

/** Whether stock is counted: only products delivered by license keys run out. */
export function isKeyed(product: Pick<Product, 'deliveryMethods'>): boolean {
  return product.deliveryMethods.includes('licenseKeys');
}

/** Available keys per product, for the keyed ones among `products`. */
export async function stockOf(
  ctx: ServiceContext,
  products: Array<Pick<Product, 'id' | 'deliveryMethods'>>,
): Promise<Map<string, number>> {
  const keyed = products.filter(isKeyed).map((p) => p.id);
  const stock = new Map<string, number>(keyed.map((id) => [id, 0]));
  if (keyed.length === 0) return stock;
  const rows = await ctx.em
    .createQueryBuilder(LicenseKeySchema, 'k')
    .select(['k.product', raw('count(*) as n')])
    .where({ product: { $in: keyed }, status: 'available' })
    .groupBy('k.product')
    .execute<Array<{ product: string; n: string }>>('all');
  for (const row of rows) stock.set(row.product, Number(row.n));
  return stock;
}

/**
 * Adds keys to a keyed product's stock. Values are trimmed; empty lines are ignored;
 * duplicates within the import and against stock are dropped (the unique
 * (product, value hash) constraint decides, so two imports racing cannot both add one).
 * Serving the orders that waited for them is the restock flow's (flows/restock.ts).
 */
export async function importKeys(
  ctx: ServiceContext,
  input: { storeId: string; productId: string; keys: string[] },
): Promise<{ added: number; duplicates: number }> {
  const product = await findProduct(ctx, input.storeId, ctx.livemode, input.productId);
  if (!isKeyed(product)) throw new AppError('conflict', 'This product is not delivered by license keys.');
  const sealer = keySealer(ctx.deps.config);
  const values = input.keys.map((key) => key.trim()).filter((key) => key.length > 0);
  const unique = new Map<string, string>();
  for (const value of values) unique.set(sealer.hash(value), value);
  const now = ctx.clock.now();
  const added = await insertKeys(
    ctx.em,
    [...unique.entries()].map(([valueHash, value]) => ({
      id: newId(),
      productId: product.id,
      livemode: product.livemode,
      valueEnc: sealer.seal(value),
      valueHash,
      createdAt: now,
    })),
  );
  return { added, duplicates: values.length - added };
}

export async function listKeys(
  ctx: ServiceContext,
  input: {
    storeId: string;
    productId: string;
    status?: 'available' | 'assigned' | 'revoked' | undefined;
    limit?: number | undefined;
    cursor?: string | undefined;
  },
) {
  const product = await findProduct(ctx, input.storeId, ctx.livemode, input.productId);
  const limit = input.limit ?? 50;
  const cursorKey = ctx.deps.config.encryptionKey;
  const scope = cursorScope('dashboard.license-keys', {
    storeId: input.storeId,
    productId: product.id,
    status: input.status,
  });
  const after = input.cursor ? decodeCursor(cursorKey, scope, input.cursor).id : undefined;
  const keys = await ctx.em.find(
    LicenseKeySchema,
    {
      product: product.id,
      ...(input.status ? { status: input.status } : {}),
      ...(after ? { id: { $gt: after } } : {}),
    },
    { orderBy: { id: 'asc' }, limit: limit + 1 },
  );
  // Keyset by id alone: the position's time is unused.
  const { page, hasMore, nextCursor } = keysetPage(cursorKey, scope, keys, limit, () => 0);
  const count = (status: 'available' | 'assigned' | 'revoked') =>
    ctx.em.count(LicenseKeySchema, { product: product.id, status });
  const [available, assigned, revoked] = await Promise.all([count('available'), count('assigned'), count('revoked')]);
  return {
    counts: { available, assigned, revoked },
    keys: page.map((key) => {
      const value = decryptLicenseKey(ctx.deps.config, key.valueEnc);
      return {
        id: key.id,
        livemode: key.livemode,
        masked: maskKey(value),
        status: key.status,
        createdAt: key.createdAt.toISOString(),
        assignedAt: key.assignedAt?.toISOString() ?? null,
      };
    }),
    hasMore,
    nextCursor,
  };
}

/** The merchant's view of a key's status: a key taken back or whose license was disabled is `disabled`. */
const MERCHANT_KEY_STATUS: Record<'available' | 'assigned' | 'disabled', FilterQuery<LicenseKey>> = {
  available: { status: 'available' },
  assigned: { status: 'assigned', disabledAt: null },
  disabled: { $or: [{ status: 'revoked' }, { disabledAt: { $ne: null } }] },
};

/** A product's keys, masked, with the stock counts (the merchant API); keyset by id. */
export async function listMerchantKeys(ctx: ServiceContext, input: TMerchantKeyListQuery) {
  const product = await findProduct(ctx, input.storeId, ctx.livemode, input.productId);
  const limit = input.limit ?? 50;
  const cursorKey = ctx.deps.config.encryptionKey;
  const scope = cursorScope('license-keys', { storeId: input.storeId, productId: product.id, status: input.status });
  const after = input.cursor ? decodeCursor(cursorKey, scope, input.cursor).id : undefined;
  const keys = await ctx.em.find(
    LicenseKeySchema,
    {
      $and: [
        { product: product.id },
        input.status ? MERCHANT_KEY_STATUS[input.status] : {},
        after ? { id: { $gt: after } } : {},
      ],
    },
    {
      orderBy: { id: 'asc' },
      limit: limit + 1,
      populate: ['order'],
      fields: ['id', 'livemode', 'valueEnc', 'status', 'disabledAt', 'assignedAt', 'createdAt', 'order.number'],
    },
  );
  // Keyset by id alone: the position's time is unused.
  const { page, hasMore, nextCursor } = keysetPage(cursorKey, scope, keys, limit, () => 0);
  const count = (status: keyof typeof MERCHANT_KEY_STATUS) =>
    ctx.em.count(LicenseKeySchema, { $and: [{ product: product.id }, MERCHANT_KEY_STATUS[status]] });
  const [available, assigned, disabled] = await Promise.all([count('available'), count('assigned'), count('disabled')]);
  return {
    licenseKeys: page.map((key) => ({
      id: key.id,
      livemode: key.livemode,
      masked: maskKey(decryptLicenseKey(ctx.deps.config, key.valueEnc)),
      status: key.status === 'revoked' || key.disabledAt ? ('disabled' as const) : key.status,
      orderId: key.order ? `ORD-${key.order.getEntity().number}` : null,
      assignedAt: key.assignedAt?.toISOString() ?? null,
      createdAt: key.createdAt.toISOString(),
    })),
    counts: { available, assigned, disabled },
    hasMore,
    nextCursor,
  };
}

/** Deletes an unsold key; a sold one stays with its order. */
export async function deleteKey(
  ctx: ServiceContext,
  input: { storeId: string; productId: string; keyId: string },
): Promise<void> {
  const product = await findProduct(ctx, input.storeId, ctx.livemode, input.productId);
  const deleted = await ctx.em.nativeDelete(LicenseKeySchema, {
    id: input.keyId,
    product: product.id,
    status: 'available',
  });
  if (deleted === 0) {
    const exists = await ctx.em.count(LicenseKeySchema, { id: input.keyId, product: product.id });
    throw exists
      ? new AppError('conflict', 'This key was sold; it stays with its order.')
      : new AppError('not_found', 'Key not found.');
  }
}

/** The keys each line of an order holds (line id -> count). */
export async function assignedKeyCounts(ctx: ServiceContext, orderId: string): Promise<Map<string, number>> {
  const rows = await ctx.em
    .createQueryBuilder(LicenseKeySchema, 'k')
    .select(['k.orderLineId', raw('count(*) as n')])
    .where({ order: orderId, status: 'assigned' })
    .groupBy('k.orderLineId')
    .execute<Array<{ orderLineId: string; n: string }>>('all');
  return new Map(rows.map((row) => [row.orderLineId, Number(row.n)]));
}

/** A refund takes back the keys an order holds; returns how many. */
export async function revokeOrderKeys(ctx: ServiceContext, orderId: string): Promise<number> {
  return ctx.em.nativeUpdate(LicenseKeySchema, { order: orderId, status: 'assigned' }, { status: 'revoked' });
}
