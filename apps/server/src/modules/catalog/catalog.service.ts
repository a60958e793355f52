/**
 * Products and their stock: the seller's CRUD (each change recorded in the outbox in its
 * own transaction), license-key import and listing, and the public catalog.
 */
import { raw } from '@mikro-orm/core';
import type { EntityManager, FilterQuery } from '@mikro-orm/postgresql';
import type {
  TCreateProductInput,
  TListProductsQuery,
  TMerchantKeyListQuery,
  TProduct,
  TPublicProduct,
  TUpdateProductInput,
} from '@svc/schemas';
import type { Config } from '../../config.js';
import { decodeCursor, encodeCursor, keysetPage } from '../../lib/cursor.js';
import { deriveKey, hmacHex, seal, unseal } from '../../lib/crypto.js';
import { AppError, invalidField } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { inputAmountToMinor, minorToAmount } from '../../lib/money.js';
import type { ServiceContext } from '../../trpc/context.js';
import { recordEvent } from '../events/outbox.js';
import { StoreSchema, type Store } from '../stores/stores.entities.js';
import { selectStoreRef } from '../stores/stores.repo.js';
import { toPublicStore } from '../stores/stores.service.js';
import { LicenseKeySchema, ProductSchema, type LicenseKey, type Product } from './catalog.entities.js';
import { insertKeys } from './catalog.repo.js';
import { ON_REPLICA } from '../../db/replicas.js';

export function keyCipher(config: Config) {
  return {
    enc: deriveKey(config.encryptionKey, 'license-key-enc'),
    hash: deriveKey(config.encryptionKey, 'license-key-hash'),
  };
}

export function licenseKeyHash(config: Config, value: string): string {
  return hmacHex(keyCipher(config).hash, value);
}

export function decryptLicenseKey(config: Config, sealed: string): string {
  return unseal(keyCipher(config).enc, sealed);
}

/** Whether stock is counted: only products delivered by license keys run out. */
export function isKeyed(product: Pick<Product, 'deliveryMethods'>): boolean {
  return product.deliveryMethods.includes('licenseKeys');
}

/** Available keys per product, for the keyed ones among `products`. */
export async function stockOf(
  em: EntityManager,
  products: Array<Pick<Product, 'id' | 'deliveryMethods'>>,
): Promise<Map<string, number>> {
  const keyed = products.filter(isKeyed).map((p) => p.id);
  const stock = new Map<string, number>(keyed.map((id) => [id, 0]));
  if (keyed.length === 0) return stock;
  const rows = await em
    .createQueryBuilder(LicenseKeySchema, 'k')
    .select(['k.product', raw('count(*) as n')])
    .where({ product: { $in: keyed }, status: 'available' })
    .groupBy('k.product')
    .execute<Array<{ product: string; n: string }>>('all');
  for (const row of rows) stock.set(row.product, Number(row.n));
  return stock;
}

export function toProductView(product: Product, currency: string, stock: number | null): TProduct {
  return {
    id: product.id,
    storeId: product.store.id,
    name: product.name,
    description: product.description,
    price: minorToAmount(product.priceMinor, currency),
    currency,
    status: product.status,
    deliveryMethods: product.deliveryMethods,
    deliveryInstructions: product.deliveryInstructions,
    customFields: product.customFields,
    minQuantity: product.minQuantity,
    maxQuantity: product.maxQuantity ?? null,
    licenseActivationLimit: product.licenseActivationLimit ?? null,
    licenseValidityDays: product.licenseValidityDays ?? null,
    stock,
    createdAt: product.createdAt.toISOString(),
    updatedAt: product.updatedAt.toISOString(),
  };
}

export function toPublicProduct(view: TProduct): TPublicProduct {
  const {
    id,
    storeId,
    name,
    description,
    price,
    currency,
    deliveryMethods,
    customFields,
    minQuantity,
    maxQuantity,
    stock,
  } = view;
  return {
    id,
    storeId,
    name,
    description,
    price,
    currency,
    deliveryMethods,
    customFields,
    minQuantity,
    maxQuantity,
    stock,
  };
}

async function storeOf(em: EntityManager, storeId: string): Promise<Store> {
  return em.findOneOrFail(StoreSchema, { id: storeId });
}

async function findProduct(em: EntityManager, storeId: string, productId: string): Promise<Product> {
  const product = await em.findOne(ProductSchema, { id: productId, store: storeId, deletedAt: null });
  if (!product) throw new AppError('not_found', 'Product not found.');
  return product;
}

async function viewOf(em: EntityManager, product: Product, currency: string): Promise<TProduct> {
  const stock = await stockOf(em, [product]);
  return toProductView(product, currency, stock.get(product.id) ?? null);
}

function checkInstructions(methods: string[], instructions: string): void {
  if (methods.includes('deliveryInstructions') && instructions.trim() === '') {
    throw invalidField('deliveryInstructions', 'Required when deliveryMethods includes deliveryInstructions.');
  }
}

export async function createProduct(ctx: ServiceContext, input: TCreateProductInput): Promise<TProduct> {
  const store = await storeOf(ctx.em, input.storeId);
  checkInstructions(input.deliveryMethods, input.deliveryInstructions ?? '');
  return ctx.em.transactional(async (em) => {
    const now = ctx.clock.now();
    const product = em.create(ProductSchema, {
      id: newId(),
      store: store.id,
      name: input.name,
      description: input.description ?? '',
      priceMinor: inputAmountToMinor(input.price, store.currency, 'price'),
      status: input.status ?? 'active',
      deliveryMethods: input.deliveryMethods,
      deliveryInstructions: input.deliveryInstructions ?? '',
      customFields: input.customFields ?? [],
      minQuantity: input.minQuantity ?? 1,
      maxQuantity: input.maxQuantity ?? null,
      licenseActivationLimit: input.licenseActivationLimit ?? null,
      licenseValidityDays: input.licenseValidityDays ?? null,
      deletedAt: null,
      createdAt: now,
      updatedAt: now,
    });
    const view = toProductView(product, store.currency, isKeyed(product) ? 0 : null);
    await recordEvent(em, { storeId: store.id, type: 'product.created', payload: { product: view }, at: now });
    return view;
  });
}

export async function updateProduct(ctx: ServiceContext, input: TUpdateProductInput): Promise<TProduct> {
  const store = await storeOf(ctx.em, input.storeId);
  return ctx.em.transactional(async (em) => {
    const product = await findProduct(em, input.storeId, input.productId);
    if (input.name !== undefined) product.name = input.name;
    if (input.price !== undefined) product.priceMinor = inputAmountToMinor(input.price, store.currency, 'price');
    if (input.description !== undefined) product.description = input.description;
    if (input.status !== undefined) product.status = input.status;
    if (input.deliveryMethods !== undefined) product.deliveryMethods = input.deliveryMethods;
    if (input.deliveryInstructions !== undefined) product.deliveryInstructions = input.deliveryInstructions;
    if (input.customFields !== undefined) product.customFields = input.customFields;
    if (input.minQuantity !== undefined) product.minQuantity = input.minQuantity;
    if (input.maxQuantity !== undefined) product.maxQuantity = input.maxQuantity;
    if (input.licenseActivationLimit !== undefined) product.licenseActivationLimit = input.licenseActivationLimit;
    if (input.licenseValidityDays !== undefined) product.licenseValidityDays = input.licenseValidityDays;
    if (product.maxQuantity != null && product.minQuantity > product.maxQuantity) {
      throw invalidField('minQuantity', 'minQuantity is above maxQuantity');
    }
    checkInstructions(product.deliveryMethods, product.deliveryInstructions);
    const now = ctx.clock.now();
    product.updatedAt = now;
    // Flush first: a change the database refuses must leave no event behind.
    await em.flush();
    const view = await viewOf(em, product, store.currency);
    await recordEvent(em, { storeId: store.id, type: 'product.updated', payload: { product: view }, at: now });
    return view;
  });
}

/** Soft delete: orders keep naming the product; it leaves the catalog and the dashboard. */
export async function deleteProduct(ctx: ServiceContext, input: { storeId: string; productId: string }): Promise<void> {
  const store = await storeOf(ctx.em, input.storeId);
  await ctx.em.transactional(async (em) => {
    const product = await findProduct(em, input.storeId, input.productId);
    const now = ctx.clock.now();
    product.deletedAt = now;
    product.status = 'archived';
    product.updatedAt = now;
    await recordEvent(em, {
      storeId: store.id,
      type: 'product.deleted',
      payload: { product: toProductView(product, store.currency, null) },
      at: now,
    });
  });
}

export async function getProduct(
  ctx: ServiceContext,
  input: { storeId: string; productId: string },
): Promise<TProduct> {
  const store = await storeOf(ctx.em, input.storeId);
  return viewOf(ctx.em, await findProduct(ctx.em, input.storeId, input.productId), store.currency);
}

export async function listProducts(ctx: ServiceContext, input: { storeId: string }): Promise<TProduct[]> {
  const store = await storeOf(ctx.em, input.storeId);
  const products = await ctx.em.find(
    ProductSchema,
    { store: store.id, deletedAt: null },
    { orderBy: { createdAt: 'asc', id: 'asc' } },
  );
  const stock = await stockOf(ctx.em, products);
  return products.map((p) => toProductView(p, store.currency, stock.get(p.id) ?? null));
}

/**
 * Adds keys to a keyed product's stock. Values are trimmed; empty lines are ignored;
 * duplicates within the import and against stock are dropped (the unique
 * (product, value hash) constraint decides, so two imports racing cannot both add one).
 * Serving the orders that waited for them is fulfilment's (fulfilment/restock.service.ts).
 */
export async function importKeys(
  ctx: ServiceContext,
  input: { storeId: string; productId: string; keys: string[] },
): Promise<{ added: number; duplicates: number }> {
  const product = await findProduct(ctx.em, input.storeId, input.productId);
  if (!isKeyed(product)) throw new AppError('conflict', 'This product is not delivered by license keys.');
  const cipher = keyCipher(ctx.deps.config);
  const values = input.keys.map((key) => key.trim()).filter((key) => key.length > 0);
  const unique = new Map<string, string>();
  for (const value of values) unique.set(hmacHex(cipher.hash, value), value);
  const now = ctx.clock.now();
  const added = await insertKeys(
    ctx.em,
    [...unique.entries()].map(([valueHash, value]) => ({
      id: newId(),
      productId: product.id,
      valueEnc: seal(cipher.enc, value),
      valueHash,
      createdAt: now,
    })),
  );
  return { added, duplicates: values.length - added };
}

/** The keys each line of an order holds (line id -> count). */
export async function assignedKeyCounts(em: EntityManager, orderId: string): Promise<Map<string, number>> {
  const rows = await em
    .createQueryBuilder(LicenseKeySchema, 'k')
    .select(['k.orderLineId', raw('count(*) as n')])
    .where({ order: orderId, status: 'assigned' })
    .groupBy('k.orderLineId')
    .execute<Array<{ orderLineId: string; n: string }>>('all');
  return new Map(rows.map((row) => [row.orderLineId, Number(row.n)]));
}

/** A refund takes back the keys an order holds; returns how many. */
export async function revokeOrderKeys(em: EntityManager, orderId: string): Promise<number> {
  return em.nativeUpdate(LicenseKeySchema, { order: orderId, status: 'assigned' }, { status: 'revoked' });
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
  const product = await findProduct(ctx.em, input.storeId, input.productId);
  const limit = input.limit ?? 50;
  const after = input.cursor ? decodeCursor(ctx.deps.config.encryptionKey, input.cursor).id : undefined;
  const keys = await ctx.em.find(
    LicenseKeySchema,
    {
      product: product.id,
      ...(input.status ? { status: input.status } : {}),
      ...(after ? { id: { $gt: after } } : {}),
    },
    { orderBy: { id: 'asc' }, limit: limit + 1 },
  );
  const hasMore = keys.length > limit;
  const page = keys.slice(0, limit);
  const last = page[page.length - 1];
  return {
    keys: page.map((key) => {
      const value = decryptLicenseKey(ctx.deps.config, key.valueEnc);
      return {
        id: key.id,
        masked: maskKey(value),
        status: key.status,
        createdAt: key.createdAt.toISOString(),
        assignedAt: key.assignedAt?.toISOString() ?? null,
      };
    }),
    hasMore,
    nextCursor: hasMore && last ? encodeCursor(ctx.deps.config.encryptionKey, { us: '0', id: last.id }) : null,
  };
}

/** Always these eight dots, whatever the key's length: a mask must not tell the length. */
const KEY_MASK = '••••••••';
/** Keys this short show nothing: four characters of eight are half the key. */
const KEY_MASK_SHORT = 8;

/**
 * A key as every list of keys and every license view shows it, never the key: eight dots, then its
 * last four characters when it has more than eight (issue 26: `Q` showed `••••Q`, and the dots
 * counted the length of longer keys). Characters are code points, so no pair is split.
 */
export function maskKey(value: string): string {
  const characters = Array.from(value);
  return characters.length <= KEY_MASK_SHORT ? KEY_MASK : `${KEY_MASK}${characters.slice(-4).join('')}`;
}

/** A page of the store's products, newest first (the merchant API), with their stock; `status` filters. */
export async function listProductPage(ctx: ServiceContext, input: TListProductsQuery) {
  const store = await storeOf(ctx.em, input.storeId);
  const limit = input.limit ?? 50;
  const before = input.cursor ? decodeCursor(ctx.deps.config.encryptionKey, input.cursor) : undefined;
  // Created from the clock's Dates, so a product's time is whole milliseconds: the cursor's
  // microseconds divide exactly.
  const at = before ? new Date(Number(BigInt(before.us) / 1000n)) : undefined;
  const products = await ctx.em.find(
    ProductSchema,
    {
      store: store.id,
      deletedAt: null,
      ...(input.status ? { status: input.status } : {}),
      ...(before && at ? { $or: [{ createdAt: { $lt: at } }, { createdAt: at, id: { $lt: before.id } }] } : {}),
    },
    // A listing: on a read replica when there is one.
    { orderBy: { createdAt: 'desc', id: 'desc' }, limit: limit + 1, ...ON_REPLICA },
  );
  const { page, hasMore, nextCursor } = keysetPage(ctx.deps.config.encryptionKey, products, limit, (p) =>
    String(p.createdAt.getTime() * 1000),
  );
  const stock = await stockOf(ctx.em, page);
  return { products: page.map((p) => toProductView(p, store.currency, stock.get(p.id) ?? null)), hasMore, nextCursor };
}

/** The merchant's view of a key's status: a key taken back or whose license was disabled is `disabled`. */
const MERCHANT_KEY_STATUS: Record<'available' | 'assigned' | 'disabled', FilterQuery<LicenseKey>> = {
  available: { status: 'available' },
  assigned: { status: 'assigned', disabledAt: null },
  disabled: { $or: [{ status: 'revoked' }, { disabledAt: { $ne: null } }] },
};

/** A product's keys, masked, with the stock counts (the merchant API); keyset by id. */
export async function listMerchantKeys(ctx: ServiceContext, input: TMerchantKeyListQuery) {
  const product = await findProduct(ctx.em, input.storeId, input.productId);
  const limit = input.limit ?? 50;
  const after = input.cursor ? decodeCursor(ctx.deps.config.encryptionKey, input.cursor).id : undefined;
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
      fields: ['id', 'valueEnc', 'status', 'disabledAt', 'assignedAt', 'createdAt', 'order.number'],
    },
  );
  const hasMore = keys.length > limit;
  const page = keys.slice(0, limit);
  const last = page[page.length - 1];
  const count = (status: keyof typeof MERCHANT_KEY_STATUS) =>
    ctx.em.count(LicenseKeySchema, { $and: [{ product: product.id }, MERCHANT_KEY_STATUS[status]] });
  const [available, assigned, disabled] = await Promise.all([count('available'), count('assigned'), count('disabled')]);
  return {
    licenseKeys: page.map((key) => ({
      id: key.id,
      masked: maskKey(decryptLicenseKey(ctx.deps.config, key.valueEnc)),
      status: key.status === 'revoked' || key.disabledAt ? ('disabled' as const) : key.status,
      orderId: key.order ? `ORD-${key.order.getEntity().number}` : null,
      assignedAt: key.assignedAt?.toISOString() ?? null,
      createdAt: key.createdAt.toISOString(),
    })),
    counts: { available, assigned, disabled },
    hasMore,
    nextCursor: hasMore && last ? encodeCursor(ctx.deps.config.encryptionKey, { us: '0', id: last.id }) : null,
  };
}

/** Deletes an unsold key; a sold one stays with its order. */
export async function deleteKey(
  ctx: ServiceContext,
  input: { storeId: string; productId: string; keyId: string },
): Promise<void> {
  const product = await findProduct(ctx.em, input.storeId, input.productId);
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

/** A store that may sell: exists and is not banned, by id or subdomain (`shopId`), or by subdomain only. */
export async function findSellingStore(
  em: EntityManager,
  ref: string,
  by: 'id-or-subdomain' | 'subdomain' = 'id-or-subdomain',
): Promise<Store> {
  const subdomain = ref.toLowerCase();
  const store = await em.findOne(
    StoreSchema,
    by === 'subdomain' ? { subdomain } : { $or: [{ id: ref }, { subdomain }] },
  );
  if (!store) throw new AppError('not_found', 'Store not found.');
  if (store.banned) throw new AppError('store_banned', 'This store is not available.');
  return store;
}

/** What the cart and order creation need of the store. */
export interface SellingStoreRef {
  id: string;
  currency: string;
}

/**
 * findSellingStore for the hot buyer paths (cart, order creation): the same rules (by id or
 * subdomain, an id match first; 404 unknown, 403 banned) in one raw statement, without
 * hydrating the entity.
 */
export async function findSellingStoreRef(em: EntityManager, ref: string): Promise<SellingStoreRef> {
  const store = await selectStoreRef(em, ref);
  if (!store) throw new AppError('not_found', 'Store not found.');
  if (store.banned) throw new AppError('store_banned', 'This store is not available.');
  return { id: store.id, currency: store.currency };
}

export async function publicProducts(ctx: ServiceContext, store: Store): Promise<TPublicProduct[]> {
  // The public catalog is a listing: on a read replica when there is one.
  const products = await ctx.em.find(
    ProductSchema,
    { store: store.id, status: 'active', deletedAt: null },
    { orderBy: { createdAt: 'asc', id: 'asc' }, ...ON_REPLICA },
  );
  const stock = await stockOf(ctx.em, products);
  return products.map((p) => toPublicProduct(toProductView(p, store.currency, stock.get(p.id) ?? null)));
}

export async function storefront(ctx: ServiceContext, subdomain: string) {
  const store = await findSellingStore(ctx.em, subdomain, 'subdomain');
  return { store: toPublicStore(store), products: await publicProducts(ctx, store) };
}
