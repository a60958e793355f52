/**
 * Floor for the theme cart: the least a server can do to answer the same cart. A bare
 * Fastify route (no request logging, tRPC, OpenAPI adapter, zod, ORM) runs the two
 * statements the service runs for `GET /api/v1/cart` (read from PostgreSQL's statement log
 * of service requests: `findSellingStore`, then `cartProducts` in cart.service.ts), through a
 * `pg` Pool of the same size as the service's (10), does the same merge / drop / clamp / price
 * arithmetic (cart.service.ts `normaliseCart` + `cartResult`) and answers the same JSON:
 *
 *   GET /api/v1/cart?storeId=<id or subdomain>&cart=<JSON [{productId, quantity}]>
 *
 * 1. select id, currency, banned, settings->'tax' as tax from store where id = $1 or subdomain = $2 order by (id = $1) desc limit 1
 * 2. select p.id, p.livemode, p.name, ..., p.deleted_at is not null as deleted,
 *      case when 'licenseKeys' = any(p.delivery_methods) then (select count(*) from license_key k
 *      where k.product_id = p.id and k.status = 'available') end as available,
 *      case when p.recurring then (select json_agg(...) from product_plan pl ...) end as plans
 *    from product p where p.store_id = $1 and p.id = any($2)
 *
 * (Builds before 7e1ec92 ran three: the store, `select "p0".* from "product"`, and a grouped
 * count of available keys; the floor follows the service's current SQL.)
 *
 * The service (MikroORM) formats the values into the SQL text and sends it over the simple
 * query protocol; the floor sends the same statements with bind parameters. Input checks are
 * a few hand-written lines standing in for ZCartQuery / ZCart (same limits); error answers are
 * 400 / 404 / 403 with `{ code, message }`, good enough for a floor that is only measured on
 * valid carts. Prices go through the built server's own `minorToAmount`.
 *
 * Env: FLOOR_DATABASE_URL, PORT (0 = any), FLOOR_POOL_MAX (10). Prints
 * `{"msg":"floor listening","port":N}` and stops on SIGTERM.
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Fastify from 'fastify';
import pg from 'pg';

const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../apps/server/dist');
const { minorToAmount } = await import(pathToFileURL(path.join(dist, 'lib/money.js')).href);
// The same rate lookup and per-line arithmetic as the service's (tax/tax.ts): the floor of a taxed cart.
const { rateFraction, taxSettingsFrom, workOutTax } = await import(
  pathToFileURL(path.join(dist, 'modules/tax/tax.js')).href
);

const pool = new pg.Pool({
  connectionString: process.env.FLOOR_DATABASE_URL,
  max: Number(process.env.FLOOR_POOL_MAX ?? 10),
});

// Named prepared statements, as the service's hot reads are (db/prepared.ts): parsed and planned once per connection.
// stores.repo.ts selectStoreRef.
const STORE = {
  name: 'cart-store',
  text: `select id, currency, banned, settings->'tax' as tax from store where id = $1 or subdomain = $2 order by (id = $1) desc limit 1`,
};
// cart.service.ts cartProducts: the products with their key stock in one statement.
// catalog.repo.ts selectCartProducts: the products with their key stock and a recurring product's plans, in one statement.
const PRODUCTS_TEXT = `select p.id, p.livemode, p.name, p.status, p.price_minor, p.min_quantity, p.max_quantity, p.custom_fields, p.delivery_methods,
       p.tax_category, p.deleted_at is not null as deleted,
       case when 'licenseKeys' = any(p.delivery_methods)
         then (select count(*) from license_key k where k.product_id = p.id and k.status = 'available') end as available,
       case when p.recurring then (
         select json_agg(json_build_object('id', pl.id, 'interval', pl.interval, 'intervalCount', pl.interval_count,
           'priceMinor', pl.price_minor, 'trialDays', pl.trial_days, 'active', pl.active, 'position', pl.position)
           order by pl.position, pl.id)
         from product_plan pl where pl.product_id = p.id) end as plans
     from product p where p.store_id = $1 and p.id = any($2)`;

function fail(reply, status, code, message) {
  return reply.code(status).send({ code, message });
}

/** ZCart: an array of at most 100 strict { productId: 1..64 chars, quantity: int 1..10,000 }. */
function validCart(raw) {
  if (!Array.isArray(raw) || raw.length > 100) return false;
  for (const line of raw) {
    if (!line || typeof line !== 'object' || Array.isArray(line)) return false;
    const keys = Object.keys(line);
    if (keys.length !== 2 || !('productId' in line) || !('quantity' in line)) return false;
    if (typeof line.productId !== 'string' || line.productId.length < 1 || line.productId.length > 64) return false;
    if (!Number.isInteger(line.quantity) || line.quantity < 1 || line.quantity > 10_000) return false;
  }
  return true;
}

const app = Fastify({ logger: false });

app.get('/api/v1/cart', async (request, reply) => {
  const { storeId, cart, country } = request.query;
  if (country !== undefined && !/^[A-Z]{2}$/.test(country)) return fail(reply, 400, 'validation_failed', 'country');
  if (typeof storeId !== 'string' || storeId.length < 1 || storeId.length > 63)
    return fail(reply, 400, 'validation_failed', 'storeId');
  if (typeof cart !== 'string' || cart.length > 20_000) return fail(reply, 400, 'validation_failed', 'cart');
  let raw;
  try {
    raw = JSON.parse(cart);
  } catch {
    return fail(reply, 400, 'validation_failed', 'cart: Not JSON.');
  }
  if (!validCart(raw)) return fail(reply, 400, 'validation_failed', 'cart');

  const store = (await pool.query({ ...STORE, values: [storeId, storeId.toLowerCase()] })).rows[0];
  if (!store) return fail(reply, 404, 'not_found', 'Store not found.');
  if (store.banned) return fail(reply, 403, 'store_banned', 'This store is not available.');

  // normaliseCart: merge, then one read of the cart's products with their key stock.
  const merged = new Map();
  for (const line of raw) merged.set(line.productId, (merged.get(line.productId) ?? 0) + line.quantity);
  const ids = [...merged.keys()];
  const rows =
    ids.length === 0
      ? []
      : (await pool.query({ name: 'cart-products', text: PRODUCTS_TEXT, values: [store.id, ids] })).rows;
  const byId = new Map(rows.map((p) => [p.id, p]));
  const stock = new Map(rows.filter((p) => p.available !== null).map((p) => [p.id, Number(p.available)]));
  const lines = [];
  const removed = [];
  const adjusted = [];
  for (const [productId, requested] of merged) {
    const product = byId.get(productId);
    if (!product || product.deleted) {
      removed.push({ productId, reason: 'unknown_product' });
      continue;
    }
    if (product.status !== 'active') {
      removed.push({ productId, reason: 'unavailable' });
      continue;
    }
    const available = stock.get(productId) ?? null;
    let quantity = requested;
    if (quantity < product.min_quantity) {
      adjusted.push({ productId, requested, quantity: product.min_quantity, reason: 'min_quantity' });
      quantity = product.min_quantity;
    }
    if (product.max_quantity != null && quantity > product.max_quantity) {
      adjusted.push({ productId, requested, quantity: product.max_quantity, reason: 'max_quantity' });
      quantity = product.max_quantity;
    }
    if (available !== null && quantity > available) {
      if (available < product.min_quantity) {
        removed.push({ productId, reason: 'out_of_stock' });
        continue;
      }
      adjusted.push({ productId, requested, quantity: available, reason: 'stock' });
      quantity = available;
    }
    lines.push({ product, quantity, unitPriceMinor: Number(product.price_minor), stock: available });
  }

  // cartResult
  const currency = store.currency;
  const subtotalMinor = lines.reduce((sum, line) => sum + line.unitPriceMinor * line.quantity, 0);
  // The buyer's country as asked (the bench's requests come from loopback, whose country is unknown).
  const tax = workOutTax(
    taxSettingsFrom(store.tax),
    lines.map((line) => ({
      amountMinor: line.unitPriceMinor * line.quantity,
      category: line.product.tax_category,
      discounted: false,
    })),
    0,
    { country: country ?? null, taxId: null },
    new Date(),
  );
  reply.header('content-type', 'application/json; charset=utf-8');
  return JSON.stringify({
    storeId: store.id,
    currency,
    // The bench's products are sold once: no plan, no plans to switch to (a recurring line is alone in its cart).
    lines: lines.map((line) => ({
      productId: line.product.id,
      planId: null,
      plans: [],
      name: line.product.name,
      quantity: line.quantity,
      unitPrice: minorToAmount(line.unitPriceMinor, currency),
      lineTotal: minorToAmount(line.unitPriceMinor * line.quantity, currency),
      stock: line.stock,
    })),
    removed,
    adjusted,
    subtotal: minorToAmount(subtotalMinor, currency),
    taxAmount: minorToAmount(tax.taxMinor, currency),
    total: minorToAmount(tax.totalMinor, currency),
    taxBehavior: tax.behavior,
    taxRate: rateFraction(tax.ratePpm),
    taxCountry: tax.country,
    reverseCharge: tax.reverseCharge,
    itemCount: lines.reduce((sum, line) => sum + line.quantity, 0),
  });
});

const address = await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
console.log(JSON.stringify({ level: 30, msg: `floor listening on ${address}`, port: app.server.address().port }));

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  await app.close();
  await pool.end();
  process.exit(0);
}
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
// Never outlive the bench that started us.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) void stop();
}, 1000).unref();
