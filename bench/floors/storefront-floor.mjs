/**
 * Floor for the hosted store page (`GET /s/{subdomain}`): the least a server can do to answer the
 * same page. A bare Fastify route (no request logging, route table, ORM) runs the statements the
 * service runs for the page, through a `pg` Pool of the service's size (10), as named prepared
 * statements, and renders with the service's own template (`storePage` of the built
 * apps/server/dist/http/storefront-html.js), so the floor follows the template as it changes:
 *
 * 1. the page's version (catalog.repo.ts `selectStorefrontVersion`, the same text), hashed as
 *    catalog.service.ts `storefrontVersion` does; with a matching If-None-Match: 304, nothing more;
 * 2. the store by subdomain (`findSellingStore`: `select "s0".* from "store" ...`);
 * 3. one page (24) of its active products, oldest first, and their count (`storefrontPage`'s
 *    findAndCount: the two statements the ORM sends);
 * 4. the available keys of that page's key products, grouped (key-store.ts `stockOf`).
 *
 * The ETag is built as storefront.ts builds it, `"<version>.<release>.store"` (`store-p<N>` for
 * `?page=N`), with the release
 * hash of the same built files, so the floor's ETag equals the service's and the bench checks
 * both answers byte for byte. When the route changes what it reads (paging the store page, say),
 * that check fails and names the difference: update the statements here to the route's.
 *
 * Env: FLOOR_DATABASE_URL, FLOOR_PUBLIC_URL (the service's PUBLIC_URL), PORT (0 = any),
 * FLOOR_POOL_MAX (10). Prints `{"msg":"floor listening","port":N}` and stops on SIGTERM.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Fastify from 'fastify';
import pg from 'pg';

const serverRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../apps/server');
const dist = path.join(serverRoot, 'dist');
const { storePage } = await import(pathToFileURL(path.join(dist, 'http/storefront-html.js')).href);
const { minorToAmount } = await import(pathToFileURL(path.join(dist, 'lib/money.js')).href);
const { PAGE_CSP } = await import(pathToFileURL(path.join(dist, 'http/pages.js')).href);
const { toImageView } = await import(pathToFileURL(path.join(dist, 'modules/catalog/images.service.js')).href);
const { STOREFRONT_PAGE_SIZE } = await import(
  pathToFileURL(path.join(dist, 'modules/catalog/catalog.service.js')).href
);

const publicUrl = process.env.FLOOR_PUBLIC_URL ?? 'http://localhost:3000';
const pool = new pg.Pool({
  connectionString: process.env.FLOOR_DATABASE_URL,
  max: Number(process.env.FLOOR_POOL_MAX ?? 10),
});
// Timestamps as text, as the service's connections read them (its ETag hashes the text).
const asText = {
  getTypeParser: (oid, format) => (oid === 1114 || oid === 1184 ? (v) => v : pg.types.getTypeParser(oid, format)),
};

/** storefront.ts RELEASE: the templates and assets the page depends on, as the built service hashes them. */
const RELEASE = (() => {
  const hash = createHash('sha256');
  const read = (relative) => {
    try {
      return readFileSync(path.join(serverRoot, relative));
    } catch {
      return undefined;
    }
  };
  const parts = [
    ...['storefront', 'storefront-html', 'pages'].map((name) => read(`dist/http/${name}.js`)),
    read('client/storefront.css'),
    read('dist/public/storefront/cart.js'),
    read('client/app.css'),
  ];
  for (const part of parts) if (part) hash.update(part);
  return hash.digest('base64url').slice(0, 10);
})();

const VERSION = {
  name: 'storefront-version',
  text: `select s.id, s.banned, s.updated_at as store_updated_at, v.products_updated_at, v.products, v.shown, v.sold_out
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
       from product p where p.store_id = s.id and ($1::text is null or p.id = $2 or p.slug = $3)
     ) v
     where s.subdomain = $4`,
  types: asText,
};
const STORE = {
  name: 'storefront-store',
  text: `select "s0".* from "store" as "s0" where "s0"."subdomain" = $1 limit 1`,
  types: asText,
};
const PRODUCTS = {
  name: 'storefront-products',
  text: `select "p0".* from "product" as "p0" where "p0"."store_id" = $1 and "p0"."livemode" = true and "p0"."status" = 'active' and "p0"."deleted_at" is null order by "p0"."created_at" asc, "p0"."id" asc limit $2 offset $3`,
  types: asText,
};
const COUNT = {
  name: 'storefront-count',
  text: `select count(*) as "count" from "product" as "p0" where "p0"."store_id" = $1 and "p0"."livemode" = true and "p0"."status" = 'active' and "p0"."deleted_at" is null`,
};
const STOCK = {
  name: 'storefront-stock',
  text: `select "k"."product_id", count(*) as n from "license_key" as "k" where "k"."product_id" = any($1) and "k"."status" = 'available' group by "k"."product_id"`,
};

function unavailable(reply) {
  return reply.code(404).type('text/html; charset=utf-8').send('<!doctype html><title>Store not available</title>');
}

const app = Fastify({ logger: false });

app.get('/s/:subdomain', async (request, reply) => {
  const subdomain = request.params.subdomain.toLowerCase();
  // storefront.ts pageNumber: a whole number from 1, anything else the first page.
  const pageParam = request.query.page;
  const pageNo = pageParam && /^[1-9][0-9]{0,4}$/.test(pageParam) ? Number(pageParam) : 1;
  if (!/^[a-z0-9-]{1,63}$/.test(subdomain)) return unavailable(reply);
  const row = (await pool.query({ ...VERSION, values: [null, null, null, subdomain] })).rows[0];
  if (!row || row.banned) return unavailable(reply);
  const version = createHash('sha256')
    .update([row.id, row.store_updated_at, row.products_updated_at ?? '', row.products, row.sold_out].join('|'))
    .digest('base64url')
    .slice(0, 27);
  const etag = `"${version}.${RELEASE}.${pageNo === 1 ? 'store' : `store-p${pageNo}`}"`;
  const ifNoneMatch = request.headers['if-none-match'];
  if (ifNoneMatch && ifNoneMatch.split(',').some((tag) => [etag, `W/${etag}`, '*'].includes(tag.trim())))
    return reply.code(304).header('ETag', etag).header('Cache-Control', 'no-cache').send();

  const store = (await pool.query({ ...STORE, values: [subdomain] })).rows[0];
  if (!store || store.banned) return unavailable(reply);
  const [{ rows }, counted] = await Promise.all([
    pool.query({ ...PRODUCTS, values: [store.id, STOREFRONT_PAGE_SIZE, (pageNo - 1) * STOREFRONT_PAGE_SIZE] }),
    pool.query({ ...COUNT, values: [store.id] }),
  ]);
  if (rows.length === 0 && pageNo > 1) return unavailable(reply);
  const pages = Math.max(1, Math.ceil(Number(counted.rows[0].count) / STOREFRONT_PAGE_SIZE));
  const keyed = rows.filter((p) => p.delivery_methods.includes('licenseKeys')).map((p) => p.id);
  const stock = new Map(keyed.map((id) => [id, 0]));
  if (keyed.length > 0)
    for (const k of (await pool.query({ ...STOCK, values: [keyed] })).rows) stock.set(k.product_id, Number(k.n));
  // toPublicStore, and toPublicProduct(toProductView(...)) of catalog.service.ts.
  const view = {
    id: store.id,
    name: store.name,
    subdomain: store.subdomain,
    currency: store.currency,
    description: store.description,
    accentColor: store.accent_color ?? null,
    logoUrl: store.logo_file_id ? `/s/${store.subdomain}/logo/${store.logo_file_id}` : null,
    createdAt: new Date(store.created_at).toISOString(),
  };
  const products = rows.map((p) => ({
    id: p.id,
    storeId: p.store_id,
    name: p.name,
    slug: p.slug,
    description: p.description,
    price: minorToAmount(Number(p.price_minor), store.currency),
    currency: store.currency,
    deliveryMethods: p.delivery_methods,
    customFields: p.custom_fields,
    minQuantity: p.min_quantity,
    maxQuantity: p.max_quantity ?? null,
    stock: stock.has(p.id) ? stock.get(p.id) : null,
    images: p.images.map((image) => toImageView(p.id, image)),
  }));
  const page = storePage(publicUrl, view, products, { page: pageNo, pages });
  const csp = page.styleHash ? PAGE_CSP.replace("style-src 'self'", `style-src 'self' ${page.styleHash}`) : PAGE_CSP;
  return reply
    .header('ETag', etag)
    .header('Content-Security-Policy', csp)
    .header('Cache-Control', 'no-cache')
    .type('text/html; charset=utf-8')
    .send(page.html);
});

const address = await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
console.log(JSON.stringify({ msg: 'floor listening', port: Number(new URL(address).port) }));
process.on('SIGTERM', () => {
  void app.close().then(() => pool.end());
});
