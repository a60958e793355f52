/**
 * What the API sends to a store's endpoints and shows of it (deliveries.service.ts) against the
 * real database, without HTTP: the synchronous test ping against a receiver on loopback, the
 * delivery log's keyset paging and filters, retry, replay and resend queueing the right
 * attempts, one event's attempts across endpoints, and the hourly chart. The delivery engine
 * itself is scheduler.test.ts's.
 *
 * Every test runs on its own ManualClock, each later than the one before and all far in the
 * future (2200 on), so the attempts these tests leave queued are never due for a dispatcher of
 * another test in this worker's database (their clocks are the real one or earlier ones).
 * Events are written as already dispatched, so no dispatcher fans them out either.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../../test/support/env.js';
import { createStore } from '../../../../../test/support/factories.js';
import {
  verifyServiceSignature,
  verifyStandardSignature,
  type ReceiverAnswer,
} from '../../../../../test/support/webhook-receiver.js';
import { call, clockedSetups, createEndpoint, webhookTestData } from '../../../../../test/support/webhooks.js';
import { openOrm, type Orm } from '../../db/orm.js';
import { newEventId, newId } from '../../lib/ids.js';
import type { ServiceContext } from '../request/context.js';
import {
  listDeliveries,
  listEventDeliveries,
  replayWebhook,
  resendEvent,
  retryWebhookDelivery,
  testWebhook,
  webhookStats,
} from './deliveries.service.js';
import { getWebhook, updateWebhook } from './endpoints.service.js';
import { WebhookDeliverySchema } from './webhooks.entities.js';

const MINUTE = 60_000;
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
const { attemptsOf, receiver, insertEvent, logAttempt } = webhookTestData(() => orm, cleanups);

const { setup } = clockedSetups(() => orm, Date.UTC(2200, 0, 1));

describe('testWebhook', () => {
  it('makes one signed webhook.test attempt now and records what the receiver answered', async () => {
    const { clock, base } = setup();
    const store = await createStore(orm.em.fork());
    let answer: ReceiverAnswer = { status: 200, body: 'pong' };
    const rx = await receiver(() => answer);
    const hook = await createEndpoint(base, store.id, { url: `${rx.url}/ping` });
    const ref = { storeId: store.id, webhookId: hook.id };

    const { delivery: ok } = await testWebhook(call(base), ref);
    expect(ok).toMatchObject({
      webhookId: hook.id,
      event: 'webhook.test',
      attempt: 1,
      status: 'success',
      responseCode: 200,
      responseBodyPreview: 'pong',
      errorMessage: null,
      createdAt: clock.now().toISOString(),
    });
    expect(rx.received).toHaveLength(1);
    const [hit] = rx.received;
    expect(hit!.deliveryId).toBe(ok.id);
    expect(hit!.body).toMatchObject({
      id: ok.eventId,
      event: 'webhook.test',
      storeId: store.id,
      data: { webhookId: hook.id },
    });
    expect(verifyServiceSignature(hook.secret, String(hit!.headers['x-service-signature']), hit!.rawBody)).toBe(true);
    expect(verifyStandardSignature(hook.secret, hit!.headers, hit!.rawBody)).toBe(true);
    expect((await attemptsOf(hook.id)).map((d) => [d.id, d.status])).toEqual([[ok.id, 'success']]);

    answer = { status: 500, body: 'down' };
    const { delivery: failed } = await testWebhook(call(base), ref);
    expect(failed).toMatchObject({
      event: 'webhook.test',
      attempt: 1,
      status: 'failed',
      responseCode: 500,
      responseBodyPreview: 'down',
    });
    expect(rx.received).toHaveLength(2);
    // One attempt per ping, nothing queued after it.
    expect((await attemptsOf(hook.id)).map((d) => d.status).sort()).toEqual(['failed', 'success']);
    expect(await getWebhook(call(base), ref)).toMatchObject({ failureCount: 1 });
  });

  it('refuses a disabled endpoint with webhook_disabled and sends nothing', async () => {
    const { base } = setup();
    const store = await createStore(orm.em.fork());
    const rx = await receiver();
    const hook = await createEndpoint(base, store.id, { url: `${rx.url}/off` });
    await updateWebhook(call(base), { storeId: store.id, webhookId: hook.id, enabled: false });
    await expect(testWebhook(call(base), { storeId: store.id, webhookId: hook.id })).rejects.toMatchObject({
      appCode: 'webhook_disabled',
    });
    expect(rx.received).toEqual([]);
    expect(await attemptsOf(hook.id)).toEqual([]);
  });
});

describe('listDeliveries', () => {
  async function logWithSixAttempts() {
    const { clock, base } = setup();
    const store = await createStore(orm.em.fork());
    const hook = await createEndpoint(base, store.id, { events: ['order.created', 'order.paid'] });
    const other = await createEndpoint(base, store.id, { events: ['order.created'] });
    const ago = (seconds: number) => new Date(clock.now().getTime() - seconds * 1000);
    const log = async (status: 'success' | 'failed' | 'skipped', event: string, secondsAgo: number) => ({
      id: await logAttempt(hook.id, store.id, { status, event, createdAt: ago(secondsAgo) }),
      status,
      event,
      secondsAgo,
    });
    const rows = [
      await log('success', 'order.created', 50),
      await log('failed', 'order.paid', 40),
      await log('failed', 'order.created', 30),
      await log('skipped', 'order.paid', 20),
      await log('success', 'order.paid', 20), // same moment as the one before: the id decides
      await log('failed', 'order.created', 10),
    ];
    await logAttempt(other.id, store.id, { status: 'failed', createdAt: ago(5) });
    // Newest first; at the same moment, the greater id first.
    const newestFirst = [...rows].sort((a, b) => a.secondsAgo - b.secondsAgo || (a.id < b.id ? 1 : -1));
    return { base, ref: { storeId: store.id, webhookId: hook.id }, newestFirst };
  }

  /** Every page of a listing, following nextCursor. */
  async function allPages(base: ServiceContext, input: Parameters<typeof listDeliveries>[1]) {
    const pages: string[][] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await listDeliveries(call(base), { ...input, cursor });
      pages.push(page.deliveries.map((d) => d.id));
      expect(page.nextCursor === null).toBe(!page.hasMore);
      if (!page.hasMore) return pages;
      cursor = page.nextCursor!;
    }
  }

  it("lists this webhook's attempts newest first, page by page without gaps or repeats", async () => {
    const { base, ref, newestFirst } = await logWithSixAttempts();
    const all = await listDeliveries(call(base), ref);
    expect(all.deliveries.map((d) => d.id)).toEqual(newestFirst.map((r) => r.id));
    expect(all).toMatchObject({ hasMore: false, nextCursor: null });
    expect(all.deliveries.every((d) => d.webhookId === ref.webhookId)).toBe(true);

    expect(await allPages(base, { ...ref, limit: 2 })).toEqual([
      newestFirst.slice(0, 2).map((r) => r.id),
      newestFirst.slice(2, 4).map((r) => r.id),
      newestFirst.slice(4, 6).map((r) => r.id),
    ]);
    // The page boundary falls between the two attempts of the same moment.
    expect((await allPages(base, { ...ref, limit: 3 })).flat()).toEqual(newestFirst.map((r) => r.id));
    await expect(
      listDeliveries(call(base), { ...ref, cursor: 'eyJmb3JnZWQiOnRydWV9.0000000000000000000000' }),
    ).rejects.toMatchObject({
      appCode: 'validation_failed',
    });
  });

  it('filters by status and by event, also across pages', async () => {
    const { base, ref, newestFirst } = await logWithSixAttempts();
    const ids = (rows: typeof newestFirst) => rows.map((r) => r.id);
    const failed = newestFirst.filter((r) => r.status === 'failed');
    const paid = newestFirst.filter((r) => r.event === 'order.paid');
    const failedCreated = failed.filter((r) => r.event === 'order.created');
    expect(failed).toHaveLength(3);
    expect(paid).toHaveLength(3);
    expect(failedCreated).toHaveLength(2);

    expect((await listDeliveries(call(base), { ...ref, status: 'failed' })).deliveries.map((d) => d.id)).toEqual(
      ids(failed),
    );
    expect((await listDeliveries(call(base), { ...ref, event: 'order.paid' })).deliveries.map((d) => d.id)).toEqual(
      ids(paid),
    );
    expect(await allPages(base, { ...ref, status: 'failed', event: 'order.created', limit: 1 })).toEqual(
      ids(failedCreated).map((id) => [id]),
    );
    expect(await allPages(base, { ...ref, event: 'order.paid', limit: 2 })).toEqual([
      ids(paid).slice(0, 2),
      ids(paid).slice(2),
    ]);
    expect((await listDeliveries(call(base), { ...ref, status: 'queued' })).deliveries).toEqual([]);
  });
});

describe('retryWebhookDelivery', () => {
  it("queues the delivery's event again now, as the next attempt of that event", async () => {
    const { clock, base } = setup();
    const store = await createStore(orm.em.fork());
    const hook = await createEndpoint(base, store.id, { url: 'http://127.0.0.1:9/never-sent', events: ['order.paid'] });
    const sibling = await createEndpoint(base, store.id, { events: ['order.paid'] });
    const ref = { storeId: store.id, webhookId: hook.id };
    const eventId = await insertEvent(store.id, 'order.paid', clock.now());
    const first = await logAttempt(hook.id, store.id, {
      status: 'failed',
      createdAt: clock.now(),
      event: 'order.paid',
      eventId,
      attempt: 1,
    });
    await logAttempt(hook.id, store.id, {
      status: 'failed',
      createdAt: clock.now(),
      event: 'order.paid',
      eventId,
      attempt: 2,
    });

    clock.advance(MINUTE);
    const { delivery } = await retryWebhookDelivery(call(base), { ...ref, deliveryId: first });
    expect(delivery).toMatchObject({
      webhookId: hook.id,
      eventId,
      event: 'order.paid',
      attempt: 3,
      status: 'queued',
      createdAt: clock.now().toISOString(),
    });
    const queued = await orm.em.fork().findOneOrFail(WebhookDeliverySchema, { id: delivery.id });
    expect(queued.dueAt).toEqual(clock.now());
    // Retrying any attempt of the event again takes the number after the highest.
    const { delivery: again } = await retryWebhookDelivery(call(base), { ...ref, deliveryId: first });
    expect(again).toMatchObject({ eventId, attempt: 4, status: 'queued' });
    expect((await attemptsOf(hook.id)).map((d) => [d.attempt, d.status])).toEqual([
      [1, 'failed'],
      [2, 'failed'],
      [3, 'queued'],
      [4, 'queued'],
    ]);

    // A delivery of another webhook (even of the same store) or none at all: not_found.
    const siblingAttempt = await logAttempt(sibling.id, store.id, {
      status: 'failed',
      createdAt: clock.now(),
      event: 'order.paid',
      eventId,
    });
    await expect(retryWebhookDelivery(call(base), { ...ref, deliveryId: siblingAttempt })).rejects.toMatchObject({
      appCode: 'not_found',
    });
    await expect(retryWebhookDelivery(call(base), { ...ref, deliveryId: newId() })).rejects.toMatchObject({
      appCode: 'not_found',
    });

    await updateWebhook(call(base), { ...ref, enabled: false });
    await expect(retryWebhookDelivery(call(base), { ...ref, deliveryId: first })).rejects.toMatchObject({
      appCode: 'webhook_disabled',
    });
    expect(await attemptsOf(hook.id)).toHaveLength(4);
  });
});

describe('replayWebhook', () => {
  it('queues the subscribed events of the range (inclusive); with status failed only those whose last attempt failed', async () => {
    const { clock, base } = setup();
    const store = await createStore(orm.em.fork());
    const neighbour = await createStore(orm.em.fork());
    const hook = await createEndpoint(base, store.id, {
      url: 'http://127.0.0.1:9/never-sent',
      events: ['order.created', 'order.paid'],
    });
    const ref = { storeId: store.id, webhookId: hook.id };
    const t0 = clock.now().getTime() - DAY;
    const at = (minutes: number) => new Date(t0 + minutes * MINUTE);
    const from = at(10);
    const to = at(60);
    const attempt = (eventId: string, event: string, n: number, status: 'success' | 'failed' | 'queued') =>
      logAttempt(hook.id, store.id, { status, createdAt: at(70), event, eventId, attempt: n });

    const before = await insertEvent(store.id, 'order.created', new Date(from.getTime() - 1));
    const neverSent = await insertEvent(store.id, 'order.created', from);
    const lastFailed = await insertEvent(store.id, 'order.paid', at(20));
    await attempt(lastFailed, 'order.paid', 1, 'failed');
    await attempt(lastFailed, 'order.paid', 2, 'failed');
    const failedThenDelivered = await insertEvent(store.id, 'order.created', at(30));
    await attempt(failedThenDelivered, 'order.created', 1, 'failed');
    await attempt(failedThenDelivered, 'order.created', 2, 'success');
    const unsubscribed = await insertEvent(store.id, 'product.updated', at(40));
    const alreadyQueued = await insertEvent(store.id, 'order.paid', at(50));
    await attempt(alreadyQueued, 'order.paid', 1, 'failed');
    await attempt(alreadyQueued, 'order.paid', 2, 'queued');
    const lastMoment = await insertEvent(store.id, 'order.paid', to);
    const after = await insertEvent(store.id, 'order.created', new Date(to.getTime() + 1));
    const elsewhere = await insertEvent(neighbour.id, 'order.created', at(30));

    const queuedNow = async () =>
      Object.fromEntries(
        (await attemptsOf(hook.id))
          .filter((d) => d.status === 'queued' && d.eventId !== alreadyQueued)
          .map((d) => [d.eventId, [d.attempt, d.event]]),
      );
    const range = { from: from.toISOString(), to: to.toISOString() };

    expect(await replayWebhook(call(base), { ...ref, ...range, status: 'failed' })).toEqual({ queued: 1 });
    expect(await queuedNow()).toEqual({ [lastFailed]: [3, 'order.paid'] });

    expect(await replayWebhook(call(base), { ...ref, ...range })).toEqual({ queued: 3 });
    expect(await queuedNow()).toEqual({
      [lastFailed]: [3, 'order.paid'], // queued by the first replay, left as it is
      [neverSent]: [1, 'order.created'],
      [failedThenDelivered]: [3, 'order.created'],
      [lastMoment]: [1, 'order.paid'],
    });
    const untouched = (await attemptsOf(hook.id)).filter((d) =>
      [before, unsubscribed, after, elsewhere].includes(d.eventId),
    );
    expect(untouched).toEqual([]);
    expect((await attemptsOf(hook.id)).filter((d) => d.eventId === alreadyQueued)).toHaveLength(2);
    for (const queued of (await attemptsOf(hook.id)).filter(
      (d) => d.status === 'queued' && d.eventId !== alreadyQueued,
    )) {
      expect(queued.dueAt).toEqual(clock.now());
    }

    await updateWebhook(call(base), { ...ref, enabled: false });
    await expect(replayWebhook(call(base), { ...ref, ...range })).rejects.toMatchObject({
      appCode: 'webhook_disabled',
    });
  });
});

describe('resendEvent', () => {
  it("queues one of the store's events for one endpoint now, as its next attempt of it, also one it never had", async () => {
    const { clock, base } = setup();
    const store = await createStore(orm.em.fork());
    const neighbour = await createStore(orm.em.fork());
    const hook = await createEndpoint(base, store.id, { url: 'http://127.0.0.1:9/never-sent', events: ['order.paid'] });
    const ref = { storeId: store.id, webhookId: hook.id };
    const paid = await insertEvent(store.id, 'order.paid', clock.now());
    await logAttempt(hook.id, store.id, {
      status: 'failed',
      createdAt: clock.now(),
      event: 'order.paid',
      eventId: paid,
    });
    const unsubscribed = await insertEvent(store.id, 'product.updated', clock.now());

    clock.advance(MINUTE);
    const { delivery } = await resendEvent(call(base), { ...ref, eventId: paid });
    expect(delivery).toMatchObject({
      webhookId: hook.id,
      eventId: paid,
      event: 'order.paid',
      attempt: 2,
      status: 'queued',
    });
    const { delivery: fresh } = await resendEvent(call(base), { ...ref, eventId: unsubscribed });
    expect(fresh).toMatchObject({ eventId: unsubscribed, event: 'product.updated', attempt: 1, status: 'queued' });
    const queued = await orm.em.fork().findOneOrFail(WebhookDeliverySchema, { id: fresh.id });
    expect(queued.dueAt).toEqual(clock.now());

    // Another store's event, or none: not_found, and nothing queued.
    const elsewhere = await insertEvent(neighbour.id, 'order.paid', clock.now());
    await expect(resendEvent(call(base), { ...ref, eventId: elsewhere })).rejects.toMatchObject({
      appCode: 'not_found',
    });
    await expect(resendEvent(call(base), { ...ref, eventId: newEventId() })).rejects.toMatchObject({
      appCode: 'not_found',
    });
    await updateWebhook(call(base), { ...ref, enabled: false });
    await expect(resendEvent(call(base), { ...ref, eventId: paid })).rejects.toMatchObject({
      appCode: 'webhook_disabled',
    });
    expect(await attemptsOf(hook.id)).toHaveLength(3);
  });
});

describe('listEventDeliveries', () => {
  it("lists every attempt of one event to the store's endpoints, oldest first, and nothing of other events or stores; another store's event is not_found", async () => {
    const { clock, base } = setup();
    const store = await createStore(orm.em.fork());
    const neighbour = await createStore(orm.em.fork());
    const first = await createEndpoint(base, store.id, { events: ['order.paid'] });
    const second = await createEndpoint(base, store.id, { events: ['order.paid'] });
    const theirs = await createEndpoint(base, neighbour.id, { events: ['order.paid'] });
    const eventId = await insertEvent(store.id, 'order.paid', clock.now());
    const at = (minutes: number) => new Date(clock.now().getTime() + minutes * MINUTE);
    const a1 = await logAttempt(first.id, store.id, {
      status: 'failed',
      createdAt: at(0),
      event: 'order.paid',
      eventId,
    });
    const b1 = await logAttempt(second.id, store.id, {
      status: 'success',
      createdAt: at(1),
      event: 'order.paid',
      eventId,
    });
    const a2 = await logAttempt(first.id, store.id, {
      status: 'success',
      createdAt: at(2),
      event: 'order.paid',
      eventId,
      attempt: 2,
    });
    await logAttempt(first.id, store.id, { status: 'success', createdAt: at(3), event: 'order.paid' });
    // The same event id logged for another store's endpoint (cannot happen, but must not show).
    await logAttempt(theirs.id, neighbour.id, { status: 'success', createdAt: at(4), event: 'order.paid', eventId });

    const { deliveries } = await listEventDeliveries(call(base), { storeId: store.id, eventId });
    expect(deliveries.map((d) => [d.id, d.webhookId, d.attempt, d.status])).toEqual([
      [a1, first.id, 1, 'failed'],
      [b1, second.id, 1, 'success'],
      [a2, first.id, 2, 'success'],
    ]);
    // An event with no attempt lists none; another store's event, or none at all, is not_found.
    const unsent = await insertEvent(store.id, 'product.updated', clock.now());
    expect(await listEventDeliveries(call(base), { storeId: store.id, eventId: unsent })).toEqual({ deliveries: [] });
    await expect(listEventDeliveries(call(base), { storeId: neighbour.id, eventId })).rejects.toMatchObject({
      appCode: 'not_found',
    });
    await expect(listEventDeliveries(call(base), { storeId: store.id, eventId: newEventId() })).rejects.toMatchObject({
      appCode: 'not_found',
    });
  });
});

describe('webhookStats', () => {
  it('counts successes and failures in each of the last 24 hours, the current one last, zero where none', async () => {
    const { clock, base } = setup();
    const store = await createStore(orm.em.fork());
    const hook = await createEndpoint(base, store.id);
    const other = await createEndpoint(base, store.id);
    const HOUR = 60 * MINUTE;
    const now = clock.now().getTime();
    const currentHour = Math.floor(now / HOUR) * HOUR;
    const log = (webhookId: string, status: 'success' | 'failed' | 'queued', at: number) =>
      logAttempt(webhookId, store.id, { status, createdAt: new Date(at) });
    await log(hook.id, 'success', now);
    await log(hook.id, 'failed', currentHour);
    await log(hook.id, 'failed', currentHour + 1);
    await log(hook.id, 'success', currentHour - 1); // the hour before
    await log(hook.id, 'failed', currentHour - 23 * HOUR); // the first hour of the chart
    await log(hook.id, 'failed', currentHour - 23 * HOUR - 1); // before it: not counted
    await log(hook.id, 'queued', now); // not finished: neither
    await log(other.id, 'success', now); // another endpoint's

    const { hours } = await webhookStats(call(base), { storeId: store.id, webhookId: hook.id });
    expect(hours).toHaveLength(24);
    expect(hours[0]).toEqual({ hour: new Date(currentHour - 23 * HOUR).toISOString(), success: 0, failed: 1 });
    expect(hours[22]).toEqual({ hour: new Date(currentHour - HOUR).toISOString(), success: 1, failed: 0 });
    expect(hours[23]).toEqual({ hour: new Date(currentHour).toISOString(), success: 1, failed: 2 });
    expect(hours.slice(1, 22).every((h) => h.success === 0 && h.failed === 0)).toBe(true);
    await expect(webhookStats(call(base), { storeId: store.id, webhookId: newId() })).rejects.toMatchObject({
      appCode: 'not_found',
    });
  });
});
