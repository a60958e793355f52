#!/usr/bin/env node
/**
 * The renewals benchmark's floor: bare `pg`, no ORM, renewing every due subscription of the
 * database with the statements the service's renewal sends (flows/renew-subscription.ts), one for
 * one, in the same three parts (20 statements a renewal, BEGIN and COMMIT included):
 *
 *   claim:  UPDATE subscription SET lease_until ... WHERE id IN (SELECT ... due ... FOR UPDATE SKIP LOCKED LIMIT 100)
 *   tx1:    the subscription's row lock; the period's order looked up (written once); the first
 *           order's country, IP, billing details and line's tax category with the store's tax settings
 *           (a store without tax: the order is untaxed); the order, its line and `order.created` in one
 *           statement; the lease
 *   charge: the saved method (the newest by the subscription's orders or its own, one statement);
 *           one test_gateway_charge row per key
 *   tx2:    the order's and the subscription's row locks; the payment; the store's name and settings
 *           (the receipt's); the order's lines; the receipt mail (dedupe key); the order completed;
 *           the subscription's next period (lease cleared); `order.paid`, `subscription.renewed` and
 *           `order.completed` in one insert just before the commit
 *
 * What the floor does not do is the service's work between statements: the ORM, the transition
 * table, the event payloads' schemas, the receipt's rendering and sealing (it writes a blob of
 * the receipt's size instead).
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

/** The receipt's size as the service stores it (sealed text and HTML). */
const MAIL_TEXT = randomFillSync(Buffer.alloc(1_200)).toString('base64');
const MAIL_HTML = randomFillSync(Buffer.alloc(4_400)).toString('base64');

async function renew(id) {
  const now = new Date();
  // tx1: the period's order under the row lock, and the lease.
  const planned = await inTx(async (c) => {
    const sub = (await c.query('select * from subscription where id = $1 limit 1 for update', [id])).rows[0];
    if (!sub || sub.current_period_end > now) return null;
    const existing = await c.query(
      `select id, number from "order" where subscription_id = $1 and period_start = $2 and billing_reason = $3 limit 1`,
      [id, sub.current_period_end, 'subscription_cycle'],
    );
    if (existing.rows.length) throw new Error(`the period's order of ${id} exists already`);
    const first = (
      await c.query(
        `select o.country, o.buyer_ip as "buyerIp", o.billing_country as "billingCountry", o.buyer_tax_id as "buyerTaxId",
           o.billing_name as "billingName", o.billing_address as "billingAddress",
           coalesce((select l.tax_category from order_line l where l.order_id = o.id order by l.position limit 1), 'standard')
             as "taxCategory",
           (select s.settings->'tax' from store s where s.id = o.store_id) as "storeTax"
         from "order" o where o.id = $1 limit 1`,
        [sub.first_order_id],
      )
    ).rows[0];
    if (first.storeTax && first.storeTax.behavior !== 'off') throw new Error('the floor renews untaxed stores only');
    const orderId = newId();
    const amount = Number(sub.unit_price_minor) * sub.quantity;
    const payload = { order: { id: orderId, status: 'pending', total: amount / 100, currency: sub.currency } };
    const { rows } = await c.query(
      `with next_number as (select nextval('order_number_seq') as number),
       new_order as (
         insert into "order" (id, number, store_id, livemode, status, product_name, price_minor, subtotal_minor, discount_minor,
           coupon_id, coupon_code, paid_minor, currency, payment_method, customer_email, country, buyer_ip, user_agent, note,
           custom_field_responses, checkout_token_hash, key_count, subscription_id, billing_reason, period_start, created_at,
           updated_at, version, tax_behavior, tax_minor, tax_rate_ppm, tax_country, reverse_charge, billing_country,
           buyer_tax_id, billing_name, billing_address)
         values ($1, (select number from next_number), $2, true, 'pending', $3, $4, $4, 0, null, null, 0, $5, $6, $7, $8, $9,
           '', '', '[]'::jsonb, $10, 0, $11, 'subscription_cycle', $12, $13, $13, 1, null, 0, null, null, false, $21, $22, $23,
           $24)),
       new_lines as (
         insert into order_line (id, order_id, livemode, product_id, product_name, quantity, unit_price_minor, position,
           plan_id, plan_interval, plan_interval_count, plan_trial_days, tax_category, discount_minor, net_minor, tax_minor,
           tax_rate_ppm)
         values ($14, $1, true, $15, $3, $16, $17, 0, $18, 'month', 1, 0, $25, 0, $4, 0, 0)),
       new_event as (
         insert into event (id, store_id, livemode, type, payload, created_at) values ($19, $2, true, 'order.created', $20, $13))
       select number from next_number`,
      [
        orderId,
        sub.store_id,
        sub.product_name,
        amount,
        sub.currency,
        sub.payment_method,
        sub.customer_email,
        first.country,
        first.buyerIp,
        newId() + newId(),
        id,
        sub.current_period_end,
        now,
        newId(),
        sub.product_id,
        sub.quantity,
        sub.unit_price_minor,
        sub.plan_id,
        `evt_${newId()}`,
        payload,
        first.billingCountry,
        first.buyerTaxId,
        first.billingName,
        first.billingAddress,
        first.taxCategory,
      ],
    );
    await c.query(
      `update subscription set latest_order_number = $2, lease_until = $3, updated_at = $4, version = version + 1
        where id = $1 and version = $5 returning version`,
      [id, rows[0].number, new Date(now.getTime() + LEASE_MS), now, sub.version],
    );
    return { sub, orderId, amount, number: rows[0].number };
  });
  if (!planned) return false;
  const { sub, orderId, amount } = planned;
  // The charge: the saved method, one row per idempotency key.
  const method = (
    await pool.query(
      `select id, "storeId", livemode, gateway, "customerRef", "methodRef", "orderId", "subscriptionId", "createdAt" from (
         (select m.id, m.store_id as "storeId", m.livemode, m.gateway, m.customer_ref as "customerRef",
                 m.method_ref as "methodRef", m.order_id as "orderId", m.subscription_id as "subscriptionId",
                 m.created_at as "createdAt", 0 as from_page
            from saved_payment_method m join "order" o on o.id = m.order_id
           where o.subscription_id = $1 order by m.created_at desc, m.id desc limit 1)
         union all
         (select m.id, m.store_id as "storeId", m.livemode, m.gateway, m.customer_ref as "customerRef",
                 m.method_ref as "methodRef", m.order_id as "orderId", m.subscription_id as "subscriptionId",
                 m.created_at as "createdAt", 1 as from_page
            from saved_payment_method m
           where m.subscription_id = $2 order by m.created_at desc, m.id desc limit 1)
       ) newest order by "createdAt" desc, from_page desc limit 1`,
      [id, id],
    )
  ).rows[0];
  const key = `sub_${id}_${sub.current_period_end.toISOString()}_0`;
  await pool.query(
    `insert into test_gateway_charge (id, idempotency_key, method_id, livemode, amount_minor, currency, status, decline_code, created_at)
     values ($1, $2, $3, true, $4, $5, 'succeeded', null, $6) on conflict (idempotency_key) do nothing returning id`,
    [newId(), key, method.id, amount, sub.currency, new Date()],
  );
  // tx2: settled, and the subscription's next period.
  await inTx(async (c) => {
    const paidAt = new Date();
    const order = (await c.query('select * from "order" where id = $1 limit 1 for update', [orderId])).rows[0];
    const locked = (await c.query('select * from subscription where id = $1 limit 1 for update', [id])).rows[0];
    await c.query(
      `insert into payment (id, order_id, gateway, provider_ref, amount_minor, currency, status, created_at, updated_at)
       values ($1, $2, $3, $4, $5, $6, 'paid', $7, $8)`,
      [newId(), orderId, 'test', `test:${newId()}`, amount, sub.currency, paidAt, paidAt],
    );
    await c.query(
      `select name, settings, subscription_grace_days as "subscriptionGraceDays", license_lease_days as "licenseLeaseDays"
       from store where id = $1`,
      [sub.store_id],
    );
    await c.query(
      `select order_id, product_name, quantity, unit_price_minor, plan_id, plan_interval, plan_interval_count, plan_trial_days
       from order_line where order_id = any($1) order by position, id`,
      [[orderId]],
    );
    await c.query(
      `insert into outbound_email (id, "to", subject, text, html, status, attempts, due_at, dedupe_key, created_at)
       values ($1, $2, $3, $4, $5, $6, 0, $7, $8, $9) on conflict (dedupe_key) do nothing returning id`,
      [
        newId(),
        sub.customer_email,
        `Your ${sub.product_name} subscription renewed`,
        MAIL_TEXT,
        MAIL_HTML,
        'queued',
        null,
        `receipt:${orderId}`,
        paidAt,
      ],
    );
    const next = new Date(locked.current_period_end);
    next.setUTCMonth(next.getUTCMonth() + 1);
    const view = { id, status: 'active', currentPeriodStart: locked.current_period_end, currentPeriodEnd: next };
    await c.query(
      `update "order" set status = 'completed', paid_minor = $2, payment_method = 'test', paid_at = $3, completed_at = $3,
         updated_at = $3, version = version + 1 where id = $1 and version = $4 returning version`,
      [orderId, amount, paidAt, order.version],
    );
    await c.query(
      `update subscription set current_period_start = $2, current_period_end = $3, due_at = $3, lease_until = null,
         updated_at = $4, version = version + 1 where id = $1 and version = $5 returning version`,
      [id, locked.current_period_end, next, paidAt, locked.version],
    );
    // The transaction's events, in one statement just before the commit (the service's commit batch).
    const events = [
      ['order.paid', { order: { id: orderId, status: 'paid', total: amount / 100 } }],
      ['subscription.renewed', { subscription: view }],
      ['order.completed', { order: { id: orderId, status: 'completed', total: amount / 100 } }],
    ];
    await c.query(
      `insert into event (id, store_id, livemode, type, payload, created_at, dispatched_at)
       select id, store_id, livemode, type, payload, created_at, dispatched_at
         from unnest($1::text[], $2::text[], $3::boolean[], $4::text[], $5::jsonb[], $6::timestamptz[], $7::timestamptz[])
              with ordinality as e(id, store_id, livemode, type, payload, created_at, dispatched_at, position)
        order by position`,
      [
        events.map(() => `evt_${newId()}`),
        events.map(() => sub.store_id),
        events.map(() => true),
        events.map(([type]) => type),
        events.map(([, payload]) => JSON.stringify(payload)),
        events.map(() => paidAt),
        events.map(() => null),
      ],
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
