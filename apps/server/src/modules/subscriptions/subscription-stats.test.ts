/**
 * Home's recurring figures and the product page's plan counts against the real database
 * (docs/decisions.md, "MRR"): MRR sums unit price x seats per month (a yearly plan /12, every
 * interval count honoured, exact to the minor unit with one rounding), of active and past-due
 * subscriptions of the store's currency; churn counts the ended ones of the last 30 days; another
 * store and the other mode are apart; the 12-month history takes each month's end; the statements
 * are served by their indexes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TSubscriptionStatus } from '@svc/schemas';
import { workerDatabaseUrl } from '../../../../../test/support/env.js';
import { createStore } from '../../../../../test/support/factories.js';
import { serviceContext } from '../../../../../test/support/in-process.js';
import { openOrm, type Orm } from '../../db/orm.js';
import { ManualClock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { ServiceContext } from '../request/context.js';
import { createProduct } from '../catalog/catalog.service.js';
import { SubscriptionSchema } from './subscriptions.entities.js';
import { planSubscriptionCounts, subscriptionStats } from './subscription-stats.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 2 });
});
afterAll(() => orm?.close());

const NOW = new Date(Date.UTC(2026, 5, 15, 12, 0));
const at = (iso: string) => new Date(`${iso}T00:00:00Z`);
const ctxOn = (livemode = true): ServiceContext => ({
  ...serviceContext(orm, new ManualClock(NOW.getTime())),
  livemode,
});

interface Row {
  status?: TSubscriptionStatus;
  interval?: 'day' | 'week' | 'month' | 'year';
  intervalCount?: number;
  unitPriceMinor: number;
  quantity?: number;
  currency?: string;
  livemode?: boolean;
  createdAt?: Date;
  trialEnd?: Date | null;
  endedAt?: Date | null;
  pausedAt?: Date | null;
  productId?: string;
  planId?: string;
}

/**
 * Subscription rows as the billing engine leaves them, written straight (the figures only read);
 * through `em` when given (inside its transaction), else a fork of its own.
 */
async function insert(storeId: string, rows: Row[], em = orm.em.fork()): Promise<void> {
  for (const [index, row] of rows.entries()) {
    const createdAt = row.createdAt ?? new Date(NOW.getTime() - 86_400_000);
    em.create(SubscriptionSchema, {
      id: newId(),
      store: storeId,
      livemode: row.livemode ?? true,
      productId: row.productId ?? newId(),
      productName: 'Editor Pro',
      planId: row.planId ?? newId(),
      interval: row.interval ?? 'month',
      intervalCount: row.intervalCount ?? 1,
      unitPriceMinor: row.unitPriceMinor,
      quantity: row.quantity ?? 1,
      currency: row.currency ?? 'USD',
      status: row.status ?? 'active',
      customerEmail: `buyer${index}@example.com`,
      paymentMethod: 'test',
      firstOrderId: newId(),
      anchor: createdAt,
      currentPeriodStart: createdAt,
      currentPeriodEnd: new Date(createdAt.getTime() + 30 * 86_400_000),
      trialEnd: row.trialEnd ?? null,
      endedAt: row.endedAt ?? null,
      pausedAt: row.pausedAt ?? null,
      canceledAt: row.endedAt ?? null,
      createdAt,
      updatedAt: createdAt,
    });
  }
  await em.flush();
}

describe('subscription figures', () => {
  it('sums MRR exactly per month (yearly /12, interval count, seats, past due), counts active and churned, month by month', async () => {
    const em = orm.em.fork();
    const store = await createStore(em);
    const other = await createStore(em);
    await insert(store.id, [
      { unitPriceMinor: 900 }, // 9.00 a month
      { interval: 'year', unitPriceMinor: 12_000 }, // 10.00 a month
      { intervalCount: 3, unitPriceMinor: 1000 }, // 3.333... a month, twice: 6.67 with one rounding
      { intervalCount: 3, unitPriceMinor: 1000 },
      { unitPriceMinor: 900, quantity: 3 }, // 27.00
      { status: 'past_due', unitPriceMinor: 500 }, // 5.00: still recurring revenue
      // Trial from 20 Feb to 5 Mar, paying since: in March's, April's and May's month ends.
      { unitPriceMinor: 900, createdAt: at('2026-02-20'), trialEnd: at('2026-03-05') },
      { currency: 'EUR', unitPriceMinor: 100_000 }, // active, but not in the store currency's MRR
      // Ended 10 days ago: churned; it earned from January to May.
      { status: 'canceled', unitPriceMinor: 400, createdAt: at('2026-01-05'), endedAt: at('2026-06-05') },
      // Ended 46 days ago: not churned in the window; December to March.
      { status: 'canceled', unitPriceMinor: 300, createdAt: at('2025-12-20'), endedAt: at('2026-04-30') },
      // Paused since 15 April: January to March, not now.
      { status: 'paused', unitPriceMinor: 200, createdAt: at('2026-01-10'), pausedAt: at('2026-04-15') },
      { status: 'trialing', unitPriceMinor: 700, trialEnd: at('2026-06-20') },
      { status: 'incomplete', unitPriceMinor: 999 },
      // Test mode: its own figures.
      { livemode: false, unitPriceMinor: 800 },
      { livemode: false, status: 'canceled', unitPriceMinor: 800, endedAt: at('2026-06-10') },
    ]);
    await insert(other.id, [
      { unitPriceMinor: 5000 },
      { status: 'canceled', unitPriceMinor: 5000, endedAt: at('2026-06-10') },
    ]);

    const live = await subscriptionStats(ctxOn(), { storeId: store.id });
    // 9 + 10 + 6.67 + 27 + 5 + 9 (the converted trial) = 66.67
    expect(live).toMatchObject({ currency: 'USD', mrr: 66.67, activeSubscriptions: 8, churned30Days: 1 });
    expect(live.monthly.map((month) => month.month)).toEqual([
      '2025-07', '2025-08', '2025-09', '2025-10', '2025-11', '2025-12',
      '2026-01', '2026-02', '2026-03', '2026-04', '2026-05', '2026-06',
    ]); // prettier-ignore
    expect(live.monthly.map((month) => month.mrr)).toEqual([0, 0, 0, 0, 0, 3, 9, 9, 18, 13, 13, 66.67]);

    const test = await subscriptionStats(ctxOn(false), { storeId: store.id });
    expect(test).toMatchObject({ mrr: 8, activeSubscriptions: 1, churned30Days: 1 });

    expect(await subscriptionStats(ctxOn(), { storeId: other.id })).toMatchObject({
      mrr: 50,
      activeSubscriptions: 1,
      churned30Days: 1,
    });
  });

  it("keeps a live store's past month-ends once worked out (the past does not change), and works a test store's out each time", async () => {
    const em = orm.em.fork();
    const store = await createStore(em);
    await insert(store.id, [
      { unitPriceMinor: 900, createdAt: at('2026-01-10') },
      { livemode: false, unitPriceMinor: 900, createdAt: at('2026-01-10') },
    ]);
    const live = await subscriptionStats(ctxOn(), { storeId: store.id });
    expect(live.monthly.map((month) => month.mrr)).toEqual([0, 0, 0, 0, 0, 0, 9, 9, 9, 9, 9, 9]);
    const kept = await em.execute<Array<{ months: number }>>(
      `select count(*)::int as months from subscription_mrr_month where store_id = ?`,
      [store.id],
    );
    expect(kept[0]!.months).toBe(11);

    // Rows written as if they had started in February (the engine never backdates: a subscription
    // starts now) change the live store's current figure only; the test store's history moves.
    await insert(store.id, [
      { unitPriceMinor: 1000, createdAt: at('2026-02-10') },
      { livemode: false, unitPriceMinor: 1000, createdAt: at('2026-02-10') },
    ]);
    const again = await subscriptionStats(ctxOn(), { storeId: store.id });
    expect(again.monthly.map((month) => month.mrr)).toEqual([0, 0, 0, 0, 0, 0, 9, 9, 9, 9, 9, 19]);
    const test = await subscriptionStats(ctxOn(false), { storeId: store.id });
    expect(test.monthly.map((month) => month.mrr)).toEqual([0, 0, 0, 0, 0, 0, 9, 19, 19, 19, 19, 19]);
  });

  it('gives a yen store whole yen, and a store without subscriptions zeros', async () => {
    const em = orm.em.fork();
    const yen = await createStore(em, { currency: 'JPY' });
    await insert(yen.id, [{ currency: 'JPY', interval: 'year', unitPriceMinor: 10_000 }]); // 833.33...
    expect(await subscriptionStats(ctxOn(), { storeId: yen.id })).toMatchObject({ mrr: 833, activeSubscriptions: 1 });
    const empty = await createStore(em);
    const stats = await subscriptionStats(ctxOn(), { storeId: empty.id });
    expect(stats).toMatchObject({ mrr: 0, activeSubscriptions: 0, churned30Days: 0 });
    expect(stats.monthly).toHaveLength(12);
  });

  it("counts a product's live subscriptions per plan; another store's product is 404", async () => {
    const em = orm.em.fork();
    const store = await createStore(em);
    const other = await createStore(em);
    const product = await createProduct(ctxOn(), {
      storeId: store.id,
      name: 'Editor Pro',
      deliveryMethods: ['manualDelivery'],
      plans: [
        { interval: 'month', intervalCount: 1, price: 9, trialDays: 7, active: true },
        { interval: 'year', intervalCount: 1, price: 90, trialDays: 0, active: true },
      ],
    });
    const [monthly, yearly] = product.plans.map((plan) => plan.id);
    const on = (planId: string, status: TSubscriptionStatus): Row => ({
      productId: product.id,
      planId,
      status,
      unitPriceMinor: 900,
    });
    await insert(store.id, [
      on(monthly!, 'active'),
      on(monthly!, 'active'),
      on(monthly!, 'past_due'),
      on(monthly!, 'trialing'),
      on(monthly!, 'canceled'),
      on(yearly!, 'canceled'),
      on(yearly!, 'incomplete'),
      { ...on(monthly!, 'active'), livemode: false }, // another mode's
    ]);
    expect(await planSubscriptionCounts(ctxOn(), { storeId: store.id, productId: product.id })).toEqual({
      plans: [{ planId: monthly, active: 3, trialing: 1 }],
    });
    const error = await planSubscriptionCounts(ctxOn(), { storeId: other.id, productId: product.id }).catch(
      (e: unknown) => e,
    );
    expect((error as AppError).appCode).toBe('not_found');
  });

  it('reads each figure off its index, not the table', async () => {
    const em = orm.em.fork();
    const plans = async (sql: string, params: unknown[]) => {
      await em.execute('set local enable_seqscan = off');
      const rows = await em.execute<Array<{ 'QUERY PLAN': string }>>(`explain ${sql}`, params);
      return rows.map((row) => row['QUERY PLAN']).join('\n');
    };
    // The planner chooses among the table's indexes by its statistics: on an empty, never
    // analyzed table two indexes on (store_id, livemode) tie and either may win. So the store is
    // given a seller's worth of subscriptions (a few currencies and statuses, some ended) and the
    // table analyzed, inside the transaction: the rows and the statistics roll back with it.
    const store = (await createStore(em)).id;
    await em.begin();
    try {
      const statuses: TSubscriptionStatus[] = ['active', 'active', 'active', 'past_due', 'trialing', 'canceled'];
      await insert(
        store,
        Array.from({ length: 3000 }, (_, i) => ({
          status: statuses[i % statuses.length]!,
          currency: i % 10 === 0 ? 'EUR' : 'USD',
          unitPriceMinor: 900,
          endedAt: statuses[i % statuses.length] === 'canceled' ? at('2026-03-01') : null,
          productId: `product${i % 4}`,
        })),
        em,
      );
      await em.execute('analyze subscription');
      const figures = await plans(
        `select count(*) filter (where currency = 'USD'), count(*) from subscription
          where store_id = ? and livemode = ? and status in ('active', 'past_due')`,
        [store, true],
      );
      expect(figures).toContain('subscription_store_mrr_index');
      const churn = await plans(
        `select count(*) from subscription where store_id = ? and livemode = ? and ended_at is not null and ended_at >= ?`,
        [store, true, NOW],
      );
      expect(churn).toContain('subscription_store_ended_index');
      const history = await plans(
        `select count(*) from subscription where store_id = ? and livemode = ? and currency = ?
           and status not in ('incomplete', 'incomplete_expired')`,
        [store, true, 'USD'],
      );
      expect(history).toContain('subscription_store_history_index');
      const perPlan = await plans(
        `select plan_id, count(*) from subscription
          where product_id = ? and livemode = ? and status in ('trialing', 'active', 'past_due') group by plan_id`,
        ['product0', true],
      );
      expect(perPlan).toContain('subscription_product_plan_live_index');
    } finally {
      await em.rollback();
    }
  });
});
