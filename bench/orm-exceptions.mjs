/**
 * orm-exceptions: the hot-path statements that bypass the ORM (each `<domain>.repo.ts` names
 * its reason), each timed against the ORM doing the same job, in this process, one call at a
 * time on a warm pool: the wall time and this process's CPU per call. It is the measured reason
 * docs/decisions.md ("Hot paths") gives for each exception, and what to run again when MikroORM
 * changes.
 *
 * One database, migrated by the built server's migrations and filled with SQL: a store with an
 * API key and a member, 3 blacklist entries, a manual-delivery and a license-key product (200
 * keys), and BENCH_ORM_ORDERS (5,000) orders of two lines each.
 *
 * Knobs: BENCH_ORM_CALLS (2,000 measured calls per side after 300 unmeasured), BENCH_ORM_ORDERS.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { freshDatabase, withClient } from './lib/db.mjs';
import { fixed, table } from './lib/format.mjs';
import { importDist } from './lib/service.mjs';

const CALLS = Number(process.env.BENCH_ORM_CALLS ?? 2000);
const WARMUP = 300;
const ORDERS = Number(process.env.BENCH_ORM_ORDERS ?? 5000);

function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
}

/** Wall and CPU microseconds per call of `fn` (awaited one after the other). */
async function timeIt(fn) {
  for (let i = 0; i < WARMUP; i++) await fn(i);
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (let i = 0; i < CALLS; i++) await fn(WARMUP + i);
  const wallUs = ((performance.now() - start) * 1000) / CALLS;
  const used = process.cpuUsage(cpu);
  return { wallUs, cpuUs: (used.user + used.system) / CALLS };
}

async function seed(url) {
  const ids = {
    user: `u${randomBytes(8).toString('hex')}`,
    store: `s${randomBytes(8).toString('hex')}`,
    manual: `p${randomBytes(8).toString('hex')}`,
    keyed: `k${randomBytes(8).toString('hex')}`,
    keyHash: randomBytes(32).toString('hex'),
    origin: 'https://theme.bench.test',
  };
  await withClient(url, async (client) => {
    await client.query(
      `insert into "user" (id, email, password_hash, created_at, updated_at) values ($1, 'orm@bench.test', 'x', now(), now())`,
      [ids.user],
    );
    await client.query(
      `insert into store (id, name, subdomain, currency, allowed_origins, created_at, updated_at) values ($1, 'ORM bench', 'ormbench', 'USD', array[$2], now(), now())`,
      [ids.store, ids.origin],
    );
    await client.query(
      `insert into store_member (id, store_id, user_id, role, created_at) values ($1, $2, $3, 'owner', now())`,
      [`m${ids.store}`, ids.store, ids.user],
    );
    await client.query(
      `insert into api_key (id, user_id, name, prefix, key_hash, scopes, store_ids, created_at) values ($1, $2, 'bench', 'sk_live_x', $3, '{order:read}', array[$4], now())`,
      [`a${ids.store}`, ids.user, ids.keyHash, ids.store],
    );
    for (const [i, [kind, value]] of [
      ['ip', '198.51.100.1'],
      ['country', 'KP'],
      ['email', 'bad@bench.test'],
    ].entries()) {
      await client.query(
        `insert into blacklist_entry (id, store_id, kind, value, created_at) values ($1, $2, $3, $4, now())`,
        [`b${i}${ids.store}`, ids.store, kind, value],
      );
    }
    await client.query(
      `insert into product (id, store_id, name, slug, price_minor, status, delivery_methods, created_at, updated_at) values
         ($1, $3, 'Manual', 'manual', 999, 'active', '{manualDelivery}', now(), now()), ($2, $3, 'Keyed', 'keyed', 2500, 'active', '{licenseKeys}', now(), now())`,
      [ids.manual, ids.keyed, ids.store],
    );
    await client.query(
      `insert into license_key (id, product_id, value_enc, value_hash, status, created_at)
       select 'lk' || g || $2, $1, 'sealed', md5(g::text) || md5(g::text), 'available', now() from generate_series(1, 200) g`,
      [ids.keyed, ids.store.slice(1, 20)],
    );
    await client.query(
      `insert into "order" (id, store_id, status, product_name, price_minor, subtotal_minor, currency, customer_email, created_at, updated_at)
       select 'o' || g || $2, $1, 'pending', 'Manual +1 more', 4498, 4498, 'USD', 'buyer' || (g % 50) || '@bench.test',
         now() - g * interval '1 second', now() - g * interval '1 second' from generate_series(1, $3::int) g`,
      [ids.store, ids.store.slice(1, 20), ORDERS],
    );
    await client.query(
      `insert into order_line (id, order_id, product_id, product_name, quantity, unit_price_minor, position)
       select 'l' || p || o.id, o.id, case p when 0 then $2 else $3 end, case p when 0 then 'Manual' else 'Keyed' end, case p when 0 then 2 else 1 end,
         case p when 0 then 999 else 2500 end, p
       from "order" o, generate_series(0, 1) p where o.store_id = $1`,
      [ids.store, ids.manual, ids.keyed],
    );
    await client.query('analyze');
  });
  return ids;
}

export default {
  name: 'orm-exceptions',
  budgetS: 300,
  title: 'Hot-path raw SQL against the ORM doing the same job, per call',
  measures:
    'each hot-path statement of the repositories against its ORM equivalent: wall and CPU microseconds per call, one at a time',

  async run() {
    const db = await freshDatabase();
    const { openOrm, migrate } = await importDist('db/orm.js');
    const orm = await openOrm(db.url, { poolMax: 4 });
    try {
      await migrate(orm);
      const ids = await seed(db.url);
      const { OrderSchema, OrderLineSchema } = await importDist('modules/orders/orders.entities.js');
      const { ProductSchema } = await importDist('modules/catalog/catalog.entities.js');
      const { StoreSchema, StoreMemberSchema } = await importDist('modules/stores/stores.entities.js');
      const { ApiKeySchema } = await importDist('modules/api-keys/api-keys.entities.js');
      const { BlacklistEntrySchema } = await importDist('modules/blacklist/blacklist.entities.js');
      const { selectOrderPage, linesOf } = await importDist('modules/orders/orders.repo.js');
      const { selectCartProducts } = await importDist('modules/catalog/catalog.repo.js');
      const { stockOf } = await importDist('modules/catalog/key-store.js');
      const { selectStoreRef, anyStoreAllows } = await importDist('modules/stores/stores.repo.js');
      const { selectCredential } = await importDist('modules/api-keys/api-keys.repo.js');
      const { matchingKinds } = await importDist('modules/blacklist/blacklist.repo.js');
      const { insertNewOrder } = await importDist('modules/orders/orders.repo.js');
      const { recordEvent } = await importDist('modules/events/outbox.js');
      const { toOrderDetail } = await importDist('modules/orders/order-views.js');
      const { newId } = await importDist('lib/ids.js');

      const em = () => orm.em.fork();
      // Live mode throughout: the seeded rows take the columns' default (live).
      const pageIds = (await selectOrderPage(em(), { storeId: ids.store, livemode: true }, undefined, 50)).map(
        (row) => row.id,
      );
      check(pageIds.length === 50, 'the seeded store has a first page of 50 orders');
      const buyer = [
        { kind: 'ip', value: '203.0.113.9' },
        { kind: 'country', value: 'DE' },
        { kind: 'email', value: 'good@bench.test' },
      ];
      const newOrder = (at) => ({
        id: newId(),
        number: 0,
        store: { id: ids.store },
        livemode: true,
        status: 'pending',
        productName: 'Manual +1 more',
        priceMinor: 4498,
        subtotalMinor: 4498,
        discountMinor: 0,
        couponId: null,
        currency: 'USD',
        customerEmail: 'buyer@bench.test',
        country: 'DE',
        buyerIp: '203.0.113.9',
        userAgent: 'bench',
        customFieldResponses: [],
        checkoutTokenHash: randomBytes(32).toString('hex'),
        createdAt: at,
        lines: [
          { id: newId(), productId: ids.manual, productName: 'Manual', quantity: 2, unitPriceMinor: 999 },
          { id: newId(), productId: ids.keyed, productName: 'Keyed', quantity: 1, unitPriceMinor: 2500 },
        ],
      });
      // The order.created payload as the checkout builds it (the outbox checks it against its schema).
      const detail = (order) => ({
        order: toOrderDetail({
          ...order,
          paidMinor: 0,
          paymentMethod: '',
          keyCount: 0,
          note: '',
          completedAt: null,
          updatedAt: order.createdAt,
        }),
      });

      const pairs = [
        {
          name: 'orders list, first page of 50 (orders.repo selectOrderPage)',
          raw: () => selectOrderPage(em(), { storeId: ids.store, livemode: true }, undefined, 51),
          orm: () =>
            em().find(
              OrderSchema,
              { store: ids.store, livemode: true },
              { orderBy: { createdAt: 'desc', id: 'desc' }, limit: 51 },
            ),
        },
        {
          name: "lines of a page's 50 orders (orders.repo linesOf)",
          raw: () => linesOf(em(), pageIds),
          orm: () =>
            em().find(OrderLineSchema, { order: { $in: pageIds } }, { orderBy: { position: 'asc', id: 'asc' } }),
        },
        {
          name: 'cart products with key stock (catalog.repo selectCartProducts)',
          raw: () => selectCartProducts(em(), ids.store, [ids.manual, ids.keyed]),
          orm: async () => {
            const e = em();
            const products = await e.find(ProductSchema, { store: ids.store, id: { $in: [ids.manual, ids.keyed] } });
            return stockOf(e, products);
          },
        },
        {
          name: 'selling store by id or subdomain (stores.repo selectStoreRef)',
          raw: () => selectStoreRef(em(), 'ormbench'),
          orm: () => em().findOne(StoreSchema, { $or: [{ id: 'ormbench' }, { subdomain: 'ormbench' }] }),
        },
        {
          name: 'API key and membership (api-keys.repo selectCredential)',
          raw: () => selectCredential(em(), ids.keyHash, ids.store),
          orm: async () => {
            const e = em();
            const key = await e.findOne(ApiKeySchema, { keyHash: ids.keyHash });
            return [key, await e.findOne(StoreMemberSchema, { user: key.user, store: ids.store })];
          },
        },
        {
          name: 'blacklist check (blacklist.repo matchingKinds)',
          raw: () => matchingKinds(em(), ids.store, true, buyer),
          orm: () =>
            em().find(
              BlacklistEntrySchema,
              { store: ids.store, livemode: true, $or: buyer.map((c) => ({ kind: c.kind, value: c.value })) },
              { fields: ['kind'] },
            ),
        },
        {
          name: 'store origin check (stores.repo anyStoreAllows)',
          raw: () => anyStoreAllows(em(), ids.origin),
          orm: () => em().count(StoreSchema, { allowedOrigins: { $contains: [ids.origin] }, banned: false }),
        },
        {
          name: 'number + order + 2 lines + event in one statement (orders.repo insertNewOrder)',
          raw: async () => {
            const order = newOrder(new Date());
            order.number = await insertNewOrder(em(), order, {
              storeId: ids.store,
              livemode: true,
              type: 'order.created',
              payload: detail(order),
              at: order.createdAt,
              dispatched: true,
            });
          },
          orm: async () => {
            const order = newOrder(new Date());
            await em().transactional(async (tx) => {
              const [{ number }] = await tx.execute(`select nextval('order_number_seq') as number`);
              order.number = Number(number);
              const { lines, couponId, customFieldResponses, ...fields } = order;
              const entity = tx.create(OrderSchema, {
                ...fields,
                store: ids.store,
                couponId,
                customFieldResponses,
                paidMinor: 0,
                paymentMethod: '',
                note: '',
                keyCount: 0,
                updatedAt: order.createdAt,
                version: 1,
              });
              for (const [position, line] of lines.entries())
                tx.create(OrderLineSchema, { ...line, order: entity, position });
              await tx.flush();
              await recordEvent(tx, {
                storeId: ids.store,
                livemode: true,
                type: 'order.created',
                payload: detail(order),
                at: order.createdAt,
                dispatched: true,
              });
            });
          },
        },
      ];

      const rows = [];
      for (const pair of pairs) {
        // Alternate the sides twice, so neither gets all the warm caches.
        const raw1 = await timeIt(pair.raw);
        const orm1 = await timeIt(pair.orm);
        const raw2 = await timeIt(pair.raw);
        const orm2 = await timeIt(pair.orm);
        const raw = { wallUs: Math.min(raw1.wallUs, raw2.wallUs), cpuUs: Math.min(raw1.cpuUs, raw2.cpuUs) };
        const viaOrm = { wallUs: Math.min(orm1.wallUs, orm2.wallUs), cpuUs: Math.min(orm1.cpuUs, orm2.cpuUs) };
        rows.push({
          statement: pair.name,
          'raw wall µs': fixed(raw.wallUs, 0),
          'ORM wall µs': fixed(viaOrm.wallUs, 0),
          'raw CPU µs': fixed(raw.cpuUs, 0),
          'ORM CPU µs': fixed(viaOrm.cpuUs, 0),
          'ORM/raw CPU': fixed(viaOrm.cpuUs / raw.cpuUs, 2),
        });
      }
      console.log(
        `${CALLS} calls per side (the better of two runs, after ${WARMUP} unmeasured), ${ORDERS} orders in the store; CPU is this process's (the Node side of each call)`,
      );
      console.log(
        table(
          rows,
          Object.keys(rows[0]).map((key, i) => ({ key, label: key, align: i === 0 ? 'left' : 'right' })),
        ),
      );
    } finally {
      await orm.close();
      await db.drop();
    }
  },
};
