/**
 * Floor for checkout: the least a server can do to take the same order. A bare Fastify
 * route (no request logging, tRPC, OpenAPI adapter, zod, ORM) does the database work of
 * flows/place-order.ts `createOrder` with plain SQL through a `pg` Pool of the same size as
 * the service's (10), and answers the same JSON:
 *
 *   POST /api/v1/checkout  { shopId, cart: [{ productId, quantity }], email }  ->  200 { url, orderId }
 *
 * Every statement is a named prepared one (parsed and planned once per connection, as the
 * service's hot reads are). Per request, like the service, one statement after the other:
 *   1. the store, by id or subdomain (autocommit)
 *   2. the store's blacklist for the buyer's IP, country and e-mail (autocommit)
 *   3. the cart's products of that store (autocommit), and their key stock when a product
 *      sells license keys (not for manual delivery)
 *   4. one transaction: nextval('order_number_seq'), insert into "order" (every column the
 *      service writes), order_line (one row per cart line), event (`order.created` with the
 *      order detail JSON the service builds), commit.
 * The tax is worked out by the service's own function (tax/tax.ts workOutTax) from the store's
 * settings, as the service does for every checkout.
 * The same checks on what was read (unknown / inactive product, quantity bounds, stock,
 * required custom fields, banned store, blacklist) answer 4xx as the service would. Ids are
 * cuid2 (`evt_` + cuid2 for events) like the service's; the checkout token is 32 random
 * bytes (base64url) of which the SHA-256 hex is stored; the buyer's country comes from the
 * service's own lookup (`countryOfIp` of the built server). Input validation is a few
 * hand-written checks instead of zod.
 *
 * Env: FLOOR_DATABASE_URL, PORT (0 = any), FLOOR_POOL_MAX (10), FLOOR_PUBLIC_URL (the
 * service's PUBLIC_URL, for the checkout url). Prints `{"msg":"floor listening","port":N}`
 * and stops on SIGTERM.
 */
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Fastify from 'fastify';
import pg from 'pg';

const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../apps/server/dist');
const { minorToAmount } = await import(pathToFileURL(path.join(dist, 'lib/money.js')).href);
const { countryOfIp } = await import(pathToFileURL(path.join(dist, 'lib/geo.js')).href);
// The service's own tax working-out (tax/tax.ts): with the store's tax off, what any checkout does.
const { lineTaxColumns, rateFraction, taxColumns, taxSettingsFrom, workOutTax } = await import(
  pathToFileURL(path.join(dist, 'modules/tax/tax.js')).href
);
// The service's own id generator, so both make the same ids at the same cost.
const { newId: createId } = await import(pathToFileURL(path.join(dist, 'lib/ids.js')).href);

const publicUrl = (process.env.FLOOR_PUBLIC_URL ?? 'http://localhost').replace(/\/$/, '');
const pool = new pg.Pool({
  connectionString: process.env.FLOOR_DATABASE_URL,
  max: Number(process.env.FLOOR_POOL_MAX ?? 10),
});

const STORE = `select * from "store" where id = $1 or subdomain = $2 limit 1`;
const BLACKLIST = `select id, kind from blacklist_entry where store_id = $1 and livemode = $5
  and ((kind = 'ip' and value = $2) or (kind = 'country' and value = $3) or (kind = 'email' and value = $4))`;
const PRODUCTS = `select * from product where id = any($1::text[]) and store_id = $2`;
const STOCK = `select product_id, count(*) as n from license_key where product_id = any($1::text[]) and status = 'available' group by product_id`;
const INSERT_ORDER = `insert into "order" (id, number, store_id, livemode, status, product_name, price_minor, subtotal_minor, discount_minor, coupon_id,
  paid_minor, currency, payment_method, customer_email, country, buyer_ip, user_agent, note, custom_field_responses, checkout_token_hash,
  key_count, paid_at, completed_at, delivered_at, created_at, updated_at, tax_behavior, tax_minor, tax_rate_ppm, tax_country,
  reverse_charge, buyer_tax_id)
  values ($1, $2, $3, $14, 'pending', $4, $5, $6, 0, null, 0, $7, '', $8, $9, $10, $11, '', '[]', $12, 0, null, null, null, $13, $13,
    $15, $16, $17, $18, $19, $20)`;
const INSERT_LINE = `insert into order_line (id, order_id, product_id, product_name, quantity, unit_price_minor, position, livemode,
  tax_category, discount_minor, net_minor, tax_minor, tax_rate_ppm) values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`;
const INSERT_EVENT = `insert into event (id, store_id, type, payload, created_at, livemode) values ($1, $2, 'order.created', $3, $4, $5)`;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function fail(reply, status, code, message) {
  return reply.code(status).send({ code, message });
}

const app = Fastify({ logger: false });

app.post('/api/v1/checkout', async (request, reply) => {
  const input = request.body;
  if (
    !input ||
    typeof input !== 'object' ||
    typeof input.shopId !== 'string' ||
    !input.shopId ||
    input.shopId.length > 63
  )
    return fail(reply, 400, 'validation_failed', 'shopId');
  if (!Array.isArray(input.cart) || input.cart.length > 100) return fail(reply, 400, 'validation_failed', 'cart');
  const merged = new Map();
  for (const line of input.cart) {
    if (
      !line ||
      typeof line.productId !== 'string' ||
      !line.productId ||
      line.productId.length > 64 ||
      !Number.isInteger(line.quantity) ||
      line.quantity < 1 ||
      line.quantity > 10_000
    ) {
      return fail(reply, 400, 'validation_failed', 'cart line');
    }
    merged.set(line.productId, (merged.get(line.productId) ?? 0) + line.quantity);
  }
  let email;
  if (input.email != null) {
    if (typeof input.email !== 'string' || input.email.trim().length > 320 || !EMAIL.test(input.email.trim()))
      return fail(reply, 400, 'validation_failed', 'email');
    email = input.email.trim().toLowerCase();
  }

  const store = (await pool.query({ name: 'store', text: STORE, values: [input.shopId, input.shopId.toLowerCase()] }))
    .rows[0];
  if (!store) return fail(reply, 404, 'not_found', 'Store not found.');
  if (store.banned) return fail(reply, 403, 'store_banned', 'This store is not available.');
  const ip = request.ip;
  const country = countryOfIp(ip);
  if (merged.size === 0) return fail(reply, 400, 'cart_empty', 'The cart is empty.');
  const products = (await pool.query({ name: 'products', text: PRODUCTS, values: [[...merged.keys()], store.id] }))
    .rows;
  // The cart's mode is its products' (flows/place-order.ts sellableLines); the blacklist is that mode's.
  const livemode = products[0]?.livemode ?? true;
  if (products.some((p) => p.livemode !== livemode))
    return fail(reply, 400, 'mixed_modes', 'A cart cannot mix test and live products.');
  const blocked = await pool.query({
    name: 'blacklist',
    text: BLACKLIST,
    values: [store.id, ip, country.toUpperCase(), email ?? null, livemode],
  });
  if (blocked.rows.length > 0) return fail(reply, 403, 'blacklisted', 'This store does not accept orders from you.');
  const keyed = products.filter((p) => p.delivery_methods.includes('licenseKeys')).map((p) => p.id);
  const stock = new Map(keyed.map((id) => [id, 0]));
  if (keyed.length > 0)
    for (const row of (await pool.query({ name: 'stock', text: STOCK, values: [keyed] })).rows)
      stock.set(row.product_id, Number(row.n));
  const lines = [];
  for (const [productId, quantity] of merged) {
    const product = products.find((p) => p.id === productId);
    if (!product || product.deleted_at || product.status !== 'active')
      return fail(reply, 400, 'product_unavailable', `Product ${productId} cannot be bought.`);
    const available = stock.get(productId) ?? null;
    if (available !== null && quantity > available)
      return fail(reply, 400, 'out_of_stock', 'Not enough keys in stock for this cart.');
    if (quantity < product.min_quantity || (product.max_quantity != null && quantity > product.max_quantity))
      return fail(reply, 400, 'validation_failed', 'quantity');
    if (product.custom_fields.some((field) => field.required))
      return fail(reply, 400, 'validation_failed', 'customFields');
    lines.push({ product, quantity, unitPriceMinor: Number(product.price_minor) });
  }

  const subtotalMinor = lines.reduce((sum, line) => sum + line.unitPriceMinor * line.quantity, 0);
  // The tax of the lines for the buyer's country (the IP's: the bench's checkout names none), at the store's settings.
  const tax = workOutTax(
    taxSettingsFrom(store.settings.tax),
    lines.map((line) => ({
      amountMinor: line.unitPriceMinor * line.quantity,
      category: line.product.tax_category,
      discounted: false,
    })),
    0,
    { country: country === 'XX' ? null : country, taxId: null },
    new Date(),
  );
  const columns = taxColumns(tax);
  const token = randomBytes(32).toString('base64url');
  const tokenHash = createHash('sha256').update(token).digest('hex');
  const now = new Date();
  const orderId = createId();
  const productName = lines.length > 1 ? `${lines[0].product.name} +${lines.length - 1} more` : lines[0].product.name;
  const userAgent =
    typeof request.headers['user-agent'] === 'string' ? request.headers['user-agent'].slice(0, 512) : null;
  const client = await pool.connect();
  try {
    await client.query('begin');
    const { number } = (
      await client.query({ name: 'next-number', text: `select nextval('order_number_seq') as number` })
    ).rows[0];
    await client.query({
      name: 'insert-order',
      text: INSERT_ORDER,
      values: [
        orderId,
        number,
        store.id,
        productName,
        tax.totalMinor,
        subtotalMinor,
        store.currency,
        email ?? '',
        country,
        ip,
        userAgent,
        tokenHash,
        now,
        livemode,
        columns.taxBehavior,
        columns.taxMinor,
        columns.taxRatePpm,
        columns.taxCountry,
        columns.reverseCharge,
        columns.buyerTaxId,
      ],
    });
    for (const [position, line] of lines.entries()) {
      const taxed = lineTaxColumns(tax.lines[position]);
      await client.query({
        name: 'insert-line',
        text: INSERT_LINE,
        values: [
          createId(),
          orderId,
          line.product.id,
          line.product.name,
          line.quantity,
          line.unitPriceMinor,
          position,
          livemode,
          line.product.tax_category,
          taxed.discountMinor,
          taxed.netMinor,
          taxed.taxMinor,
          taxed.taxRatePpm,
        ],
      });
    }
    // The order detail, as toOrderDetail (orders/order-views.ts) writes it into the outbox.
    const at = now.toISOString();
    const detail = {
      id: orderId,
      orderId: `ORD-${number}`,
      storeId: store.id,
      livemode,
      status: 'pending',
      productName,
      price: minorToAmount(tax.totalMinor, store.currency),
      paid: minorToAmount(0, store.currency),
      discount: minorToAmount(0, store.currency),
      couponCode: null,
      paymentMethod: '',
      customerEmail: email ?? '',
      country,
      keyCount: 0,
      subscriptionId: null,
      billingReason: 'purchase',
      subtotal: minorToAmount(subtotalMinor, store.currency),
      taxAmount: minorToAmount(tax.taxMinor, store.currency),
      taxRate: rateFraction(tax.ratePpm),
      taxCountry: tax.country,
      reverseCharge: tax.reverseCharge,
      invoiceNumber: null,
      creditNoteNumber: null,
      createdAt: at,
      completedAt: null,
      updatedAt: at,
      note: '',
      customFieldResponses: [],
    };
    await client.query({
      name: 'insert-event',
      text: INSERT_EVENT,
      values: [`evt_${createId()}`, store.id, JSON.stringify({ order: detail }), now, livemode],
    });
    await client.query('commit');
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
  reply.header('content-type', 'application/json; charset=utf-8');
  return JSON.stringify({ url: `${publicUrl}/checkout/${orderId}?token=${encodeURIComponent(token)}`, orderId });
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
