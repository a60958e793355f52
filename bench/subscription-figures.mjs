/**
 * subscription-figures: Home's recurring figures (subscriptions.dashboardStats) and the product
 * page's per-plan counts over 1,000,000 subscriptions of one store (plus 100,000 of another),
 * written with one INSERT ... SELECT generate_series into a fresh migrated database: 70 % active,
 * 5 % past due, 15 % canceled (ended over the last two years), 5 % trialing, 5 % paused; monthly,
 * 3-monthly and yearly plans of one product. Printed: the first service call's wall time (it
 * works out the 11 past month-ends and keeps them), the p50 wall time over 20 calls after it
 * (after 3 unmeasured), and EXPLAIN (ANALYZE, BUFFERS) of each statement the service sends,
 * captured from the repository functions themselves; the figures and the per-plan counts checked
 * to read only their indexes (an Index Only Scan on the named index, no Seq Scan).
 *
 * Knobs: BENCH_SUBSCRIPTIONS (1000000), BENCH_OTHER_SUBSCRIPTIONS (100000), BENCH_FIGURES_CALLS (20).
 */
import { check } from './lib/check.mjs';
import { freshDatabase, withClient } from './lib/db.mjs';
import { fixed } from './lib/format.mjs';
import { importDist } from './lib/service.mjs';

const N = Number(process.env.BENCH_SUBSCRIPTIONS ?? 1_000_000);
const OTHER = Number(process.env.BENCH_OTHER_SUBSCRIPTIONS ?? 100_000);
const CALLS = Number(process.env.BENCH_FIGURES_CALLS ?? 20);

/**
 * `count` subscriptions of one store and product in one INSERT ... SELECT generate_series: 70 %
 * active, 5 % past due, 15 % canceled (ended over the last two years), 5 % trialing, 5 % paused;
 * the three plans monthly, 3-monthly and yearly; created over the last two years, one e-mail each
 * (`buyer<g>@example.com`). The dashboard benchmark seeds its Subscriptions list with it too.
 */
export async function seedSubscriptionRows(client, { storeId, productId, planIds, count }) {
  await client.query(
    `insert into subscription (id, store_id, livemode, product_id, product_name, plan_id, interval, interval_count,
        unit_price_minor, quantity, currency, status, customer_email, payment_method, first_order_id, anchor,
        current_period_start, current_period_end, trial_end, canceled_at, ended_at, paused_at, created_at, updated_at)
      select substr(md5($1 || g::text), 1, 32), $1, true, $2, 'Editor Pro',
             ($3::text[])[1 + g % 3], (array['month', 'month', 'year'])[1 + g % 3]::text, (array[1, 3, 1])[1 + g % 3],
             (array[900, 2400, 9000])[1 + g % 3], 1 + g % 4, 'USD',
             case when g % 20 < 14 then 'active' when g % 20 = 14 then 'past_due' when g % 20 < 18 then 'canceled'
                  when g % 20 = 18 then 'trialing' else 'paused' end,
             'buyer' || g || '@example.com', 'test', substr(md5('o' || g::text), 1, 32),
             t, t, t + interval '1 month',
             case when g % 20 = 18 then now() + interval '5 days' end,
             case when g % 20 between 15 and 17 then t + (g % 700) * interval '1 day' end,
             case when g % 20 between 15 and 17 then least(now(), t + (g % 700) * interval '1 day') end,
             case when g % 20 = 19 then least(now(), t + interval '40 days') end,
             t, t
        from generate_series(1, $4) g, lateral (select now() - (g % 730) * interval '1 day' as t) c`,
    [storeId, productId, `{${planIds.join(',')}}`, count],
  );
}

async function seed(url, newId) {
  const ids = { store: newId(), other: newId(), product: newId(), plans: [newId(), newId(), newId()] };
  await withClient(url, async (client) => {
    for (const [id, name] of [
      [ids.store, 'Figures'],
      [ids.other, 'Other'],
    ]) {
      await client.query(
        `insert into store (id, name, subdomain, currency, created_at, updated_at) values ($1, $2, $3, 'USD', now(), now())`,
        [id, name, `figures-${id.slice(0, 12)}`],
      );
    }
    await seedSubscriptionRows(client, { storeId: ids.store, productId: ids.product, planIds: ids.plans, count: N });
    await seedSubscriptionRows(client, {
      storeId: ids.other,
      productId: ids.product.slice(0, 31) + 'x',
      planIds: ids.plans,
      count: OTHER,
    });
    await client.query('vacuum analyze subscription');
  });
  return ids;
}

export default {
  name: 'subscription-figures',
  budgetS: 600,
  title: "Home's MRR, active and churned counts and MRR history, and per-plan counts, on 1,000,000 subscriptions",
  measures:
    'subscriptions.dashboardStats and dashboardPlanCounts on a store of 1,000,000 subscriptions: p50 wall ms, and each statement checked to be an index-only scan of its index',

  async run() {
    const db = await freshDatabase();
    const { openOrm, migrate } = await importDist('db/orm.js');
    const orm = await openOrm(db.url, { poolMax: 2 });
    try {
      await migrate(orm);
      const { newId } = await importDist('lib/ids.js');
      const seeded = Date.now();
      const ids = await seed(db.url, newId);
      console.log(
        `seeded ${N.toLocaleString('en-US')} + ${OTHER.toLocaleString('en-US')} subscriptions in ${fixed((Date.now() - seeded) / 1000, 1)} s`,
      );
      const { subscriptionStats } = await importDist('modules/subscriptions/subscription-stats.js');
      const repo = await importDist('modules/subscriptions/subscriptions.repo.js');
      const { systemClock } = await importDist('lib/clock.js');
      const ctx = () => ({ em: orm.em.fork(), clock: systemClock, livemode: true });

      const time = async (name, call) => {
        for (let i = 0; i < 3; i++) await call();
        const ms = [];
        for (let i = 0; i < CALLS; i++) {
          const started = performance.now();
          await call();
          ms.push(performance.now() - started);
        }
        ms.sort((a, b) => a - b);
        console.log(
          `${name}: p50 ${fixed(ms[Math.floor(ms.length / 2)], 1)} ms, max ${fixed(ms.at(-1), 1)} ms over ${CALLS} calls`,
        );
      };
      // The first call works out the 11 past month-ends from the subscriptions and keeps them
      // (subscription_mrr_month); every later call reads them back and works out the current month only.
      const firstStarted = performance.now();
      const stats = await subscriptionStats(ctx(), { storeId: ids.store });
      console.log(
        `subscriptions.dashboardStats, first call (the past months worked out and kept): ${fixed(performance.now() - firstStarted, 1)} ms`,
      );
      console.log(
        `figures: MRR ${stats.mrr} ${stats.currency}, ${stats.activeSubscriptions} active, ${stats.churned30Days} churned in 30 days`,
      );
      console.log(`history: ${stats.monthly.map((m) => `${m.month} ${m.mrr}`).join(', ')}`);
      check(stats.activeSubscriptions === N * 0.75, 'active count (70 % active + 5 % past due)');
      await time('subscriptions.dashboardStats (past months kept)', () =>
        subscriptionStats(ctx(), { storeId: ids.store }),
      );
      // The product row is not seeded: the per-plan statement is timed as the service sends it.
      await time('per-plan counts (selectPlanSubscriptionCounts)', () =>
        repo.selectPlanSubscriptionCounts(orm.em.fork(), ids.product, true),
      );

      // The statements as the repository sends them, explained.
      const captured = [];
      const spy = {
        execute: async (sql, params) => (
          captured.push({ sql, params }),
          [{ mrr_scaled: '0', active: '0', churned: '0' }]
        ),
      };
      await repo.selectSubscriptionFigures(spy, {
        storeId: ids.store,
        livemode: true,
        currency: 'USD',
        churnFrom: new Date(Date.now() - 30 * 86_400_000),
      });
      const boundaries = Array.from(
        { length: 11 },
        (_, i) => new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() - 10 + i, 1)),
      );
      captured.push({ sql: null });
      await repo.selectMrrBuckets(
        { execute: async (sql, params) => (captured.push({ sql, params }), []) },
        { storeId: ids.store, livemode: true, currency: 'USD', boundaries },
      );
      await repo.selectPlanSubscriptionCounts(
        { execute: async (sql, params) => (captured.push({ sql, params }), []) },
        ids.product,
        true,
      );
      const expected = [
        ['figures', ['subscription_store_mrr_index', 'subscription_store_ended_index']],
        // The history reads every subscription of the store that ever paid: when that store holds most
        // of the table (as here), a sequential scan is the planner's cheaper choice, so it is
        // printed, not checked; a store among many reads its rows off subscription_store_history_index.
        ['history', null],
        ['per plan', ['subscription_product_plan_live_index']],
      ];
      const statements = captured.filter((entry) => entry.sql);
      for (const [index, { sql, params }] of statements.entries()) {
        const [name, indexes] = expected[index];
        const rows = await orm.em.fork().execute(`explain (analyze, buffers) ${sql}`, params);
        const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
        console.log(`\n${name}:\n${plan}`);
        if (!indexes) continue;
        check(!plan.includes('Seq Scan'), `${name}: no sequential scan`);
        for (const indexName of indexes)
          check(plan.includes(`Index Only Scan using ${indexName}`), `${name}: index-only on ${indexName}`);
      }
    } finally {
      await orm.close();
      await db.drop();
    }
  },
};
