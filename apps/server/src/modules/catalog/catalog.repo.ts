/**
 * The catalog module's raw SQL: the statements on products and license keys the ORM cannot
 * express, or that a hot path needs in one round trip. Everything else goes through the ORM.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { preparedRows } from '../../db/prepared.js';
import type { Product, ProductImageRecord } from './catalog.entities.js';
import type { PlanFields } from './plans.js';

/**
 * A recurring product's plans as a JSON array in its row (in order; `where` narrows them), null
 * for a one-time product: the hot reads below get them in their one statement, and a one-time
 * product's row never reads product_plan.
 */
const planArray = (where: string) => `case when p.recurring then (
         select json_agg(json_build_object('id', pl.id, 'interval', pl.interval, 'intervalCount', pl.interval_count,
           'priceMinor', pl.price_minor, 'trialDays', pl.trial_days, 'active', pl.active, 'position', pl.position)
           order by pl.position, pl.id)
         from product_plan pl where pl.product_id = p.id${where}) end`;

/** A plan as planArray writes it. */
export type PlanRow = PlanFields & { position: number };

export interface NewKey {
  id: string;
  productId: string;
  /** Its product's mode. */
  livemode: boolean;
  valueEnc: string;
  valueHash: string;
  createdAt: Date;
}

/**
 * Adds keys, skipping values the product already has; returns how many were added.
 * ON CONFLICT DO NOTHING: the unique (product, value hash) decides, so two imports racing cannot
 * both add a value, and one statement per thousand keys.
 */
export async function insertKeys(em: EntityManager, keys: NewKey[]): Promise<number> {
  let added = 0;
  for (let start = 0; start < keys.length; start += 1000) {
    const params: unknown[] = [];
    const tuples = keys.slice(start, start + 1000).map((key) => {
      params.push(key.id, key.productId, key.livemode, key.valueEnc, key.valueHash, key.createdAt);
      return `(?, ?, ?, ?, ?, 'available', ?)`;
    });
    const inserted: unknown[] = await em.execute(
      `insert into license_key (id, product_id, livemode, value_enc, value_hash, status, created_at) values ${tuples.join(', ')}
       on conflict (product_id, value_hash) do nothing returning id`,
      params,
    );
    added += inserted.length;
  }
  return added;
}

/**
 * Assigns up to `count` of a product's available keys (oldest first) to an order line; returns
 * how many. FOR UPDATE SKIP LOCKED: concurrent settlements each take keys no other transaction
 * holds, never waiting on one another and never taking the same key. The key takes the order's
 * subscription (null for a one-time sale) from the order's row in the same statement.
 */
export async function claimKeys(
  em: EntityManager,
  claim: { productId: string; orderId: string; orderLineId: string; count: number; now: Date },
): Promise<number> {
  if (claim.count <= 0) return 0;
  const claimed: unknown[] = await em.execute(
    `with picked as (
       select id from license_key where product_id = ? and status = 'available'
       order by id limit ? for update skip locked
     )
     update license_key k set status = 'assigned', order_id = o.id, order_line_id = ?, assigned_at = ?,
       subscription_id = o.subscription_id
     from picked, "order" o where k.id = picked.id and o.id = ? returning k.id`,
    [claim.productId, claim.count, claim.orderLineId, claim.now, claim.orderId],
  );
  return claimed.length;
}

export interface CartProductRow {
  id: string;
  livemode: boolean;
  name: string;
  status: Product['status'];
  price_minor: string | number;
  min_quantity: number;
  max_quantity: number | null;
  custom_fields: Product['customFields'];
  delivery_methods: Product['deliveryMethods'];
  tax_category: Product['taxCategory'];
  deleted: boolean;
  /** Available keys; null for a product not sold by keys. */
  available: string | number | null;
  /** A recurring product's plans, archived ones included; null for a one-time product. */
  plans: PlanRow[] | null;
}

/**
 * The store's products of a cart with their key stock. Hot path (every cart and checkout): one
 * statement with a correlated count, instead of a product query and a stock query.
 */
export async function selectCartProducts(em: EntityManager, storeId: string, ids: string[]): Promise<CartProductRow[]> {
  return preparedRows<CartProductRow>(
    em,
    `select p.id, p.livemode, p.name, p.status, p.price_minor, p.min_quantity, p.max_quantity, p.custom_fields, p.delivery_methods,
       p.tax_category, p.deleted_at is not null as deleted,
       case when 'licenseKeys' = any(p.delivery_methods)
         then (select count(*) from license_key k where k.product_id = p.id and k.status = 'available') end as available,
       ${planArray('')} as plans
     from product p where p.store_id = ? and p.id = any(?)`,
    [storeId, ids],
  );
}

export interface StorefrontPageRow {
  store_id: string;
  store_name: string;
  subdomain: string;
  currency: string;
  store_description: string;
  accent_color: string | null;
  logo_file_id: string | null;
  store_created_at: string;
  banned: boolean;
  /** The store's active products of the mode asked for, on every page. */
  total: string | number;
  /** The product's columns: null on the one row of a page without products. */
  id: string | null;
  livemode: boolean;
  name: string;
  slug: string;
  description: string;
  price_minor: string | number;
  delivery_methods: Product['deliveryMethods'];
  custom_fields: Product['customFields'];
  min_quantity: number;
  max_quantity: number | null;
  images: ProductImageRecord[];
  /** Available keys; null for a product not sold by keys. */
  available: string | number | null;
  /** A recurring product's active plans; null for a one-time product. */
  plans: PlanRow[] | null;
}

/**
 * One page of the hosted store page: the store by subdomain, how many active products of the mode
 * it has, and the page's products in catalog order with their key stock. Hot path (every store
 * page a browser does not hold): one statement instead of the store, the page, its count and its
 * stock as four, and rows mapped straight to the public view instead of hydrated entities. One row
 * per product, the store's columns on each (24 rows at most); one row with null product columns
 * when the page has none. The stock is counted in the outer select, so only the page's rows pay
 * for it, not the ones the offset skips.
 */
export async function selectStorefrontPage(
  em: EntityManager,
  page: { subdomain: string; livemode: boolean; limit: number; offset: number },
): Promise<StorefrontPageRow[]> {
  return preparedRows<StorefrontPageRow>(
    em,
    `select s.id as store_id, s.name as store_name, s.subdomain, s.currency, s.description as store_description,
       s.accent_color, s.logo_file_id, s.created_at as store_created_at, s.banned, c.total,
       p.id, p.livemode, p.name, p.slug, p.description, p.price_minor, p.delivery_methods, p.custom_fields,
       p.min_quantity, p.max_quantity, p.images,
       case when 'licenseKeys' = any(p.delivery_methods)
         then (select count(*) from license_key k where k.product_id = p.id and k.status = 'available') end as available,
       ${planArray(' and pl.active')} as plans
     from store s
     cross join lateral (
       select count(*) as total from product
       where store_id = s.id and livemode = ? and status = 'active' and deleted_at is null
     ) c
     left join lateral (
       select id, livemode, name, slug, description, price_minor, delivery_methods, custom_fields, min_quantity,
         max_quantity, images, recurring, created_at
       from product
       where store_id = s.id and livemode = ? and status = 'active' and deleted_at is null
       order by created_at, id limit ? offset ?
     ) p on true
     where s.subdomain = ?
     order by p.created_at, p.id`,
    [page.livemode, page.livemode, page.limit, page.offset, page.subdomain],
    // A listing: on a read replica when there is one (the ORM's page read there too).
    { replica: true },
  );
}

export interface StorefrontVersionRow {
  id: string;
  banned: boolean;
  store_updated_at: string;
  /** The newest change of the products counted (any status, deleted ones too); null without any. */
  products_updated_at: string | null;
  /** Products counted: all the store's, or the one product asked for (by id or slug). */
  products: string | number;
  /** Of those, the ones a buyer sees (active, not deleted). */
  shown: string | number;
  /** md5 of the ids of the shown license-key products without enough keys for their minimum. */
  sold_out: string;
}

/**
 * What a storefront page shows changes only when this row does: the store's and its products'
 * (of the page's mode only, so a test product's change never changes a live page's ETag)
 * `updated_at` (every edit, status change and deletion sets it) and which products are sold out
 * (a sale changes the keys, not the product). Hot path (every page view, and all a 304 costs):
 * one statement; `exists ... offset min_quantity - 1` stops at the product's minimum on the
 * partial index of available keys instead of counting the stock.
 */
export async function selectStorefrontVersion(
  em: EntityManager,
  subdomain: string,
  livemode: boolean,
  productId: string | null,
): Promise<StorefrontVersionRow | undefined> {
  const [row] = await preparedRows<StorefrontVersionRow>(
    em,
    `select s.id, s.banned, s.updated_at as store_updated_at, v.products_updated_at, v.products, v.shown, v.sold_out
     from store s
     cross join lateral (
       select max(p.updated_at) as products_updated_at, count(*) as products,
         count(*) filter (where p.status = 'active' and p.deleted_at is null) as shown,
         md5(coalesce(string_agg(p.id, ',' order by p.id) filter (
           where p.status = 'active' and p.deleted_at is null and 'licenseKeys' = any(p.delivery_methods)
             and not exists (
               select 1 from license_key k where k.product_id = p.id and k.status = 'available'
               offset p.min_quantity - 1)
         ), '')) as sold_out
       from product p where p.store_id = s.id and p.livemode = ? and (?::text is null or p.id = ? or p.slug = ?)
     ) v
     where s.subdomain = ?`,
    [livemode, productId, productId, productId, subdomain],
  );
  return row;
}

/**
 * The store of a product that has this image at this width, when a buyer may see it (the product
 * not deleted, the store not banned): the image address checks it on every request, and the
 * product's primary key finds the row without scanning the store's products. jsonb containment
 * because the images are a column of the product (ProductImageRecord[]).
 */
export async function selectImageStore(
  em: EntityManager,
  productId: string,
  imageId: string,
  width: number,
): Promise<string | undefined> {
  const [row] = await preparedRows<{ store_id: string }>(
    em,
    `select p.store_id from product p join store s on s.id = p.store_id
     where p.id = ? and p.deleted_at is null and not s.banned and p.images @> ?::jsonb`,
    [productId, JSON.stringify([{ id: imageId, variants: [{ width }] }])],
  );
  return row?.store_id;
}

/**
 * Whether the store has a product that is not deleted, in either mode: the Home's setup checklist.
 * One probe of the partial index product_store_mode_status_index (`deleted_at is null`), no
 * hydration; the ORDER BY is the index's order, so the planner never prefers a sequential scan
 * betting on an early match (as it does for a store that holds most rows: see anyPaidTestOrder).
 */
export async function anyProductOf(em: EntityManager, storeId: string): Promise<boolean> {
  const rows = await preparedRows(
    em,
    'select 1 from product where store_id = ? and deleted_at is null order by livemode, status, created_at limit 1',
    [storeId],
  );
  return rows.length > 0;
}

/**
 * Of `imageIds`, those a product of one of `storeIds` still lists among its images (the orphan
 * sweep's check, orphans.service.ts). Raw: the ids are inside the product's `images` JSON array,
 * which the ORM cannot search.
 */
export async function listedImageIds(em: EntityManager, storeIds: string[], imageIds: string[]): Promise<Set<string>> {
  if (imageIds.length === 0) return new Set();
  const rows = await preparedRows<{ id: string }>(
    em,
    `select distinct image->>'id' as id from product p cross join lateral jsonb_array_elements(p.images) image
     where p.store_id = any(?) and image->>'id' = any(?)`,
    [storeIds, imageIds],
  );
  return new Set(rows.map((row) => row.id));
}
