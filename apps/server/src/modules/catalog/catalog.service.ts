/**
 * Products: the seller's CRUD (each change recorded in the outbox in its own transaction), the
 * merchant API's product pages, the public catalog and the stores that may sell. A product's
 * license-key stock is key-store.ts's.
 */
import { inTransaction } from '../request/transaction.js';
import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { MIN_ABOVE_MAX } from '@svc/schemas';
import type {
  TCreateProductInput,
  TListProductsQuery,
  TProduct,
  TPublicProduct,
  TStorePublic,
  TUpdateProductInput,
} from '@svc/schemas';
import { cursorScope, decodeCursor, keysetPage } from '../../lib/cursor.js';
import { AppError, invalidField } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { renderMarkdown } from '../../lib/markdown.js';
import { inputAmountToMinor, minorToAmount } from '../../lib/money.js';
import type { TestModeAccess } from '../access/test-mode.js';
import type { ServiceContext } from '../request/context.js';
import { recordEvent } from '../events/outbox.js';
import { StoreSchema, type Store } from '../stores/stores.entities.js';
import { selectStorefrontPage, selectStorefrontVersion } from './catalog.repo.js';
import { toPublicStore } from '../stores/store-views.js';
import { findSellingStore } from '../stores/selling-store.js';
import { ProductSchema, type Product } from './catalog.entities.js';
import { toImageView } from './images.service.js';
import { isKeyed, stockOf } from './key-store.js';
import { findProduct } from './products.js';
import { applyPlans, plansOf, toPlanView, type PlanFields } from './plans.js';
import { ON_REPLICA } from '../../db/replicas.js';

export function toProductView(
  product: Product,
  currency: string,
  stock: number | null,
  plans: PlanFields[] = [],
): TProduct {
  return {
    id: product.id,
    storeId: product.store.id,
    livemode: product.livemode,
    name: product.name,
    slug: product.slug,
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
    plans: plans.map((plan) => toPlanView(plan, currency)),
    taxCategory: product.taxCategory,
    stock,
    images: product.images.map((image) => toImageView(product.id, image)),
    createdAt: product.createdAt.toISOString(),
    updatedAt: product.updatedAt.toISOString(),
  };
}

export function toPublicProduct(view: TProduct): TPublicProduct {
  const {
    id,
    storeId,
    livemode,
    name,
    slug,
    description,
    price,
    currency,
    deliveryMethods,
    customFields,
    minQuantity,
    maxQuantity,
    stock,
    images,
    plans,
  } = view;
  return {
    id,
    storeId,
    livemode,
    name,
    slug,
    description,
    price,
    currency,
    deliveryMethods,
    customFields,
    minQuantity,
    maxQuantity,
    stock,
    images,
    // A buyer chooses among the active plans only.
    plans: plans.filter((plan) => plan.active),
    descriptionHtml: renderMarkdown(description),
  };
}

async function storeOf(em: EntityManager, storeId: string): Promise<Store> {
  return em.findOneOrFail(StoreSchema, { id: storeId });
}

async function viewOf(ctx: ServiceContext, product: Product, currency: string): Promise<TProduct> {
  const stock = await stockOf(ctx, [product]);
  const plans = await plansOf(ctx, [product]);
  return toProductView(product, currency, stock.get(product.id) ?? null, plans.get(product.id));
}

/** Products as views, with their stock and plans (two statements at most, whatever their number). */
async function viewsOf(ctx: ServiceContext, products: Product[], currency: string): Promise<TProduct[]> {
  const stock = await stockOf(ctx, products);
  const plans = await plansOf(ctx, products);
  return products.map((p) => toProductView(p, currency, stock.get(p.id) ?? null, plans.get(p.id)));
}

function checkInstructions(methods: string[], instructions: string): void {
  if (methods.includes('deliveryInstructions') && instructions.trim() === '') {
    throw invalidField('deliveryInstructions', 'Required when deliveryMethods includes deliveryInstructions.');
  }
}

/**
 * A recurring product's rules beside its plans: a license-key product's licenses follow their
 * subscription (no validity of their own), and a `price` sent with it must be its first active
 * plan's (the plan prices it; a client that sends the whole product back keeps working).
 */
function checkRecurring(product: Product, givenPrice: number | undefined, currency: string): void {
  if (!product.recurring) return;
  if (product.deliveryMethods.includes('licenseKeys') && product.licenseValidityDays != null) {
    throw invalidField(
      'licenseValidityDays',
      "A recurring product's licenses last as long as their subscription: leave licenseValidityDays null.",
    );
  }
  if (givenPrice !== undefined && inputAmountToMinor(givenPrice, currency, 'price') !== product.priceMinor) {
    throw invalidField('price', "A recurring product's price is its first active plan's: change the plan's price.");
  }
}

/** A name as a slug: `Starship Game (Steam key)` -> `starship-game-steam-key`. */
export function slugOf(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, 90)
    .replace(/^-+|-+$/g, '');
  return slug || 'product';
}

/** The name's slug, or with the first free `-2`, `-3`... when the store has it already. */
async function freeSlug(em: EntityManager, storeId: string, livemode: boolean, name: string): Promise<string> {
  const base = slugOf(name);
  const taken = new Set(
    (
      await em.find(
        ProductSchema,
        { store: storeId, livemode, $or: [{ slug: base }, { slug: { $like: `${base}-%` } }] },
        { fields: ['slug'] },
      )
    ).map((p) => p.slug),
  );
  if (!taken.has(base)) return base;
  let n = 2;
  while (taken.has(`${base}-${n}`)) n += 1;
  return `${base}-${n}`;
}

export async function createProduct(ctx: ServiceContext, input: TCreateProductInput): Promise<TProduct> {
  const store = await storeOf(ctx.em, input.storeId);
  checkInstructions(input.deliveryMethods, input.deliveryInstructions ?? '');
  return inTransaction(ctx, async (tx) => {
    const now = ctx.clock.now();
    const product = tx.em.create(ProductSchema, {
      id: newId(),
      store: store.id,
      livemode: ctx.livemode,
      name: input.name,
      // A slug two creates race for loses at the unique (store, slug): 409 conflict.
      slug: input.slug ?? (await freeSlug(tx.em, store.id, ctx.livemode, input.name)),
      description: input.description ?? '',
      priceMinor: input.price === undefined ? 0 : inputAmountToMinor(input.price, store.currency, 'price'),
      status: input.status ?? 'active',
      deliveryMethods: input.deliveryMethods,
      deliveryInstructions: input.deliveryInstructions ?? '',
      customFields: input.customFields ?? [],
      images: [],
      minQuantity: input.minQuantity ?? 1,
      maxQuantity: input.maxQuantity ?? null,
      licenseActivationLimit: input.licenseActivationLimit ?? null,
      licenseValidityDays: input.licenseValidityDays ?? null,
      taxCategory: input.taxCategory ?? 'standard',
      recurring: false,
      deletedAt: null,
      createdAt: now,
      updatedAt: now,
    });
    const plans = await applyPlans(tx, product, [], input.plans ?? [], store.currency, now, true);
    checkRecurring(product, input.price, store.currency);
    const view = toProductView(product, store.currency, isKeyed(product) ? 0 : null, plans);
    await recordEvent(tx, {
      storeId: store.id,
      livemode: product.livemode,
      type: 'product.created',
      payload: { product: view },
      at: now,
    });
    return view;
  });
}

export async function updateProduct(ctx: ServiceContext, input: TUpdateProductInput): Promise<TProduct> {
  const store = await storeOf(ctx.em, input.storeId);
  return inTransaction(ctx, async (tx) => {
    const product = await findProduct(tx, input.storeId, ctx.livemode, input.productId);
    if (input.name !== undefined) product.name = input.name;
    if (input.slug !== undefined) product.slug = input.slug;
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
    if (input.taxCategory !== undefined) product.taxCategory = input.taxCategory;
    if (product.maxQuantity != null && product.minQuantity > product.maxQuantity) {
      throw invalidField('minQuantity', MIN_ABOVE_MAX);
    }
    checkInstructions(product.deliveryMethods, product.deliveryInstructions);
    const now = ctx.clock.now();
    if (input.plans !== undefined) {
      const existing = (await plansOf(tx, [product])).get(product.id) ?? [];
      await applyPlans(tx, product, existing, input.plans, store.currency, now, false);
    }
    checkRecurring(product, input.price, store.currency);
    product.updatedAt = now;
    // Flush first: a change the database refuses must leave no event behind.
    await tx.em.flush();
    const view = await viewOf(tx, product, store.currency);
    await recordEvent(tx, {
      storeId: store.id,
      livemode: product.livemode,
      type: 'product.updated',
      payload: { product: view },
      at: now,
    });
    return view;
  });
}

/** Soft delete: orders keep naming the product; it leaves the catalog and the dashboard. */
export async function deleteProduct(ctx: ServiceContext, input: { storeId: string; productId: string }): Promise<void> {
  const store = await storeOf(ctx.em, input.storeId);
  await inTransaction(ctx, async (tx) => {
    const product = await findProduct(tx, input.storeId, ctx.livemode, input.productId);
    const now = ctx.clock.now();
    product.deletedAt = now;
    product.status = 'archived';
    product.updatedAt = now;
    await recordEvent(tx, {
      storeId: store.id,
      livemode: product.livemode,
      type: 'product.deleted',
      payload: {
        product: toProductView(product, store.currency, null, (await plansOf(tx, [product])).get(product.id)),
      },
      at: now,
    });
  });
}

export async function getProduct(
  ctx: ServiceContext,
  input: { storeId: string; productId: string },
): Promise<TProduct> {
  const store = await storeOf(ctx.em, input.storeId);
  return viewOf(ctx, await findProduct(ctx, input.storeId, ctx.livemode, input.productId), store.currency);
}

export async function listProducts(ctx: ServiceContext, input: { storeId: string }): Promise<TProduct[]> {
  const store = await storeOf(ctx.em, input.storeId);
  const products = await ctx.em.find(
    ProductSchema,
    { store: store.id, livemode: ctx.livemode, deletedAt: null },
    { orderBy: { createdAt: 'asc', id: 'asc' } },
  );
  return viewsOf(ctx, products, store.currency);
}

/** A page of the store's products, newest first (the merchant API), with their stock; `status` filters. */
export async function listProductPage(ctx: ServiceContext, input: TListProductsQuery) {
  const store = await storeOf(ctx.em, input.storeId);
  const limit = input.limit ?? 50;
  const key = ctx.deps.config.encryptionKey;
  const scope = cursorScope('products', { storeId: store.id, livemode: ctx.livemode, status: input.status });
  const before = input.cursor ? decodeCursor(key, scope, input.cursor) : undefined;
  // Created from the clock's Dates, so a product's time is whole milliseconds: the cursor's
  // microseconds divide exactly.
  const at = before ? new Date(Number(BigInt(before.us) / 1000n)) : undefined;
  const products = await ctx.em.find(
    ProductSchema,
    {
      store: store.id,
      livemode: ctx.livemode,
      deletedAt: null,
      ...(input.status ? { status: input.status } : {}),
      ...(before && at ? { $or: [{ createdAt: { $lt: at } }, { createdAt: at, id: { $lt: before.id } }] } : {}),
    },
    // A listing: on a read replica when there is one.
    { orderBy: { createdAt: 'desc', id: 'desc' }, limit: limit + 1, ...ON_REPLICA },
  );
  const { page, hasMore, nextCursor } = keysetPage(key, scope, products, limit, (p) =>
    String(p.createdAt.getTime() * 1000),
  );
  return { products: await viewsOf(ctx, page, store.currency), hasMore, nextCursor };
}

export async function publicProducts(ctx: ServiceContext, store: Store): Promise<TPublicProduct[]> {
  // The public catalog is a listing: on a read replica when there is one.
  const products = await ctx.em.find(
    ProductSchema,
    { store: store.id, livemode: ctx.livemode, status: 'active', deletedAt: null },
    { orderBy: { createdAt: 'asc', id: 'asc' }, ...ON_REPLICA },
  );
  return (await viewsOf(ctx, products, store.currency)).map(toPublicProduct);
}

/**
 * The store of a public catalog read, in the mode it shows: `mode=test` shows the test products
 * to a caller `testMode` lets see them (the seller's side, access/test-mode.ts), the live ones to
 * anyone else. Sets the context's mode before any product is read.
 */
async function shownStore(
  ctx: ServiceContext,
  input: { subdomain: string; mode?: 'live' | 'test' | undefined },
  testMode: TestModeAccess,
): Promise<Store> {
  const store = await findSellingStore(ctx, input.subdomain, 'subdomain');
  ctx.livemode = !(input.mode === 'test' && (await testMode(store.id)));
  return store;
}

/** The store and its active products, of the mode shown (shownStore). */
export async function storefront(
  ctx: ServiceContext,
  input: { subdomain: string; mode?: 'live' | 'test' | undefined },
  testMode: TestModeAccess,
) {
  const store = await shownStore(ctx, input, testMode);
  return { store: toPublicStore(store), products: await publicProducts(ctx, store) };
}

/** The store's active products, of the mode shown (shownStore). */
export async function storeProducts(
  ctx: ServiceContext,
  input: { subdomain: string; mode?: 'live' | 'test' | undefined },
  testMode: TestModeAccess,
): Promise<{ products: TPublicProduct[] }> {
  return { products: await publicProducts(ctx, await shownStore(ctx, input, testMode)) };
}

/** Products on one page of the hosted store page: any page of a 1,000-product store stays within its 30 KB. */
export const STOREFRONT_PAGE_SIZE = 24;

/**
 * One page (from 1) of the store page: the store, its active products in catalog order (as
 * publicProducts), and how many pages there are (at least 1). A page past the last has no products.
 * One prepared statement (catalog.repo.ts selectStorefrontPage) on the root EntityManager's pool,
 * its rows mapped straight to the public views: no entity is hydrated and no unit of work forked.
 */
export async function storefrontPage(
  ctx: ServiceContext,
  input: { subdomain: string; page: number },
): Promise<{ store: TStorePublic; products: TPublicProduct[]; page: number; pages: number }> {
  const rows = await selectStorefrontPage(ctx.deps.orm.em, {
    subdomain: input.subdomain.toLowerCase(),
    livemode: ctx.livemode,
    limit: STOREFRONT_PAGE_SIZE,
    offset: (input.page - 1) * STOREFRONT_PAGE_SIZE,
  });
  const first = rows[0];
  if (!first) throw new AppError('not_found', 'Store not found.');
  if (first.banned) throw new AppError('store_banned', 'This store is not available.');
  const store: TStorePublic = {
    id: first.store_id,
    name: first.store_name,
    subdomain: first.subdomain,
    currency: first.currency,
    description: first.store_description,
    accentColor: first.accent_color ?? null,
    logoUrl: first.logo_file_id ? `/s/${first.subdomain}/logo/${first.logo_file_id}` : null,
    createdAt: new Date(first.store_created_at).toISOString(),
  };
  const products: TPublicProduct[] = [];
  for (const row of rows) {
    if (row.id === null) continue;
    products.push({
      id: row.id,
      storeId: store.id,
      livemode: row.livemode,
      name: row.name,
      slug: row.slug,
      description: row.description,
      price: minorToAmount(Number(row.price_minor), store.currency),
      currency: store.currency,
      deliveryMethods: row.delivery_methods,
      customFields: row.custom_fields,
      minQuantity: row.min_quantity,
      maxQuantity: row.max_quantity ?? null,
      stock: row.available === null ? null : Number(row.available),
      images: row.images.map((image) => toImageView(row.id!, image)),
      plans: (row.plans ?? []).map((plan) => toPlanView(plan, store.currency)),
      descriptionHtml: renderMarkdown(row.description),
    });
  }
  return {
    store,
    products,
    page: input.page,
    pages: Math.max(1, Math.ceil(Number(first.total) / STOREFRONT_PAGE_SIZE)),
  };
}

/** An active product of a store that may sell, by id or slug, as the public catalog shows it; 404 otherwise. */
export async function publicProduct(
  ctx: ServiceContext,
  store: Store,
  input: { productId: string },
): Promise<TPublicProduct> {
  // By id, else by slug (the storefront's addresses use either).
  const shown = { store: store.id, livemode: ctx.livemode, status: 'active', deletedAt: null } as const;
  const product =
    (await ctx.em.findOne(ProductSchema, { id: input.productId, ...shown })) ??
    (await ctx.em.findOne(ProductSchema, { slug: input.productId, ...shown }));
  if (!product) throw new AppError('not_found', 'Product not found.');
  return toPublicProduct(await viewOf(ctx, product, store.currency));
}

/**
 * A fingerprint of what the storefront shows of a store (or of one of its products): it changes
 * whenever the store, any of its products or a product's sold-out state does. Undefined for an
 * unknown or banned store, and for a product the storefront does not show. One statement, so a
 * page answered 304 costs that statement and nothing else.
 */
export async function storefrontVersion(
  ctx: ServiceContext,
  input: { subdomain: string; productId?: string },
): Promise<string | undefined> {
  // The root EntityManager's pool: a prepared read needs no unit of work, and a 304 is this read alone.
  const row = await selectStorefrontVersion(
    ctx.deps.orm.em,
    input.subdomain.toLowerCase(),
    ctx.livemode,
    input.productId ?? null,
  );
  if (!row || row.banned) return undefined;
  if (input.productId !== undefined && Number(row.shown) === 0) return undefined;
  return createHash('sha256')
    .update([row.id, row.store_updated_at, row.products_updated_at ?? '', row.products, row.sold_out].join('|'))
    .digest('base64url')
    .slice(0, 27);
}
