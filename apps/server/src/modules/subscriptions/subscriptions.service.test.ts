/**
 * Subscription rules against the real database, without HTTP: moves applied to the locked row
 * write the state, the next due time and their events in one transaction; a refused move writes
 * nothing; the list pages by keyset with its filters; a test subscription runs at its own clock;
 * the billing engine's claim hands each due row to one worker until its lease runs out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../../test/support/env.js';
import { createStore } from '../../../../../test/support/factories.js';
import { serviceContext } from '../../../../../test/support/in-process.js';
import { openOrm, type Orm } from '../../db/orm.js';
import { ManualClock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { ServiceContext } from '../request/context.js';
import { inTransaction } from '../request/transaction.js';
import { EventSchema } from '../events/events.entities.js';
import { boundary } from './billing-period.js';
import { SubscriptionSchema, type Subscription } from './subscriptions.entities.js';
import { claimDueSubscriptions, selectNextDue } from './subscriptions.repo.js';
import {
  applyMove,
  cancelSubscription,
  findSubscription,
  getSubscription,
  listSubscriptions,
  newSubscriptionRow,
  pauseSubscription,
} from './subscriptions.service.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 3 });
});
afterAll(() => orm?.close());

const START = Date.UTC(2026, 3, 1, 12, 0);
const DAY = 86_400_000;
const ctxOn = (clock = new ManualClock(START), livemode = true): ServiceContext => ({
  ...serviceContext(orm, clock),
  livemode,
});

async function appError(promise: Promise<unknown>, code: string): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).appCode).toBe(code);
  return error as AppError;
}

/** An incomplete subscription row of the store, as checkout will write it, then `activate`d. */
async function activeSubscription(
  ctx: ServiceContext,
  storeId: string,
  options: { email?: string; livemode?: boolean; createdAt?: Date; productId?: string } = {},
): Promise<Subscription> {
  const now = options.createdAt ?? ctx.clock.now();
  const livemode = options.livemode ?? true;
  return inTransaction(ctx, async (tx) => {
    const row = newSubscriptionRow(
      tx,
      {
        storeId,
        livemode,
        productId: options.productId ?? newId(),
        productName: 'Editor Pro',
        planId: newId(),
        interval: 'month',
        intervalCount: 1,
        unitPriceMinor: 900,
        quantity: 1,
        discountMinor: 0,
        couponId: null,
        currency: 'USD',
        customerEmail: options.email ?? 'buyer@example.com',
        paymentMethod: 'test',
        firstOrderId: newId(),
      },
      now,
    );
    await applyMove(tx, row, 'activate', now);
    await tx.em.flush();
    return row;
  });
}

async function eventsOf(storeId: string): Promise<string[]> {
  const rows = await orm.em.fork().find(EventSchema, { store: storeId }, { orderBy: { seq: 'asc' } });
  return rows.map((row) => row.type);
}

describe('subscription moves on the locked row', () => {
  it('activate writes the period, the due time and subscription.created with the row as it is', async () => {
    const ctx = ctxOn();
    const store = await createStore(orm.em.fork());
    const row = await activeSubscription(ctx, store.id);
    const stored = await orm.em.fork().findOneOrFail(SubscriptionSchema, { id: row.id });
    expect(stored.status).toBe('active');
    expect(stored.currentPeriodEnd).toEqual(boundary(new Date(START), { interval: 'month', intervalCount: 1 }, 1));
    expect(stored.dueAt).toEqual(stored.currentPeriodEnd);
    expect(await eventsOf(store.id)).toEqual(['subscription.created']);
    const view = await getSubscription(ctx, { storeId: store.id, subscriptionId: row.id });
    expect(view).toMatchObject({ status: 'active', amount: 9, unitPrice: 9, creditBalance: 0, clockTime: null });
  });

  it('cancel at period end, then now-cancel of an ended one is 409 invalid_transition and writes nothing', async () => {
    const ctx = ctxOn();
    const store = await createStore(orm.em.fork());
    const row = await activeSubscription(ctx, store.id);
    const ref = { storeId: store.id, subscriptionId: row.id };
    const canceled = await cancelSubscription(ctx, ref);
    expect(canceled).toMatchObject({
      status: 'active',
      cancelAtPeriodEnd: true,
      cancellationReason: 'requested_by_merchant',
    });
    expect(canceled.canceledAt).toBe(new Date(START).toISOString());
    const ended = await cancelSubscription(ctx, { ...ref, atPeriodEnd: false, reason: 'requested_by_customer' });
    expect(ended).toMatchObject({ status: 'canceled', cancellationReason: 'requested_by_customer' });
    const before = await orm.em.fork().findOneOrFail(SubscriptionSchema, { id: row.id });
    const error = await appError(cancelSubscription(ctx, ref), 'invalid_transition');
    expect(error.message).toContain('canceled');
    const after = await orm.em.fork().findOneOrFail(SubscriptionSchema, { id: row.id });
    expect(after.version).toBe(before.version);
    expect(after.dueAt).toBeNull();
    expect(await eventsOf(store.id)).toEqual([
      'subscription.created',
      'subscription.canceled',
      'subscription.canceled',
      'subscription.ended',
    ]);
  });

  it('pause refuses a resumesAt inside the period with the field named, and accepts one after it', async () => {
    const ctx = ctxOn();
    const store = await createStore(orm.em.fork());
    const row = await activeSubscription(ctx, store.id);
    const ref = { storeId: store.id, subscriptionId: row.id };
    const refused = await appError(
      pauseSubscription(ctx, { ...ref, resumesAt: new Date(START + 3 * DAY).toISOString() }),
      'validation_failed',
    );
    expect(refused.issues?.[0]?.path).toBe('resumesAt');
    const resumesAt = new Date(START + 60 * DAY).toISOString();
    const paused = await pauseSubscription(ctx, { ...ref, resumesAt });
    expect(paused).toMatchObject({ status: 'active', resumesAt });
  });

  it("another store's or the other mode's subscription is 404", async () => {
    const ctx = ctxOn();
    const store = await createStore(orm.em.fork());
    const other = await createStore(orm.em.fork());
    const row = await activeSubscription(ctx, store.id);
    await appError(getSubscription(ctx, { storeId: other.id, subscriptionId: row.id }), 'not_found');
    await appError(
      getSubscription(ctxOn(undefined, false), { storeId: store.id, subscriptionId: row.id }),
      'not_found',
    );
    await appError(cancelSubscription(ctx, { storeId: other.id, subscriptionId: row.id }), 'not_found');
  });

  it('a test subscription runs at its own clock, not the wall clock', async () => {
    const clock = new ManualClock(START);
    const testCtx = ctxOn(clock, false);
    const store = await createStore(orm.em.fork());
    const row = await activeSubscription(testCtx, store.id, { livemode: false });
    clock.advance(5 * DAY);
    const canceled = await cancelSubscription(testCtx, { storeId: store.id, subscriptionId: row.id });
    expect(canceled.canceledAt).toBe(new Date(START).toISOString());
    expect(canceled.clockTime).toBe(new Date(START).toISOString());
  });
});

describe('the subscription list', () => {
  it('pages newest first by keyset and filters by status, product and e-mail', async () => {
    const ctx = ctxOn();
    const store = await createStore(orm.em.fork());
    const productId = newId();
    const made: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const row = await activeSubscription(ctx, store.id, {
        createdAt: new Date(START + i * 1000),
        email: i % 2 ? 'odd@example.com' : 'even@example.com',
        productId: i < 2 ? productId : undefined,
      });
      made.push(row.id);
    }
    await cancelSubscription(ctx, { storeId: store.id, subscriptionId: made[0]!, atPeriodEnd: false });
    const first = await listSubscriptions(ctx, { storeId: store.id, limit: 2 });
    expect(first.subscriptions.map((s) => s.id)).toEqual([made[4], made[3]]);
    expect(first.hasMore).toBe(true);
    const second = await listSubscriptions(ctx, { storeId: store.id, limit: 2, cursor: first.nextCursor! });
    expect(second.subscriptions.map((s) => s.id)).toEqual([made[2], made[1]]);
    const third = await listSubscriptions(ctx, { storeId: store.id, limit: 2, cursor: second.nextCursor! });
    expect(third.subscriptions.map((s) => s.id)).toEqual([made[0]]);
    expect(third.hasMore).toBe(false);
    const canceled = await listSubscriptions(ctx, { storeId: store.id, status: 'canceled' });
    expect(canceled.subscriptions.map((s) => s.id)).toEqual([made[0]]);
    const odd = await listSubscriptions(ctx, { storeId: store.id, customerEmail: 'odd@example.com' });
    expect(odd.subscriptions.map((s) => s.id)).toEqual([made[3], made[1]]);
    const ofProduct = await listSubscriptions(ctx, { storeId: store.id, productId });
    expect(ofProduct.subscriptions.map((s) => s.id)).toEqual([made[1], made[0]]);
    // A cursor of another filter is refused.
    await appError(
      listSubscriptions(ctx, { storeId: store.id, status: 'active', cursor: first.nextCursor! }),
      'validation_failed',
    );
  });
});

describe("the billing engine's claim", () => {
  it('hands each due live row to one claimer until its lease runs out; test rows are never claimed', async () => {
    const ctx = ctxOn();
    const store = await createStore(orm.em.fork());
    // Far in the past so no other test's rows are due before these.
    const long = new Date(Date.UTC(2001, 0, 1));
    const live = await activeSubscription(ctx, store.id, { createdAt: long });
    await activeSubscription(ctx, store.id, { createdAt: long, livemode: false });
    const dueAt = (await orm.em.fork().findOneOrFail(SubscriptionSchema, { id: live.id })).dueAt!;
    expect(await selectNextDue(orm.em.fork())).toEqual(dueAt);
    const at = new Date(dueAt.getTime() + 1);
    const lease = new Date(at.getTime() + 60_000);
    const [a, b] = await Promise.all([
      claimDueSubscriptions(orm.em.fork(), at, lease, 10),
      claimDueSubscriptions(orm.em.fork(), at, lease, 10),
    ]);
    const claimed = [...a, ...b].filter((id) => id === live.id);
    expect(claimed).toEqual([live.id]);
    // Held until the lease runs out, then claimable again (the claimer died).
    expect(await claimDueSubscriptions(orm.em.fork(), at, lease, 10)).not.toContain(live.id);
    expect(await claimDueSubscriptions(orm.em.fork(), new Date(lease.getTime() + 1), lease, 10)).toContain(live.id);
    // Once its move has run, it is no longer due at that time.
    await inTransaction(ctxOn(new ManualClock(at)), async (tx) => {
      const row = await findSubscription(tx, { storeId: store.id, subscriptionId: live.id }, true);
      await applyMove(tx, row, 'cancel', at, false, 'requested_by_merchant');
    });
    expect(await claimDueSubscriptions(orm.em.fork(), new Date(lease.getTime() + 2), lease, 10)).not.toContain(live.id);
  });
});
