/**
 * The webhooks' housekeeping (housekeeping.ts) in its scheduled jobs (jobs.ts), against the real
 * database: the delivery log pruned after 30 days, never an attempt still queued; outbox events
 * pruned after 30 days once dispatched and nothing will send them again.
 *
 * Every test runs on its own ManualClock, each later than the one before and all far in the
 * future (2300 on), so the attempts these tests leave queued are never due for a dispatcher of
 * another test in this worker's database (their clocks are the real one or earlier ones).
 * Events are written as already dispatched, so no dispatcher fans them out either.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../../test/support/env.js';
import { createStore } from '../../../../../test/support/factories.js';
import { clockedSetups, createEndpoint, webhookTestData } from '../../../../../test/support/webhooks.js';
import { openOrm, type Orm } from '../../db/orm.js';
import { JOBS } from '../../jobs.js';
import { newId } from '../../lib/ids.js';
import { EventSchema } from '../events/events.entities.js';
import { EVENT_RETENTION_MS } from './housekeeping.js';
import { WebhookDeliverySchema } from './webhooks.entities.js';

const DAY = 24 * 3_600_000;

let orm: Orm;
const cleanups: Array<() => Promise<unknown>> = [];
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 4 });
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  await orm?.close();
});
const { attemptsOf, insertEvent, logAttempt } = webhookTestData(() => orm, cleanups);

const { setup } = clockedSetups(() => orm, Date.UTC(2300, 0, 1));

describe('pruneEvents', () => {
  it('deletes, in the hourly job, outbox events past 30 days that were dispatched and whose attempts all finished; keeps the rest', async () => {
    const { clock, base } = setup();
    expect(EVENT_RETENTION_MS).toBe(30 * DAY);
    const store = await createStore(orm.em.fork());
    const hook = await createEndpoint(base, store.id, { url: 'http://127.0.0.1:9/never-sent' });
    const old = new Date(clock.now().getTime() - 31 * DAY);
    const attempt = (eventId: string, n: number, status: 'success' | 'failed' | 'skipped' | 'queued' | 'pending') =>
      logAttempt(hook.id, store.id, { status, createdAt: old, eventId, attempt: n });

    const finished = await insertEvent(store.id, 'order.created', old);
    await attempt(finished, 1, 'failed');
    await attempt(finished, 2, 'success');
    const skipped = await insertEvent(store.id, 'order.created', old);
    await attempt(skipped, 1, 'skipped');
    const noSubscriber = await insertEvent(store.id, 'product.deleted', old);
    const retryQueued = await insertEvent(store.id, 'order.created', old);
    await attempt(retryQueued, 1, 'failed');
    await attempt(retryQueued, 2, 'queued');
    const inFlight = await insertEvent(store.id, 'order.created', old);
    await attempt(inFlight, 1, 'pending');
    const notDispatched = await insertEvent(store.id, 'order.created', old, null);
    const recent = await insertEvent(store.id, 'order.created', new Date(clock.now().getTime() - 29 * DAY));
    await attempt(recent, 1, 'success');

    await JOBS.find((job) => job.name === 'prune-events')!.run(base.deps);
    const ids = [finished, skipped, noSubscriber, retryQueued, inFlight, notDispatched, recent];
    const left = (await orm.em.fork().find(EventSchema, { id: { $in: ids } })).map((e) => e.id).sort();
    expect(left).toEqual([retryQueued, inFlight, notDispatched, recent].sort());
    // The log is pruned on its own schedule, not with the events.
    expect((await attemptsOf(hook.id)).filter((d) => d.eventId === finished)).toHaveLength(2);

    // Left undispatched, it would be fanned out by the next dispatcher that runs on this database.
    await orm.em.fork().nativeUpdate(EventSchema, { id: notDispatched }, { dispatchedAt: clock.now() });
  });
});

describe('pruneDeliveries', () => {
  it('deletes delivery rows older than 30 days (never a queued one) in the scheduled job', async () => {
    const { clock, base } = setup();
    const store = await createStore(orm.em.fork());
    const hook = await createEndpoint(base, store.id, { url: 'http://127.0.0.1:9/none' });
    const em = orm.em.fork();
    const row = (status: 'success' | 'queued' | 'failed', ageDays: number, attempt: number) => {
      const at = new Date(clock.now().getTime() - ageDays * DAY);
      return em.create(WebhookDeliverySchema, {
        id: newId(),
        webhook: hook.id,
        storeId: store.id,
        eventId: `evt_${newId()}`,
        event: 'order.created',
        attempt,
        status,
        dueAt: at,
        lockedUntil: null,
        createdAt: at,
        updatedAt: at,
      });
    };
    const old = row('success', 31, 1);
    const oldQueued = row('queued', 31, 1);
    const recent = row('failed', 29, 1);
    await em.flush();
    await JOBS.find((job) => job.name === 'prune-webhook-deliveries')!.run(base.deps);
    const left = (await attemptsOf(hook.id)).map((d) => d.id).sort();
    expect(left).toEqual([oldQueued.id, recent.id].sort());
    expect(left).not.toContain(old.id);
  });
});
