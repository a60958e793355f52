/**
 * The subscriptions' raw SQL: the keyset pages (the list and the buyer's), and the billing
 * engine's claim on due work. Each statement says why it is raw.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { TSubscriptionStatus } from '@svc/schemas';
import { preparedEntity } from '../../db/prepared.js';
import { readOnReplica } from '../../db/replicas.js';
import type { KeysetPosition } from '../../lib/cursor.js';
import { KeysetWhere } from '../../lib/keyset.js';
import { iso } from '../../lib/timestamps.js';
import { SubscriptionSchema, type Subscription } from './subscriptions.entities.js';

export interface SubscriptionPageFilter {
  storeId: string;
  livemode: boolean;
  status?: TSubscriptionStatus;
  productId?: string;
  customerEmail?: string;
}

/**
 * A page of a store's subscriptions, newest first, as ids and microsecond positions. Raw: the
 * row-value keyset comparison the (store_id, livemode[, status | customer_email], created_at desc,
 * id desc) indexes serve, which the ORM cannot say; a listing, so on a read replica when there is one.
 */
export async function selectSubscriptionPage(
  em: EntityManager,
  filter: SubscriptionPageFilter,
  before: KeysetPosition | undefined,
  limit: number,
): Promise<Array<{ id: string; us: string }>> {
  const where = new KeysetWhere('store_id = ?', filter.storeId).and('livemode = ?', filter.livemode);
  if (filter.status) where.and('status = ?', filter.status);
  if (filter.customerEmail) where.and('customer_email = ?', filter.customerEmail);
  if (filter.productId) where.and('product_id = ?', filter.productId);
  where.before(before, 'created_at', 'id');
  return readOnReplica(
    em,
    `select id, (extract(epoch from created_at) * 1000000)::bigint::text as us
       from subscription where ${where.sql}
      order by created_at desc, id desc limit ?`,
    [...where.params, limit],
  );
}

/**
 * The billing engine's claim: up to `limit` live subscriptions whose next move is due at `now`,
 * that no other worker holds, leased to the caller until `leaseUntil`. Raw: `FOR UPDATE SKIP
 * LOCKED` in a sub-select of an UPDATE, one statement, so two workers never claim the same row and
 * a worker that dies leaves a claim that runs out; the partial due index serves it.
 */
export async function claimDueSubscriptions(
  em: EntityManager,
  now: Date,
  leaseUntil: Date,
  limit: number,
): Promise<string[]> {
  const rows = await em.execute<Array<{ id: string }>>(
    `update subscription set lease_until = ?
      where id in (
        select id from subscription
         where due_at <= ? and due_at is not null and livemode and (lease_until is null or lease_until <= ?)
         order by due_at limit ? for update skip locked)
      returning id`,
    [leaseUntil, now, now, limit],
  );
  return rows.map((row) => row.id);
}

/** When the next live move falls due (the engine sleeps until then). Raw: min() off the due index. */
export async function selectNextDue(em: EntityManager): Promise<Date | null> {
  const rows = await em.execute<Array<{ at: string | null }>>(
    `select min(due_at) as at from subscription where due_at is not null and livemode`,
  );
  const at = rows[0]?.at;
  return at ? new Date(iso(at)) : null;
}

/**
 * A subscription's monthly amount x SCALE, an integer for every interval x count (1..12) a plan
 * may have: SCALE = 12 x lcm(1..12), so a month /count, a year /(12 x count), a week x 52/12 and a
 * day x 365/12 all divide it. Summing these and dividing once keeps MRR exact to the minor unit.
 */
export const MRR_SCALE = 332_640n;
const SCALED_MONTHLY = `unit_price_minor::numeric * quantity * (case interval
      when 'month' then 332640 when 'year' then 27720 when 'week' then 1441440 else 10117800 end / interval_count)`;

/**
 * Home's figures in one statement: the scaled MRR (store currency) and count of the active and
 * past-due subscriptions, and the count that ended since `churnFrom`. Raw: two index-only
 * aggregates in one round trip, each off its partial index (subscription_store_mrr_index,
 * subscription_store_ended_index), which the ORM cannot say.
 */
export async function selectSubscriptionFigures(
  em: EntityManager,
  filter: { storeId: string; livemode: boolean; currency: string; churnFrom: Date },
): Promise<{ mrrScaled: bigint; active: number; churned: number }> {
  const rows = await em.execute<Array<{ mrr_scaled: string; active: string; churned: string }>>(
    `select live.mrr_scaled, live.active, ended.churned
       from (select coalesce(sum(${SCALED_MONTHLY}) filter (where currency = ?), 0)::text as mrr_scaled,
                    count(*) as active
               from subscription
              where store_id = ? and livemode = ? and status in ('active', 'past_due')) live,
            (select count(*) as churned
               from subscription
              where store_id = ? and livemode = ? and ended_at is not null and ended_at >= ?) ended`,
    [filter.currency, filter.storeId, filter.livemode, filter.storeId, filter.livemode, filter.churnFrom],
  );
  const row = rows[0]!;
  return { mrrScaled: BigInt(row.mrr_scaled), active: Number(row.active), churned: Number(row.churned) };
}

/**
 * The MRR history's raw material: the store's subscriptions that ever paid (not incomplete),
 * grouped by the boundary bucket they started earning in (`greatest(created, trial end)`) and the
 * one they stopped in (`least(ended, paused)`; null: not stopped), their scaled monthly amounts
 * summed. A subscription counts at boundary k (1-based) when started < k <= stopped. Raw:
 * width_bucket over the boundaries, an index-only scan of subscription_store_history_index.
 */
export async function selectMrrBuckets(
  em: EntityManager,
  filter: { storeId: string; livemode: boolean; currency: string; boundaries: Date[] },
): Promise<Array<{ started: number; stopped: number | null; scaled: bigint }>> {
  const thresholds = `{${filter.boundaries.map((at) => at.toISOString()).join(',')}}`;
  const rows = await em.execute<Array<{ started: number; stopped: number | null; scaled: string }>>(
    `select width_bucket(greatest(created_at, coalesce(trial_end, created_at)), ?::timestamptz[]) as started,
            width_bucket(least(ended_at, paused_at), ?::timestamptz[]) as stopped,
            sum(${SCALED_MONTHLY})::text as scaled
       from subscription
      where store_id = ? and livemode = ? and status not in ('incomplete', 'incomplete_expired')
        and currency = ? and (ended_at is null or ended_at >= ?)
      group by 1, 2`,
    [thresholds, thresholds, filter.storeId, filter.livemode, filter.currency, filter.boundaries[0]!],
  );
  return rows.map((row) => ({
    started: Number(row.started),
    stopped: row.stopped === null ? null : Number(row.stopped),
    scaled: BigInt(row.scaled),
  }));
}

/**
 * The kept month-end MRR of a live store (subscription_mrr_month) for these months (`YYYY-MM-01`).
 * Raw: a primary-key range read answered as text, the scaled sums being wider than a JS number.
 */
export async function selectKeptMrrMonths(
  em: EntityManager,
  filter: { storeId: string; currency: string; months: string[] },
): Promise<Map<string, bigint>> {
  const rows = await em.execute<Array<{ month: string; mrr_scaled: string }>>(
    `select to_char(month, 'YYYY-MM-DD') as month, mrr_scaled::text as mrr_scaled
       from subscription_mrr_month
      where store_id = ? and currency = ? and month = any(?::date[])`,
    [filter.storeId, filter.currency, `{${filter.months.join(',')}}`],
  );
  return new Map(rows.map((row) => [row.month, BigInt(row.mrr_scaled)]));
}

/**
 * Keeps month-end figures worked out for a live store. Raw: one multi-row insert; `on conflict do
 * nothing`, as two visits working out the same month write the same figure and the first stays.
 */
export async function insertKeptMrrMonths(
  em: EntityManager,
  storeId: string,
  currency: string,
  months: Array<{ month: string; scaled: bigint }>,
): Promise<void> {
  if (months.length === 0) return;
  await em.execute(
    `insert into subscription_mrr_month (store_id, currency, month, mrr_scaled)
     select ?, ?, m.month, m.scaled
       from unnest(?::date[], ?::numeric[]) as m(month, scaled)
     on conflict do nothing`,
    [
      storeId,
      currency,
      `{${months.map((m) => m.month).join(',')}}`,
      `{${months.map((m) => m.scaled.toString()).join(',')}}`,
    ],
  );
}

/**
 * A product's plans with their live subscriptions counted by status, in one grouped statement.
 * Raw: count(*) filter (...) grouped by plan, off the partial subscription_product_plan_live_index.
 */
export async function selectPlanSubscriptionCounts(
  em: EntityManager,
  productId: string,
  livemode: boolean,
): Promise<Array<{ planId: string; active: number; trialing: number }>> {
  const rows = await em.execute<Array<{ plan_id: string; active: string; trialing: string }>>(
    `select plan_id,
            count(*) filter (where status in ('active', 'past_due')) as active,
            count(*) filter (where status = 'trialing') as trialing
       from subscription
      where product_id = ? and livemode = ? and status in ('trialing', 'active', 'past_due')
      group by plan_id`,
    [productId, livemode],
  );
  return rows.map((row) => ({ planId: row.plan_id, active: Number(row.active), trialing: Number(row.trialing) }));
}

/**
 * The subscription by id, its row locked for the caller's transaction, as a managed entity.
 * Prepared (db/prepared.ts preparedEntity): each renewal locks it twice.
 */
export function selectSubscriptionForUpdate(em: EntityManager, id: string): Promise<Subscription | null> {
  return preparedEntity(em, SubscriptionSchema, 'select * from subscription where id = ? limit 1 for update', [id]);
}
