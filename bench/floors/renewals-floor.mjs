#!/usr/bin/env node
/**
 * The renewals benchmark's floor: bare `pg`, no ORM, renewing every due subscription of the
 * database with roughly what the service's renewal writes, in the same three parts:
 *
 *   claim: UPDATE subscription SET lease_until ... WHERE id IN (SELECT ... due ... FOR UPDATE SKIP LOCKED LIMIT 100)
 *   tx1:   the subscription's row lock, the renewal order, its line, `order.created`, the lease
 *   charge: the saved method (join on the first order), one test_gateway_charge row per key (ON CONFLICT DO NOTHING)
 *   tx2:   the order's and the subscription's row locks, the order completed, its payment, `order.paid`,
 *          the subscription's next period (lease cleared), `subscription.renewed`
 *
 * `node renewals-floor.mjs` with DATABASE_URL and FLOOR_PARALLEL (8, as the engine's lanes);
 * runs until a claim finds nothing due, then prints one JSON line { renewed, ms }.
 */
import { randomFillSync } from 'node:crypto';
import pg from 'pg';

const PARALLEL = Number(process.env.FLOOR_PARALLEL ?? 8);
const BATCH = 100;
const LEASE_MS = 60_000;

const DIGITS = '0123456789abcdefghijklmnopqrstuvwxyz';
function newId() {
  const bytes = randomFillSync(new Uint8Array(24));
  let id = String.fromCharCode(97 + (bytes[0] % 26));
  for (let i = 1; i < 24; i++) id += DIGITS[bytes[i] % 36];
  return id;
}

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: PARALLEL + 1 });

async function inTx(run) {
  const client = await pool.connect();
  try {
    await client.query('begin');
    const result = await run(client);
    await client.query('commit');
    return result;
  } catch (error) {
    await client.query('rollback').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

async function renew(id) {
  const now = new Date();
  // tx1: the period's order under the row lock, and the lease.
  const planned = await inTx(async (c) => {
    const sub = (
      await c.query(
        `select id, store_id, product_id, product_name, plan_id, unit_price_minor, quantity, currency, customer_email,
                payment_method, first_order_id, current_period_end
           from subscription where id = $1 for update`,
        [id],
      )
    ).rows[0];
    if (!sub || sub.current_period_end > now) return null;
    const orderId = newId();
    const amount = Number(sub.unit_price_minor) * sub.quantity;
    const { rows } = await c.query(
      `insert into "order" (id, store_id, status, product_name, price_minor, subtotal_minor, currency, payment_method,
         customer_email, country, buyer_ip, created_at, updated_at, livemode, subscription_id, billing_reason, period_start)
       select $1, $2, 'pending', $3, $4, $4, $5, $6, $7, o.country, o.buyer_ip, $8, $8, true, $9, 'subscription_cycle', $10
         from "order" o where o.id = $11
       on conflict do nothing returning number`,
      [
        orderId,
        sub.store_id,
        sub.product_name,
        amount,
        sub.currency,
        sub.payment_method,
        sub.customer_email,
        now,
        id,
        sub.current_period_end,
        sub.first_order_id,
      ],
    );
    await c.query(
      `insert into order_line (id, order_id, product_id, product_name, quantity, unit_price_minor, position, livemode,
         plan_id, plan_interval, plan_interval_count, plan_trial_days)
       values ($1, $2, $3, $4, $5, $6, 0, true, $7, 'month', 1, 0)`,
      [newId(), orderId, sub.product_id, sub.product_name, sub.quantity, sub.unit_price_minor, sub.plan_id],
    );
    await c.query(
      `insert into event (id, store_id, type, payload, created_at, livemode) values ($1, $2, 'order.created', $3, $4, true)`,
      [`evt_${newId()}`, sub.store_id, { order: { id: orderId, number: rows[0].number, status: 'pending' } }, now],
    );
    await c.query('update subscription set lease_until = $2, latest_order_number = $3 where id = $1', [
      id,
      new Date(now.getTime() + LEASE_MS),
      rows[0].number,
    ]);
    return { sub, orderId, amount };
  });
  if (!planned) return false;
  const { sub, orderId, amount } = planned;
  // The charge: the saved method, one row per idempotency key.
  const method = (
    await pool.query(
      `select m.id from saved_payment_method m join "order" o on o.id = m.order_id
        where o.subscription_id = $1 order by m.created_at desc, m.id desc limit 1`,
      [id],
    )
  ).rows[0];
  const key = `sub_${id}_${sub.current_period_end.toISOString()}_0`;
  await pool.query(
    `insert into test_gateway_charge (id, idempotency_key, method_id, livemode, amount_minor, currency, status, created_at)
     values ($1, $2, $3, true, $4, $5, 'succeeded', $6) on conflict (idempotency_key) do nothing`,
    [newId(), key, method.id, amount, sub.currency, new Date()],
  );
  // tx2: settled, and the subscription's next period.
  await inTx(async (c) => {
    const paidAt = new Date();
    await c.query('select id from "order" where id = $1 for update', [orderId]);
    await c.query('select id from subscription where id = $1 for update', [id]);
    await c.query(
      `update "order" set status = 'completed', paid_minor = price_minor, paid_at = $2, completed_at = $2,
         delivered_at = $2, updated_at = $2, version = version + 1 where id = $1`,
      [orderId, paidAt],
    );
    await c.query(
      `insert into payment (id, order_id, gateway, provider_ref, amount_minor, currency, status, created_at, updated_at)
       values ($1, $2, 'test', $3, $4, $5, 'paid', $6, $6)`,
      [newId(), orderId, `test:${newId()}`, amount, sub.currency, paidAt],
    );
    await c.query(
      `insert into event (id, store_id, type, payload, created_at, livemode) values ($1, $2, 'order.paid', $3, $4, true)`,
      [`evt_${newId()}`, sub.store_id, { order: { id: orderId, status: 'completed' } }, paidAt],
    );
    const { rows } = await c.query(
      `update subscription set current_period_start = current_period_end,
         current_period_end = current_period_end + interval '1 month', due_at = current_period_end + interval '1 month',
         lease_until = null, updated_at = $2, version = version + 1 where id = $1
       returning id, status, current_period_start, current_period_end`,
      [id, paidAt],
    );
    await c.query(
      `insert into event (id, store_id, type, payload, created_at, livemode) values ($1, $2, 'subscription.renewed', $3, $4, true)`,
      [`evt_${newId()}`, sub.store_id, { subscription: rows[0] }, paidAt],
    );
  });
  return true;
}

const started = performance.now();
let renewed = 0;
for (;;) {
  const now = new Date();
  const { rows } = await pool.query(
    `update subscription set lease_until = $2 where id in (
       select id from subscription where due_at <= $1 and due_at is not null and livemode
          and (lease_until is null or lease_until <= $1)
        order by due_at limit $3 for update skip locked)
     returning id`,
    [now, new Date(now.getTime() + LEASE_MS), BATCH],
  );
  const ids = rows.map((row) => row.id);
  let next = 0;
  const lane = async () => {
    while (next < ids.length) if (await renew(ids[next++])) renewed++;
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, ids.length) }, lane));
  if (ids.length === 0) break;
}
const ms = performance.now() - started;
await pool.end();
console.log(JSON.stringify({ renewed, ms }));
