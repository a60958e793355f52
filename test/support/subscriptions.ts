/**
 * Subscriptions written straight to a server's database, as checkout will write them: the
 * subscription routes are tested before checkout makes subscriptions. Each row is the module's
 * own new row with its `activate` move applied in a transaction (as the service test does), so
 * its state, period and events are the ones the module writes.
 */
import pg from 'pg';
import { openOrm, type Orm } from '../../apps/server/src/db/orm.js';
import { newId } from '../../apps/server/src/lib/ids.js';
import { createProduct } from '../../apps/server/src/modules/catalog/catalog.service.js';
import { inTransaction } from '../../apps/server/src/modules/request/transaction.js';
import { applyMove, newSubscriptionRow } from '../../apps/server/src/modules/subscriptions/subscriptions.service.js';
import { createStore } from './factories.js';
import { serviceContext } from './in-process.js';

export interface SubscriptionSeed {
  /** The subscription's mode: live unless false (a test-mode subscription). */
  livemode?: boolean;
  productId?: string;
  /** The plan it is on (a made-up id unless given). */
  planId?: string;
  productName?: string;
  customerEmail?: string;
  unitPriceMinor?: number;
  quantity?: number;
  currency?: string;
  /** Left `incomplete` (no `activate` move) when false. */
  activate?: boolean;
}

/** Inserts active (by default) monthly subscriptions for a store; answers their ids in order. */
export async function insertSubscriptions(
  databaseUrl: string,
  storeId: string,
  seeds: SubscriptionSeed[],
): Promise<string[]> {
  const orm = await openOrm(databaseUrl, { poolMax: 1 });
  try {
    const ids: string[] = [];
    for (const seed of seeds) {
      const ctx = { ...serviceContext(orm), livemode: seed.livemode ?? true };
      const now = ctx.clock.now();
      ids.push(
        await inTransaction(ctx, async (tx) => {
          const row = newSubscriptionRow(
            tx,
            {
              storeId,
              livemode: seed.livemode ?? true,
              productId: seed.productId ?? newId(),
              productName: seed.productName ?? 'Editor Pro',
              planId: seed.planId ?? newId(),
              interval: 'month',
              intervalCount: 1,
              unitPriceMinor: seed.unitPriceMinor ?? 900,
              quantity: seed.quantity ?? 1,
              discountMinor: 0,
              couponId: null,
              currency: seed.currency ?? 'USD',
              customerEmail: seed.customerEmail ?? 'buyer@example.com',
              paymentMethod: 'test',
              firstOrderId: newId(),
            },
            now,
          );
          if (seed.activate ?? true) await applyMove(tx, row, 'activate', now);
          await tx.em.flush();
          return row.id;
        }),
      );
    }
    return ids;
  } finally {
    await orm.close();
  }
}

export interface DueSubscriptions {
  storeId: string;
  productId: string;
  planId: string;
  /** The subscriptions' ids, in insertion order. */
  ids: string[];
  /** Every subscription's current period start, as inserted (a renewal moves it on). */
  periodStart: Date;
  periodEnd: Date;
}

/**
 * `count` live monthly subscriptions of one new store's recurring product (9.00 a month), all
 * due now, written in bulk with SQL as a paid checkout leaves them: each `active`, its period
 * ended an hour ago (`due_at` = its end), with its first order (`subscription_create`,
 * completed, with its line) and the test card `card` saved on that order, which renewals charge
 * (payments.service.ts savedMethodOfSubscription). The store and product are made by the
 * services; the rest is four INSERTs, so thousands take a second or two.
 */
export async function insertDueSubscriptions(
  orm: Orm,
  databaseUrl: string,
  count: number,
  options: { card?: string; now?: Date } = {},
): Promise<DueSubscriptions> {
  const ctx = serviceContext(orm);
  const store = await createStore(orm.em.fork());
  const product = await createProduct(ctx, {
    storeId: store.id,
    name: 'Editor Pro',
    deliveryMethods: ['deliveryInstructions'],
    deliveryInstructions: 'Sign in with your e-mail.',
    plans: [{ interval: 'month', intervalCount: 1, price: 9, trialDays: 0, active: true }],
  });
  const now = options.now ?? new Date();
  const periodEnd = new Date(now.getTime() - 3_600_000);
  const periodStart = new Date(periodEnd);
  periodStart.setUTCMonth(periodStart.getUTCMonth() - 1);
  const ids = Array.from({ length: count }, () => newId());
  const orderIds = ids.map(() => newId());
  const lineIds = ids.map(() => newId());
  const methodIds = ids.map(() => newId());
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string }>(
      'select id from product_plan where product_id = $1 and livemode order by position limit 1',
      [product.id],
    );
    const planId = rows[0]!.id;
    await client.query('begin');
    // $1-$4: one row per subscription; the rest each statement's own.
    const rowsOf = `unnest($1::text[], $2::text[], $3::text[], $4::text[]) with ordinality
      as s(sub_id, order_id, line_id, method_id, i)`;
    const each = [ids, orderIds, lineIds, methodIds];
    await client.query(
      `insert into "order" (id, store_id, status, product_name, price_minor, subtotal_minor, paid_minor, currency,
         payment_method, customer_email, country, buyer_ip, paid_at, completed_at, delivered_at, created_at, updated_at,
         livemode, subscription_id, billing_reason)
       select order_id, $5, 'completed', 'Editor Pro', 900, 900, 900, 'USD', 'test', 'buyer-' || i || '@example.test',
         'DE', '203.0.113.9', $6, $6, $6, $6, $6, true, sub_id, 'subscription_create'
       from ${rowsOf}`,
      [...each, store.id, periodStart],
    );
    await client.query(
      `insert into order_line (id, order_id, product_id, product_name, quantity, unit_price_minor, position, livemode,
         plan_id, plan_interval, plan_interval_count, plan_trial_days)
       select line_id, order_id, $5, 'Editor Pro', 1, 900, 0, true, $6, 'month', 1, 0
       from ${rowsOf}`,
      [...each, product.id, planId],
    );
    await client.query(
      `insert into saved_payment_method (id, store_id, livemode, order_id, gateway, customer_ref, method_ref, created_at)
       select method_id, $5, true, order_id, 'test', null, $6, $7
       from ${rowsOf}`,
      [...each, store.id, options.card ?? 'succeeds', periodStart],
    );
    await client.query(
      `insert into subscription (id, store_id, livemode, product_id, product_name, plan_id, interval, interval_count,
         unit_price_minor, quantity, currency, status, customer_email, payment_method, first_order_id,
         latest_order_number, anchor, current_period_start, current_period_end, due_at, created_at, updated_at)
       select s.sub_id, $5, true, $6, 'Editor Pro', $7, 'month', 1, 900, 1, 'USD', 'active', o.customer_email, 'test',
         s.order_id, o.number, $8, $8, $9, $9, $8, $8
       from ${rowsOf} join "order" o on o.id = s.order_id`,
      [...each, store.id, product.id, planId, periodStart, periodEnd],
    );
    await client.query('commit');
    return { storeId: store.id, productId: product.id, planId, ids, periodStart, periodEnd };
  } finally {
    await client.end();
  }
}
