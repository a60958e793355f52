/**
 * Floor for the merchant orders list: the least a server can do to answer the same page.
 * A bare Fastify route (no logging, auth, rate limit, tRPC or validation layers) runs the
 * service's own page SQL (orders/order-reads.ts pageOrders, unfiltered but for the live mode) through a `pg` Pool of
 * the same size as the service's (10), as named prepared statements (parsed and planned once per
 * connection, as the service's hot reads are), and answers the same JSON shape.
 *
 *   GET /stores/:storeId/orders?limit=100[&us=<microseconds>&id=<order id>]
 *
 * The position is given in plain `us`/`id` query parameters instead of a signed cursor;
 * `nextCursor` is signed like the service's (sealed with the list and the store) when
 * FLOOR_CURSOR_KEY (base64) is set, so the bodies can be compared byte for byte in meaning.
 * Env: FLOOR_DATABASE_URL, PORT (0 = any), FLOOR_POOL_MAX (10). Prints `{"msg":"floor listening","port":N}` and stops on SIGTERM.
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Fastify from 'fastify';
import pg from 'pg';

const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../apps/server/dist');
const { cursorScope, encodeCursor } = await import(pathToFileURL(path.join(dist, 'lib/cursor.js')).href);
const { minorToAmount } = await import(pathToFileURL(path.join(dist, 'lib/money.js')).href);

const cursorKey = process.env.FLOOR_CURSOR_KEY ? Buffer.from(process.env.FLOOR_CURSOR_KEY, 'base64') : undefined;
const pool = new pg.Pool({
  connectionString: process.env.FLOOR_DATABASE_URL,
  max: Number(process.env.FLOOR_POOL_MAX ?? 10),
});

// Verbatim from pageOrders: the columns and the keyset predicate.
const LIST_COLUMNS = `o.id, o.number, o.store_id, o.livemode, o.status, o.product_name, o.price_minor, o.paid_minor, o.currency,
  o.payment_method, o.customer_email, o.country, o.key_count, o.created_at, o.completed_at, o.updated_at,
  (extract(epoch from o.created_at) * 1000000)::bigint as created_us`;
const FIRST_PAGE = `select ${LIST_COLUMNS} from "order" o where o.store_id = $1 and o.livemode = true order by o.created_at desc, o.id desc limit $2`;
const AFTER = `select ${LIST_COLUMNS} from "order" o where o.store_id = $1 and o.livemode = true and (o.created_at, o.id) < (timestamptz 'epoch' + ($2::bigint) * interval '1 microsecond', $3) order by o.created_at desc, o.id desc limit $4`;

function rowToOrder(row) {
  return {
    id: row.id,
    orderId: `ORD-${row.number}`,
    storeId: row.store_id,
    livemode: row.livemode,
    status: row.status,
    productName: row.product_name,
    price: minorToAmount(Number(row.price_minor), row.currency),
    paid: minorToAmount(Number(row.paid_minor), row.currency),
    paymentMethod: row.payment_method,
    customerEmail: row.customer_email,
    country: row.country,
    keyCount: row.key_count,
    createdAt: row.created_at.toISOString(),
    completedAt: row.completed_at?.toISOString() ?? null,
    updatedAt: row.updated_at.toISOString(),
  };
}

const app = Fastify({ logger: false });

app.get('/stores/:storeId/orders', async (request, reply) => {
  const { storeId } = request.params;
  const limit = Math.min(100, Math.max(1, Number(request.query.limit ?? 50) || 50));
  const { us, id } = request.query;
  const { rows } =
    us !== undefined && id !== undefined
      ? await pool.query({ name: 'orders-after', text: AFTER, values: [storeId, us, id, limit + 1] })
      : await pool.query({ name: 'orders-first', text: FIRST_PAGE, values: [storeId, limit + 1] });
  const hasMore = rows.length > limit;
  const page = hasMore ? rows.slice(0, limit) : rows;
  const last = page[page.length - 1];
  let nextCursor = null;
  if (hasMore && last)
    nextCursor = cursorKey
      ? encodeCursor(cursorKey, cursorScope('orders', { storeId, livemode: true }), {
          us: String(last.created_us),
          id: last.id,
        })
      : `${last.created_us}:${last.id}`;
  reply.header('content-type', 'application/json; charset=utf-8');
  return JSON.stringify({ orders: page.map(rowToOrder), limit, hasMore, nextCursor });
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
