/**
 * Floor for the hosted store page (`GET /s/{subdomain}`): the least a server can do to answer the
 * same page. A bare Fastify route (no request logging, route table, ORM) runs the statements the
 * service runs for the page, through a `pg` Pool of the service's size (10), as named prepared
 * statements, and renders with the service's own template (`storePage` of the built
 * apps/server/dist/http/storefront-html.js), so the floor follows the template as it changes:
 *
 * 1. the page's version (catalog.repo.ts `selectStorefrontVersion`, the same text), hashed as
 *    catalog.service.ts `storefrontVersion` does; with a matching If-None-Match: 304, nothing more;
 * 2. the page (catalog.repo.ts `selectStorefrontPage`, the same text): the store by subdomain, the
 *    count of its active products, and one page (24) of them, oldest first, with their key stock.
 *
 * The ETag is built as storefront.ts builds it, `"<version>.<release>.store"` (`store-p<N>` for
 * `?page=N`), with the service's own release hash (imported), so the floor's ETag equals the service's and the bench checks
 * both answers byte for byte. When the route changes what it reads (paging the store page, say),
 * that check fails and names the difference: update the statements here to the route's.
 *
 * Env: FLOOR_DATABASE_URL, FLOOR_PUBLIC_URL (the service's PUBLIC_URL), PORT (0 = any),
 * FLOOR_POOL_MAX (10). Prints `{"msg":"floor listening","port":N}` and stops on SIGTERM.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Fastify from 'fastify';
import pg from 'pg';

const serverRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../apps/server');
const dist = path.join(serverRoot, 'dist');
const { storePage } = await import(pathToFileURL(path.join(dist, 'http/storefront-html.js')).href);
const { minorToAmount } = await import(pathToFileURL(path.join(dist, 'lib/money.js')).href);
const { PAGE_CSP } = await import(pathToFileURL(path.join(dist, 'http/pages.js')).href);
// The release part of the ETag, as the service computes it (its templates and its stylesheets as served).
const { RELEASE } = await import(pathToFileURL(path.join(dist, 'http/storefront.js')).href);
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
       from product p where p.store_id = s.id and p.livemode = $1 and ($2::text is null or p.id = $3 or p.slug = $4)
     ) v
     where s.subdomain = $5`,
  types: asText,
};
const PAGE = {
  name: 'storefront-page',
  text: `select s.id as store_id, s.name as store_name, s.subdomain, s.currency, s.description as store_description,
       s.accent_color, s.logo_file_id, s.created_at as store_created_at, s.banned, c.total,
       p.id, p.livemode, p.name, p.slug, p.description, p.price_minor, p.delivery_methods, p.custom_fields,
       p.min_quantity, p.max_quantity, p.images,
       case when 'licenseKeys' = any(p.delivery_methods)
         then (select count(*) from license_key k where k.product_id = p.id and k.status = 'available') end as available
     from store s
     cross join lateral (
       select count(*) as total from product
       where store_id = s.id and livemode = $1 and status = 'active' and deleted_at is null
     ) c
     left join lateral (
       select id, livemode, name, slug, description, price_minor, delivery_methods, custom_fields, min_quantity,
         max_quantity, images, created_at
       from product
       where store_id = s.id and livemode = $2 and status = 'active' and deleted_at is null
       order by created_at, id limit $3 offset $4
     ) p on true
     where s.subdomain = $5
     order by p.created_at, p.id`,
  types: asText,
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
  const row = (await pool.query({ ...VERSION, values: [true, null, null, null, subdomain] })).rows[0];
  if (!row || row.banned) return unavailable(reply);
  const version = createHash('sha256')
    .update([row.id, row.store_updated_at, row.products_updated_at ?? '', row.products, row.sold_out].join('|'))
    .digest('base64url')
    .slice(0, 27);
  const etag = `"${version}.${RELEASE}.${pageNo === 1 ? 'store' : `store-p${pageNo}`}"`;
  const ifNoneMatch = request.headers['if-none-match'];
  if (ifNoneMatch && ifNoneMatch.split(',').some((tag) => [etag, `W/${etag}`, '*'].includes(tag.trim())))
    return reply.code(304).header('ETag', etag).header('Cache-Control', 'no-cache').send();

  const { rows } = await pool.query({
    ...PAGE,
    values: [true, true, STOREFRONT_PAGE_SIZE, (pageNo - 1) * STOREFRONT_PAGE_SIZE, subdomain],
  });
  const store = rows[0];
  if (!store || store.banned) return unavailable(reply);
  if (store.id === null && pageNo > 1) return unavailable(reply);
  const pages = Math.max(1, Math.ceil(Number(store.total) / STOREFRONT_PAGE_SIZE));
  // catalog.service.ts storefrontPage: the rows as the public store and products.
  const view = {
    id: store.store_id,
    name: store.store_name,
    subdomain: store.subdomain,
    currency: store.currency,
    description: store.store_description,
    accentColor: store.accent_color ?? null,
    logoUrl: store.logo_file_id ? `/s/${store.subdomain}/logo/${store.logo_file_id}` : null,
    createdAt: new Date(store.store_created_at).toISOString(),
  };
  const products = rows
    .filter((p) => p.id !== null)
    .map((p) => ({
      id: p.id,
      storeId: view.id,
      livemode: p.livemode,
      name: p.name,
      slug: p.slug,
      description: p.description,
      price: minorToAmount(Number(p.price_minor), view.currency),
      currency: view.currency,
      deliveryMethods: p.delivery_methods,
      customFields: p.custom_fields,
      minQuantity: p.min_quantity,
      maxQuantity: p.max_quantity ?? null,
      stock: p.available === null ? null : Number(p.available),
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
