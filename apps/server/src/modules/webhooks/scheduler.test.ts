/**
 * The webhook delivery engine (the dispatcher of scheduler.ts, with attempt.ts, the delivery log
 * and the retry policy) against the real database and real receivers on loopback: fan-out, the
 * retry schedule on a clock the test moves, failure streaks and automatic disabling, what an
 * attempt records, skips, leases, two dispatchers sharing 10,000 attempts, wake-ups, and the
 * test ping, retry and replay of deliveries.service.ts as a dispatcher sends them. Pruning the log
 * is housekeeping.test.ts's.
 *
 * Every test runs on its own ManualClock, each earlier than the one before and all earlier
 * than the real date, so attempts other tests (or other test files sharing this worker's
 * database) left queued are never due for the test that runs.
 */
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TEST_REDIS_URL, workerDatabaseUrl } from '../../../../../test/support/env.js';
import { orderPayload, productPayload } from '../../../../../test/support/event-payloads.js';
import { createStore } from '../../../../../test/support/factories.js';
import { serviceContext, testConfig } from '../../../../../test/support/in-process.js';
import {
  reservePort,
  startWebhookReceiver,
  verifyServiceSignature,
  verifyStandardSignature,
  type ReceivedWebhook,
  type ReceiverAnswer,
  type WebhookReceiver,
} from '../../../../../test/support/webhook-receiver.js';
import { openOrm, type Orm } from '../../db/orm.js';
import type { AppDeps } from '../../deps.js';
import { ManualClock } from '../../lib/clock.js';
import { deriveKey, seal } from '../../lib/crypto.js';
import { AppError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { keptMail } from '../mail/outbox.js';
import { UserSchema } from '../identity/identity.entities.js';
import { OutboundEmailSchema } from '../mail/mail.entities.js';
import { EventSchema } from '../events/events.entities.js';
import { recordEvent, type EventType } from '../events/outbox.js';
import { serviceContext as contextOf } from '../request/context.js';
import { StoreMemberSchema } from '../stores/stores.entities.js';
import { ABANDONED_MESSAGE } from './claims.repo.js';
import { replayRange, retryDelivery, sendTestPing } from './deliveries.service.js';
import { RETRY_DELAYS_MS } from './retry-policy.js';
import { Dispatcher } from './scheduler.js';
import { newWebhookSecret } from './signing.js';
import { WebhookDeliverySchema, WebhookSchema } from './webhooks.entities.js';

const DAY = 24 * 3_600_000;
let orm: Orm;
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 10 });
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  await orm?.close();
});

let epoch = Date.UTC(2026, 9, 1);
/** A clock 40 days before the previous test's: nothing another test left queued is due on it. */
function freshClock(): ManualClock {
  epoch -= 40 * DAY;
  return new ManualClock(epoch);
}

function depsFor(clock: ManualClock, config: Partial<AppDeps['config']> = {}, on: Orm = orm): AppDeps {
  const { deps } = serviceContext(on, clock);
  return { ...deps, config: { ...deps.config, ...config } };
}

async function receiver(opts: Parameters<typeof startWebhookReceiver>[0]): Promise<WebhookReceiver> {
  const started = await startWebhookReceiver(opts);
  cleanups.push(() => started.close());
  return started;
}

interface TestHook {
  id: string;
  secret: string;
  url: string;
}

async function createWebhook(
  deps: AppDeps,
  storeId: string,
  url: string,
  events: string[],
  on: Orm = orm,
): Promise<TestHook> {
  const secret = newWebhookSecret();
  const em = on.em.fork();
  const now = deps.clock.now();
  const webhook = em.create(WebhookSchema, {
    id: newId(),
    store: storeId,
    name: 'Test receiver',
    url,
    secretEnc: seal(deriveKey(deps.config.encryptionKey, 'webhook-secret'), secret),
    secretPrefix: secret.slice(0, 12),
    events,
    enabled: true,
    failureCount: 0,
    firstFailureAt: null,
    disabledAt: null,
    disabledReason: null,
    lastDeliveredAt: null,
    createdAt: now,
    updatedAt: now,
  });
  await em.flush();
  return { id: webhook.id, secret, url };
}

/** An event written the way the services write them: through the outbox's one writer. */
async function emit(
  clock: ManualClock,
  storeId: string,
  type: EventType = 'order.created',
  payload?: Record<string, unknown>,
) {
  const data =
    payload ??
    (type.startsWith('product.') ? productPayload(storeId, { id: newId() }) : orderPayload(storeId, { id: newId() }));
  return recordEvent({ em: orm.em.fork() }, { storeId, livemode: true, type, payload: data, at: clock.now() });
}

const attemptsOf = (webhookId: string) =>
  orm.em.fork().find(WebhookDeliverySchema, { webhook: webhookId }, { orderBy: { eventId: 'asc', attempt: 'asc' } });
const webhookRow = (id: string) => orm.em.fork().findOneOrFail(WebhookSchema, { id });

async function addOwner(storeId: string): Promise<string> {
  const em = orm.em.fork();
  const email = `owner-${newId()}@example.test`;
  const now = new Date();
  const user = em.create(UserSchema, { id: newId(), email, passwordHash: null, createdAt: now, updatedAt: now });
  em.create(StoreMemberSchema, { id: newId(), store: storeId, user, role: 'owner', permissions: [], createdAt: now });
  await em.flush();
  return email;
}

const expectSigned = (hits: ReceivedWebhook[]) => {
  for (const hit of hits) {
    expect(hit.serviceSignatureValid, 'X-Service-Signature verifies').toBe(true);
    expect(hit.standardSignatureValid, 'webhook-signature verifies').toBe(true);
  }
};

describe('event order', () => {
  it("sends a settlement's order.paid before its order.completed, the second once the first is answered", async () => {
    const clock = freshClock();
    const deps = depsFor(clock);
    const store = await createStore(orm.em.fork());
    const rx = await receiver({
      secretFor: () => hook.secret,
      // A slow answer to the first: without waiting for it, the second would arrive meanwhile.
      answer: (hit) => (hit.body?.event === 'order.paid' ? { status: 200, delayMs: 60 } : { status: 200 }),
    });
    const hook = await createWebhook(deps, store.id, `${rx.url}/hooks/orders`, ['order.paid', 'order.completed']);
    const orderIds = Array.from({ length: 20 }, () => newId());
    for (const id of orderIds) {
      // As a settlement records them: in one transaction, at one clock reading.
      await orm.em.fork().transactional(async (em) => {
        for (const status of ['paid', 'completed'] as const)
          await recordEvent(
            { em },
            {
              storeId: store.id,
              livemode: true,
              type: `order.${status}`,
              payload: orderPayload(store.id, { id, status }),
              at: clock.now(),
            },
          );
      });
    }

    await new Dispatcher(deps).runOnce();

    expect(rx.received).toHaveLength(40);
    for (const id of orderIds) {
      const hits = rx.received.filter((hit) => (hit.body?.data.order as { id: string }).id === id);
      expect(hits.map((hit) => hit.body?.event)).toEqual(['order.paid', 'order.completed']);
      expect(hits[1]!.receivedAt - hits[0]!.receivedAt).toBeGreaterThanOrEqual(50);
    }
  });
});

describe('retry schedule', () => {
  it('sends 8 attempts at 0, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (+/-10%) and a success ends the failure streak', async () => {
    const clock = freshClock();
    const deps = depsFor(clock);
    const store = await createStore(orm.em.fork());
    const rx = await receiver({
      secretFor: () => hook.secret,
      answer: (_hit, index) =>
        index < 7 ? { status: 500, body: 'down for maintenance' } : { status: 200, body: 'thanks' },
    });
    const hook = await createWebhook(deps, store.id, `${rx.url}/hooks/orders`, ['order.created']);
    // Jitter from both ends of its range and between.
    const jitter = [0, 0.9999, 0.5, 0.25, 0.75, 0.05, 0.95];
    let draw = 0;
    const dispatcher = new Dispatcher(deps, { random: () => jitter[draw++ % jitter.length]! });

    const eventAt = clock.now();
    const payload = orderPayload(store.id, { id: 'ord_1', price: 9.99 });
    const eventId = await emit(clock, store.id, 'order.created', payload);
    await dispatcher.runOnce();
    expect(rx.received).toHaveLength(1);
    const firstFailureAt = clock.now();

    for (let attempt = 2; attempt <= 8; attempt++) {
      const queued = (await attemptsOf(hook.id)).find((d) => d.attempt === attempt)!;
      expect(queued.status).toBe('queued');
      const base = RETRY_DELAYS_MS[attempt - 2]!;
      const offset = queued.dueAt.getTime() - clock.now().getTime();
      expect(offset, `delay before attempt ${attempt}`).toBeGreaterThanOrEqual(base * 0.9);
      expect(offset, `delay before attempt ${attempt}`).toBeLessThanOrEqual(base * 1.1);
      // Not a millisecond early.
      clock.set(queued.dueAt.getTime() - 1);
      await dispatcher.runOnce();
      expect(rx.received).toHaveLength(attempt - 1);
      clock.set(queued.dueAt);
      await dispatcher.runOnce();
      expect(rx.received).toHaveLength(attempt);
      if (attempt === 7) {
        const failing = await webhookRow(hook.id);
        expect(failing.failureCount).toBe(7);
        expect(failing.firstFailureAt).toEqual(firstFailureAt);
        expect(failing.lastDeliveredAt).toBeNull();
      }
    }

    const log = await attemptsOf(hook.id);
    expect(log.map((d) => [d.attempt, d.status])).toEqual([
      [1, 'failed'],
      [2, 'failed'],
      [3, 'failed'],
      [4, 'failed'],
      [5, 'failed'],
      [6, 'failed'],
      [7, 'failed'],
      [8, 'success'],
    ]);
    expect(
      log
        .slice(0, 7)
        .every(
          (d) =>
            d.responseCode === 500 &&
            d.responseBodyPreview === 'down for maintenance' &&
            d.errorMessage === 'The receiver answered 500.',
        ),
    ).toBe(true);
    expect(log[7]).toMatchObject({
      responseCode: 200,
      responseBodyPreview: 'thanks',
      errorMessage: null,
      lockedUntil: null,
    });
    expect(log.every((d) => d.eventId === eventId && typeof d.durationMs === 'number')).toBe(true);

    const healed = await webhookRow(hook.id);
    expect(healed.failureCount).toBe(0);
    expect(healed.firstFailureAt).toBeNull();
    expect(healed.lastDeliveredAt).toEqual(clock.now());
    expect(healed.enabled).toBe(true);

    // The same event id on every attempt, a new delivery id each time, signed both ways, same body.
    expect(new Set(rx.received.map((h) => h.eventId))).toEqual(new Set([eventId]));
    expect(new Set(rx.received.map((h) => h.headers['webhook-id']))).toEqual(new Set([eventId]));
    expect(rx.received.map((h) => h.deliveryId)).toEqual(log.map((d) => d.id));
    expect(rx.received[0]!.body).toEqual({
      id: eventId,
      event: 'order.created',
      createdAt: eventAt.toISOString(),
      storeId: store.id,
      livemode: true,
      data: payload,
    });
    expect(new Set(rx.received.map((h) => h.rawBody)).size).toBe(1);
    expectSigned(rx.received);
  });

  it('waits at least as long as Retry-After on 429 (seconds) and 503 (HTTP date)', async () => {
    const clock = freshClock();
    const deps = depsFor(clock);
    const store = await createStore(orm.em.fork());
    const rx = await receiver({
      answer: (hit) =>
        hit.path === '/busy'
          ? { status: 429, headers: { 'retry-after': '3600' } }
          : { status: 503, headers: { 'retry-after': new Date(clock.now().getTime() + 2 * 3_600_000).toUTCString() } },
    });
    const busy = await createWebhook(deps, store.id, `${rx.url}/busy`, ['order.created']);
    const maintenance = await createWebhook(deps, store.id, `${rx.url}/maintenance`, ['order.created']);
    await emit(clock, store.id);
    await new Dispatcher(deps).runOnce();
    const now = clock.now().getTime();
    const [busyNext] = (await attemptsOf(busy.id)).filter((d) => d.attempt === 2);
    const [maintenanceNext] = (await attemptsOf(maintenance.id)).filter((d) => d.attempt === 2);
    expect(busyNext!.dueAt.getTime() - now).toBeGreaterThanOrEqual(3_600_000);
    // An HTTP date has whole seconds: at least 2 h less the second cut off.
    expect(maintenanceNext!.dueAt.getTime() - now).toBeGreaterThanOrEqual(2 * 3_600_000 - 1000);
    expect((await attemptsOf(busy.id))[0]).toMatchObject({ status: 'failed', responseCode: 429 });
  });
});

describe('disabling an endpoint', () => {
  it('disables at once on 410 Gone, skips its queued attempts, sends nothing more and e-mails the owner once', async () => {
    const clock = freshClock();
    const deps = depsFor(clock);
    const store = await createStore(orm.em.fork());
    const owner = await addOwner(store.id);
    const rx = await receiver({ secretFor: () => hook.secret, answer: () => ({ status: 410, body: 'gone' }) });
    const hook = await createWebhook(deps, store.id, `${rx.url}/gone`, ['order.created', 'order.paid']);
    await emit(clock, store.id, 'order.created');
    await emit(clock, store.id, 'order.paid');
    // One at a time to this endpoint, so the second attempt is still queued when the first hears 410.
    await new Dispatcher(deps, { perEndpoint: 1 }).runOnce();

    expect(rx.received).toHaveLength(1);
    const gone = await webhookRow(hook.id);
    expect(gone.enabled).toBe(false);
    expect(gone.disabledAt).toEqual(clock.now());
    expect(gone.disabledReason).toBe('The receiver answered 410 Gone.');
    expect(gone.failureCount).toBe(1);
    const log = await attemptsOf(hook.id);
    expect(log.map((d) => d.status).sort()).toEqual(['failed', 'skipped']);
    expect(log.find((d) => d.status === 'failed')).toMatchObject({ attempt: 1, responseCode: 410 });
    expect(log.find((d) => d.status === 'skipped')).toMatchObject({ attempt: 1, errorMessage: 'Endpoint disabled.' });

    clock.advance(DAY);
    await emit(clock, store.id, 'order.created');
    await new Dispatcher(deps).runOnce();
    expect(rx.received).toHaveLength(1);
    expect(await attemptsOf(hook.id)).toHaveLength(2);
    const mails = await keptMail({ em: orm.em.fork(), deps }, { to: owner });
    expect(mails).toHaveLength(1);
    expect(mails[0]!.subject).toContain('disabled');
    expect(mails[0]!.text).toContain('410');
  });

  it('disables after both thresholds (5 days without success and 20 failures in a row), not before', async () => {
    const clock = freshClock();
    const deps = depsFor(clock);
    expect([deps.config.webhookDisableAfterDays, deps.config.webhookDisableAfterFailures]).toEqual([5, 20]);
    const store = await createStore(orm.em.fork());
    const owner = await addOwner(store.id);
    const rx = await receiver({ answer: () => ({ status: 500 }) });
    const hook = await createWebhook(deps, store.id, `${rx.url}/down`, ['order.created']);
    const dispatcher = new Dispatcher(deps);

    let nextEventAt = clock.now().getTime();
    let enabledWithTwentyFailures = false;
    for (let pass = 0; pass < 400; pass++) {
      if (clock.now().getTime() >= nextEventAt) {
        await emit(clock, store.id);
        nextEventAt += 12 * 3_600_000;
      }
      await dispatcher.runOnce();
      const state = await webhookRow(hook.id);
      if (!state.enabled) break;
      if (state.failureCount >= 20) enabledWithTwentyFailures = true;
      const queued = (await attemptsOf(hook.id)).filter((d) => d.status === 'queued').map((d) => d.dueAt.getTime());
      clock.set(Math.min(nextEventAt, ...queued));
    }

    const disabled = await webhookRow(hook.id);
    expect(disabled.enabled).toBe(false);
    expect(enabledWithTwentyFailures, '20 failures alone do not disable').toBe(true);
    expect(disabled.failureCount).toBeGreaterThanOrEqual(20);
    const streakStart = disabled.firstFailureAt!.getTime();
    expect(disabled.disabledAt!.getTime() - streakStart).toBeGreaterThanOrEqual(5 * DAY);
    expect(disabled.disabledReason).toMatch(/^No successful delivery for 5 days and \d+ failed attempts in a row\.$/);
    // It was the first failure past 5 days that disabled it.
    const failures = (await attemptsOf(hook.id))
      .filter((d) => d.status === 'failed')
      .map((d) => d.updatedAt.getTime())
      .sort((a, b) => a - b);
    expect(failures.at(-1)).toBe(disabled.disabledAt!.getTime());
    expect(failures.at(-2)! - streakStart).toBeLessThan(5 * DAY);

    const log = await attemptsOf(hook.id);
    expect(log.filter((d) => d.status === 'queued' || d.status === 'pending')).toEqual([]);
    expect(log.filter((d) => d.status === 'skipped').length).toBeGreaterThan(0);
    const mails = await keptMail({ em: orm.em.fork(), deps }, { to: owner });
    expect(mails).toHaveLength(1);
    expect(mails[0]!.text).toContain('No successful delivery for 5 days');

    const sent = rx.received.length;
    clock.advance(DAY);
    await emit(clock, store.id);
    await dispatcher.runOnce();
    expect(rx.received).toHaveLength(sent);
    expect(await orm.em.fork().count(OutboundEmailSchema, { to: owner })).toBe(1);
  });
});

describe('an attempt', () => {
  it('is signed in both schemes over the exact bytes sent and keeps at most 1 KB of a 5 MB answer', async () => {
    const clock = freshClock();
    const deps = depsFor(clock);
    const store = await createStore(orm.em.fork());
    const secrets = new Map<string, string>();
    const answers: Record<string, ReceiverAnswer> = {
      '/big': { status: 200, bodyBytes: 5 * 1024 * 1024 },
      '/accents': { status: 200, body: 'é'.repeat(600) },
      '/nul': { status: 202, body: '\u0000ok' },
    };
    const rx = await receiver({ secretFor: (path) => secrets.get(path), answer: (hit) => answers[hit.path]! });
    const hooks: Record<string, TestHook> = {};
    for (const path of Object.keys(answers)) {
      hooks[path] = await createWebhook(deps, store.id, `${rx.url}${path}`, ['product.updated']);
      secrets.set(path, hooks[path].secret);
    }
    const payload = productPayload(store.id, { name: 'Ünïcödé ✓' });
    const eventId = await emit(clock, store.id, 'product.updated', payload);
    await new Dispatcher(deps).runOnce();

    expect(rx.received).toHaveLength(3);
    expectSigned(rx.received);
    for (const hit of rx.received) {
      expect(hit.headers['x-service-event']).toBe('product.updated');
      expect(hit.headers['x-service-event-id']).toBe(eventId);
      expect(hit.headers['content-type']).toBe('application/json');
      expect(hit.body?.data).toEqual(payload);
      // The verifiers are not vacuous: one byte more, or another secret, fails both.
      const secret = secrets.get(hit.path)!;
      expect(verifyServiceSignature(secret, hit.headers['x-service-signature'] as string, `${hit.rawBody} `)).toBe(
        false,
      );
      expect(verifyStandardSignature(newWebhookSecret(), hit.headers, hit.rawBody)).toBe(false);
      expect(hit.headers['x-service-signature']).toMatch(
        new RegExp(`^t=${Math.floor(clock.now().getTime() / 1000)},v1=[0-9a-f]{64}$`),
      );
    }

    const [big] = await attemptsOf(hooks['/big']!.id);
    expect(big).toMatchObject({ status: 'success', responseCode: 200 });
    expect(big!.responseBodyPreview).toBe('x'.repeat(1024));
    expect(rx.bigBodyFinished, 'the client hung up instead of reading 5 MB').toEqual([false]);
    const [accents] = await attemptsOf(hooks['/accents']!.id);
    expect(accents!.responseBodyPreview).toBe('é'.repeat(512));
    const [nul] = await attemptsOf(hooks['/nul']!.id);
    expect(nul).toMatchObject({ status: 'success', responseCode: 202, responseBodyPreview: '\uFFFDok' });
  });

  it('fails on a timeout, a redirect (not followed), a refused connection and a URL that is not allowed', async () => {
    const clock = freshClock();
    const deps = depsFor(clock);
    const store = await createStore(orm.em.fork());
    const rx = await receiver({
      answer: (hit) =>
        hit.path === '/slow'
          ? { status: 200, delayMs: 3_000 }
          : hit.path === '/moved'
            ? { status: 302, headers: { location: `${rx.url}/elsewhere` } }
            : { status: 200 },
    });
    const closedPort = await reservePort();
    const slow = await createWebhook(deps, store.id, `${rx.url}/slow`, ['order.created']);
    const moved = await createWebhook(deps, store.id, `${rx.url}/moved`, ['order.created']);
    const refused = await createWebhook(deps, store.id, `http://127.0.0.1:${closedPort}/hook`, ['order.created']);
    const outside = await createWebhook(deps, store.id, 'http://example.com/hook', ['order.created']);
    await emit(clock, store.id);
    const started = performance.now();
    const counts = await new Dispatcher(deps, { timeoutMs: 300 }).runOnce();
    expect(performance.now() - started).toBeLessThan(2_500);
    expect(counts.failed).toBeGreaterThanOrEqual(4);

    const first = async (hook: TestHook) => (await attemptsOf(hook.id))[0]!;
    expect(await first(slow)).toMatchObject({
      status: 'failed',
      responseCode: null,
      errorMessage: 'Timed out after 300 ms.',
    });
    expect(await first(moved)).toMatchObject({ status: 'failed', responseCode: 302 });
    expect((await first(moved)).errorMessage).toMatch(
      /^Redirect not followed \(302 to http:\/\/127\.0\.0\.1:\d+\/elsewhere\)\.$/,
    );
    expect(rx.received.map((h) => h.path).sort()).toEqual(['/moved', '/slow']);
    expect(await first(refused)).toMatchObject({
      status: 'failed',
      responseCode: null,
      errorMessage: 'Connection refused.',
    });
    expect(await first(outside)).toMatchObject({
      status: 'failed',
      errorMessage: 'URL not allowed: http is allowed only to loopback outside production.',
    });
    // Each failure is retried on the schedule.
    for (const hook of [slow, moved, refused, outside]) {
      expect((await attemptsOf(hook.id)).map((d) => [d.attempt, d.status])).toEqual([
        [1, 'failed'],
        [2, 'queued'],
      ]);
    }
  });

  it('is skipped unsent when its endpoint was disabled or unsubscribed from the event meanwhile', async () => {
    const clock = freshClock();
    const deps = depsFor(clock);
    const store = await createStore(orm.em.fork());
    const rx = await receiver({});
    const disabled = await createWebhook(deps, store.id, `${rx.url}/disabled`, ['order.created']);
    const unsubscribed = await createWebhook(deps, store.id, `${rx.url}/unsubscribed`, ['order.created', 'order.paid']);
    const kept = await createWebhook(deps, store.id, `${rx.url}/kept`, ['order.created']);
    await emit(clock, store.id);
    // Fan-out happened (as a dispatcher that died before sending would leave it), then the endpoints changed.
    const em = orm.em.fork();
    const [event] = await em.find(EventSchema, { store: store.id });
    for (const hook of [disabled, unsubscribed, kept]) {
      em.create(WebhookDeliverySchema, {
        id: newId(),
        webhook: hook.id,
        storeId: store.id,
        eventId: event!.id,
        event: 'order.created',
        attempt: 1,
        status: 'queued',
        dueAt: clock.now(),
        lockedUntil: null,
        createdAt: clock.now(),
        updatedAt: clock.now(),
      });
    }
    event!.dispatchedAt = clock.now();
    await em.flush();
    await em.nativeUpdate(WebhookSchema, { id: disabled.id }, { enabled: false, disabledAt: clock.now() });
    await em.nativeUpdate(WebhookSchema, { id: unsubscribed.id }, { events: ['order.paid'] });

    const counts = await new Dispatcher(deps).runOnce();
    expect(counts.skipped).toBeGreaterThanOrEqual(2);
    expect(rx.received.map((h) => h.path)).toEqual(['/kept']);
    expect((await attemptsOf(disabled.id))[0]).toMatchObject({
      status: 'skipped',
      errorMessage: 'Endpoint disabled.',
      lockedUntil: null,
    });
    expect((await attemptsOf(unsubscribed.id))[0]).toMatchObject({
      status: 'skipped',
      errorMessage: 'The endpoint is no longer subscribed to this event.',
    });
    expect((await attemptsOf(kept.id))[0]).toMatchObject({ status: 'success' });
  });
});

describe('fan-out and claims', () => {
  it('queues one attempt per enabled endpoint of the store subscribed to the type, and marks the event dispatched', async () => {
    const clock = freshClock();
    const deps = depsFor(clock);
    const store = await createStore(orm.em.fork());
    const other = await createStore(orm.em.fork());
    const rx = await receiver({});
    const subscribed = await createWebhook(deps, store.id, `${rx.url}/a`, ['order.created']);
    const alsoSubscribed = await createWebhook(deps, store.id, `${rx.url}/b`, ['order.created', 'order.paid']);
    const notSubscribed = await createWebhook(deps, store.id, `${rx.url}/c`, ['order.paid']);
    const disabled = await createWebhook(deps, store.id, `${rx.url}/d`, ['order.created']);
    await orm.em.fork().nativeUpdate(WebhookSchema, { id: disabled.id }, { enabled: false });
    const otherStore = await createWebhook(deps, other.id, `${rx.url}/e`, ['order.created']);
    const eventId = await emit(clock, store.id);

    const counts = await new Dispatcher(deps).runOnce();
    expect(counts.queued).toBeGreaterThanOrEqual(2);
    expect(rx.received.map((h) => h.path).sort()).toEqual(['/a', '/b']);
    for (const hook of [subscribed, alsoSubscribed])
      expect((await attemptsOf(hook.id)).map((d) => [d.eventId, d.attempt, d.status])).toEqual([
        [eventId, 1, 'success'],
      ]);
    for (const hook of [notSubscribed, disabled, otherStore]) expect(await attemptsOf(hook.id)).toEqual([]);
    expect((await orm.em.fork().findOneOrFail(EventSchema, { id: eventId })).dispatchedAt).toEqual(clock.now());
    // Fanned out once: a second pass queues nothing for it.
    await new Dispatcher(deps).runOnce();
    expect(rx.received).toHaveLength(2);
  });

  it('sends again an attempt whose lease ran out (logged as abandoned, then the next attempt), never one whose lease holds', async () => {
    const clock = freshClock();
    const deps = depsFor(clock);
    const store = await createStore(orm.em.fork());
    const rx = await receiver({});
    const hook = await createWebhook(deps, store.id, `${rx.url}/lease`, ['order.created']);
    const held = await emit(clock, store.id);
    const abandoned = await emit(clock, store.id);
    const em = orm.em.fork();
    const now = clock.now().getTime();
    for (const [eventId, lockedUntil] of [
      [held, now + 30_000],
      [abandoned, now - 1],
    ] as const) {
      em.create(WebhookDeliverySchema, {
        id: newId(),
        webhook: hook.id,
        storeId: store.id,
        eventId,
        event: 'order.created',
        attempt: 1,
        status: 'pending',
        dueAt: new Date(now - 60_000),
        lockedUntil: new Date(lockedUntil),
        createdAt: clock.now(),
        updatedAt: clock.now(),
      });
    }
    await em.nativeUpdate(EventSchema, { id: { $in: [held, abandoned] } }, { dispatchedAt: clock.now() });
    await em.flush();

    await new Dispatcher(deps).runOnce();
    expect(rx.received.map((h) => h.eventId)).toEqual([abandoned]);
    clock.advance(30_000);
    await new Dispatcher(deps).runOnce();
    expect(rx.received.map((h) => h.eventId)).toEqual([abandoned]);
    clock.advance(1);
    await new Dispatcher(deps).runOnce();
    expect(rx.received.map((h) => h.eventId)).toEqual([abandoned, held]);
    const log = await attemptsOf(hook.id);
    for (const eventId of [held, abandoned]) {
      expect(log.filter((d) => d.eventId === eventId).map((d) => [d.attempt, d.status, d.errorMessage])).toEqual([
        [1, 'failed', ABANDONED_MESSAGE],
        [2, 'success', null],
      ]);
    }
    // Not the receiver's failure: the streak is untouched.
    expect((await webhookRow(hook.id)).failureCount).toBe(0);
  });

  it('two dispatchers on the same database send each of 10,000 due attempts exactly once', async () => {
    const clock = freshClock();
    const ormA = await openOrm(workerDatabaseUrl(), { poolMax: 10 });
    const ormB = await openOrm(workerDatabaseUrl(), { poolMax: 10 });
    cleanups.push(
      () => ormA.close(),
      () => ormB.close(),
    );
    const depsA = depsFor(clock, {}, ormA);
    const depsB = { ...depsFor(clock, {}, ormB), config: depsA.config };
    const store = await createStore(orm.em.fork());
    const secrets = new Map<string, string>();
    const seen = new Map<string, number>();
    const rx = await receiver({
      secretFor: (path) => secrets.get(path),
      answer: (hit) => {
        seen.set(hit.deliveryId!, (seen.get(hit.deliveryId!) ?? 0) + 1);
        return { status: 204 };
      },
    });
    const hooks: TestHook[] = [];
    for (let n = 0; n < 10; n++) {
      const hook = await createWebhook(depsA, store.id, `${rx.url}/n${n}`, ['order.created']);
      secrets.set(`/n${n}`, hook.secret);
      hooks.push(hook);
    }
    const tag = newId().slice(0, 8);
    const now = clock.now();
    const em = orm.em.fork();
    await em.execute(
      `insert into event (id, store_id, type, payload, created_at, dispatched_at)
       select 'evt_' || ? || lpad(i::text, 6, '0'), ?, 'order.created', jsonb_build_object('order', jsonb_build_object('n', i)), ?, ?
       from generate_series(1, 10000) i`,
      [tag, store.id, now, now],
    );
    const inserted = await em.execute<Array<{ id: string }>>(
      `insert into webhook_delivery (id, webhook_id, store_id, event_id, event, attempt, status, due_at, created_at, updated_at)
       select 'd' || ? || lpad(i::text, 6, '0'), (array[?])[1 + i % 10], ?, 'evt_' || ? || lpad(i::text, 6, '0'), 'order.created', 1, 'queued', ?, ?, ?
       from generate_series(1, 10000) i returning id`,
      [tag, hooks.map((h) => h.id), store.id, tag, now, now, now],
    );
    expect(inserted).toHaveLength(10_000);

    const a = new Dispatcher(depsA, { concurrency: 32 });
    const b = new Dispatcher(depsB, { concurrency: 32 });
    const started = performance.now();
    const [countsA, countsB] = await Promise.all([a.runOnce(), b.runOnce()]);
    const seconds = (performance.now() - started) / 1000;
    console.info(
      `10,000 attempts, 2 dispatchers x 32 concurrent: ${seconds.toFixed(2)} s, ${Math.round(10_000 / seconds)} attempts/s ` +
        `(dispatcher A sent ${countsA.succeeded}, B sent ${countsB.succeeded})`,
    );

    expect(seen.size).toBe(10_000);
    expect([...seen.values()].every((times) => times === 1)).toBe(true);
    expect(new Set(seen.keys())).toEqual(new Set(inserted.map((row) => row.id)));
    expect(countsA.succeeded).toBeGreaterThan(0);
    expect(countsB.succeeded).toBeGreaterThan(0);
    const [{ status, n }] = await em.execute<[{ status: string; n: number }]>(
      `select string_agg(distinct status, ',') as status, count(*)::int as n from webhook_delivery where id like ?`,
      [`d${tag}%`],
    );
    expect([status, n]).toEqual(['success', 10_000]);
    expect(rx.received.every((hit) => hit.serviceSignatureValid && hit.standardSignatureValid)).toBe(true);
    expect(seconds).toBeLessThan(60);
  }, 120_000);
});

describe('test ping, retry and replay', () => {
  it('sends webhook.test at once as attempt 1, never retries it, and counts it for the failure streak', async () => {
    const clock = freshClock();
    const deps = depsFor(clock);
    const store = await createStore(orm.em.fork());
    let status = 200;
    const rx = await receiver({
      secretFor: () => hook.secret,
      answer: () => ({ status, body: status === 200 ? 'pong' : 'nope' }),
    });
    const hook = await createWebhook(deps, store.id, `${rx.url}/ping`, ['order.created']);

    const ok = await sendTestPing(contextOf(deps), { webhookId: hook.id });
    expect(ok).toMatchObject({
      event: 'webhook.test',
      attempt: 1,
      status: 'success',
      responseCode: 200,
      responseBodyPreview: 'pong',
    });
    expect(ok.eventId).toMatch(/^evt_/);
    expect(rx.received[0]!.body).toEqual({
      id: ok.eventId,
      event: 'webhook.test',
      createdAt: clock.now().toISOString(),
      storeId: store.id,
      livemode: true,
      data: { webhookId: hook.id },
    });
    expect(rx.received[0]!.deliveryId).toBe(ok.id);
    expectSigned(rx.received);

    status = 500;
    const failed = await sendTestPing(contextOf(deps), { webhookId: hook.id });
    expect(failed).toMatchObject({ event: 'webhook.test', attempt: 1, status: 'failed', responseCode: 500 });
    expect(failed.eventId).not.toBe(ok.eventId);
    expect((await webhookRow(hook.id)).failureCount).toBe(1);
    clock.advance(DAY);
    await new Dispatcher(deps).runOnce();
    expect(rx.received).toHaveLength(2);
    expect((await attemptsOf(hook.id)).filter((d) => d.eventId === failed.eventId)).toHaveLength(1);

    await orm.em.fork().nativeUpdate(WebhookSchema, { id: hook.id }, { enabled: false });
    await expect(sendTestPing(contextOf(deps), { webhookId: hook.id })).rejects.toMatchObject({
      appCode: 'webhook_disabled',
    });
    await expect(sendTestPing(contextOf(deps), { webhookId: newId() })).rejects.toBeInstanceOf(AppError);
  });

  it('retries a delivery as the next attempt, and replays a range (all, or only events whose last attempt failed)', async () => {
    const clock = freshClock();
    const deps = depsFor(clock);
    const store = await createStore(orm.em.fork());
    let answer = 500;
    const rx = await receiver({ answer: () => ({ status: answer }) });
    const hook = await createWebhook(deps, store.id, `${rx.url}/replay`, ['order.created', 'order.paid']);
    const dispatcher = new Dispatcher(deps);

    const before = await emit(clock, store.id, 'order.created');
    clock.advance(60_000);
    const from = clock.now();
    const created = await emit(clock, store.id, 'order.created');
    const paid = await emit(clock, store.id, 'order.paid');
    const unsubscribed = await emit(clock, store.id, 'product.updated');
    await dispatcher.runOnce(); // before, created, paid fail
    answer = 200;
    clock.advance(6_000);
    await dispatcher.runOnce(); // their attempt 2 succeeds

    const firstOfCreated = (await attemptsOf(hook.id)).find((d) => d.eventId === created && d.attempt === 1)!;
    const retried = await retryDelivery(contextOf(deps), { deliveryId: firstOfCreated.id });
    expect(retried).toMatchObject({ eventId: created, attempt: 3, status: 'queued' });
    await dispatcher.runOnce();
    expect(rx.received.at(-1)!.eventId).toBe(created);
    expect((await orm.em.fork().findOneOrFail(WebhookDeliverySchema, { id: retried.id })).status).toBe('success');

    // A 410 disables it with `lost` failed and nothing queued; re-enabled, a failed-only replay picks `lost` alone.
    answer = 410;
    clock.advance(60_000);
    const lost = await emit(clock, store.id, 'order.paid');
    await dispatcher.runOnce();
    expect((await webhookRow(hook.id)).enabled).toBe(false);
    await expect(retryDelivery(contextOf(deps), { deliveryId: firstOfCreated.id })).rejects.toMatchObject({
      appCode: 'webhook_disabled',
    });
    await orm.em
      .fork()
      .nativeUpdate(
        WebhookSchema,
        { id: hook.id },
        { enabled: true, disabledAt: null, failureCount: 0, firstFailureAt: null },
      );
    answer = 200;
    const to = clock.now();
    expect(await replayRange(contextOf(deps), { webhookId: hook.id, from, to, status: 'failed' })).toBe(1);
    // `lost` is queued already; `before` is outside the range and product.updated is not subscribed.
    expect(await replayRange(contextOf(deps), { webhookId: hook.id, from, to })).toBe(2);
    const sent = rx.received.length;
    await dispatcher.runOnce();
    expect(
      rx.received
        .slice(sent)
        .map((h) => h.eventId)
        .sort(),
    ).toEqual([created, paid, lost].sort());
    const last = (eventId: string) =>
      attemptsOf(hook.id).then((log) =>
        log
          .filter((d) => d.eventId === eventId)
          .map((d) => [d.attempt, d.status])
          .at(-1),
      );
    expect(await last(lost)).toEqual([2, 'success']);
    expect(await last(created)).toEqual([4, 'success']);
    expect(await last(paid)).toEqual([3, 'success']);
    expect(await last(before)).toEqual([2, 'success']);
    expect(await last(unsubscribed)).toBeUndefined();
    await expect(retryDelivery(contextOf(deps), { deliveryId: newId() })).rejects.toMatchObject({
      appCode: 'not_found',
    });
  });
});

describe('wake-ups', () => {
  it('a commit that wrote an event wakes a dispatcher of this process at once, long before its next poll', async () => {
    const clock = freshClock();
    const deps = depsFor(clock);
    const store = await createStore(orm.em.fork());
    const rx = await receiver({});
    await createWebhook(deps, store.id, `${rx.url}/wake`, ['order.created']);
    const dispatcher = new Dispatcher(deps, { pollMs: 60_000 });
    dispatcher.start();
    cleanups.push(() => dispatcher.stop());
    await new Promise((resolve) => setTimeout(resolve, 300)); // its first pass is over; it sleeps for a minute
    const started = Date.now();
    const eventId = await orm.em.fork().transactional(async (em) =>
      recordEvent(
        { em },
        {
          livemode: true,
          storeId: store.id,
          type: 'order.created',
          payload: orderPayload(store.id, { id: 'o' }),
          at: clock.now(),
        },
      ),
    );
    const [hit] = await rx.waitFor(1, { timeoutMs: 5_000 });
    expect(hit!.eventId).toBe(eventId);
    expect(Date.now() - started).toBeLessThan(5_000);
    await dispatcher.stop();
  });

  it('publishes on Redis after a commit (not a rollback), and a message on the channel wakes a dispatcher elsewhere', async () => {
    const clock = freshClock();
    const prefix = `svc-test:${newId()}:`;
    const config = { ...testConfig({ REDIS_KEY_PREFIX: prefix }) };
    const ormA = await openOrm(workerDatabaseUrl(), { poolMax: 2 });
    const ormB = await openOrm(workerDatabaseUrl(), { poolMax: 2 });
    const ormC = await openOrm(workerDatabaseUrl(), { poolMax: 2 });
    cleanups.push(
      () => ormA.close(),
      () => ormB.close(),
      () => ormC.close(),
    );
    const depsA = { ...depsFor(clock, {}, ormA), config };
    const depsB = { ...depsFor(clock, {}, ormB), config };
    const redisA = createClient({ url: TEST_REDIS_URL });
    const redisB = createClient({ url: TEST_REDIS_URL });
    const listener = createClient({ url: TEST_REDIS_URL });
    await Promise.all([redisA.connect(), redisB.connect(), listener.connect()]);
    cleanups.push(
      () => redisA.close(),
      () => redisB.close(),
      () => listener.close(),
    );
    const messages: string[] = [];
    await listener.subscribe(`${prefix}events`, (message) => void messages.push(message));

    const store = await createStore(orm.em.fork());
    const rx = await receiver({});
    await createWebhook(depsA, store.id, `${rx.url}/redis`, ['order.created']);
    const a = new Dispatcher(depsA, { pollMs: 60_000, redis: redisA });
    a.start();
    cleanups.push(() => a.stop());
    await new Promise((resolve) => setTimeout(resolve, 300));

    await expect(
      ormA.em.fork().transactional(async (em) => {
        await recordEvent(
          { em },
          {
            livemode: true,
            storeId: store.id,
            type: 'order.created',
            payload: orderPayload(store.id, { id: 'rolled back' }),
            at: clock.now(),
          },
        );
        await em.flush();
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(messages).toEqual([]);
    await ormA.em.fork().transactional(async (em) =>
      recordEvent(
        { em },
        {
          livemode: true,
          storeId: store.id,
          type: 'order.created',
          payload: orderPayload(store.id, { id: 'committed' }),
          at: clock.now(),
        },
      ),
    );
    await rx.waitFor(1, { timeoutMs: 5_000 });
    await expect.poll(() => messages.length, { timeout: 3_000 }).toBeGreaterThan(0);
    await a.stop();

    // B sleeps for a minute; an event written where no dispatcher hears it waits until the message.
    const b = new Dispatcher(depsB, { pollMs: 60_000, redis: redisB });
    b.start();
    cleanups.push(() => b.stop());
    await new Promise((resolve) => setTimeout(resolve, 300));
    const em = ormC.em.fork();
    const quiet = await recordEvent(
      { em },
      {
        livemode: true,
        storeId: store.id,
        type: 'order.created',
        payload: orderPayload(store.id, { id: 'quiet' }),
        at: clock.now(),
      },
    );
    await em.flush();
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(rx.received.map((h) => h.eventId)).not.toContain(quiet);
    await redisA.publish(`${prefix}events`, '1');
    await rx.waitFor(2, { timeoutMs: 5_000 });
    expect(rx.received.map((h) => h.eventId)).toContain(quiet);
    await b.stop();
  });
});

describe('claiming ahead', () => {
  const pendingOf = async (webhookId: string) =>
    (
      await orm.em
        .fork()
        .execute<[{ n: number }]>(
          `select count(*)::int as n from webhook_delivery where webhook_id = ? and status = 'pending'`,
          [webhookId],
        )
    )[0].n;

  it('holds more than its slots only for an endpoint that answers fast, and never sends more at once than the slots', async () => {
    const clock = freshClock();
    const deps = depsFor(clock);
    const store = await createStore(orm.em.fork());
    // The first four answer at once; later ones take 300 ms, so claimed attempts queue up here.
    const rx = await receiver({ answer: (_hit, index) => ({ status: 200, delayMs: index < 4 ? 0 : 300 }) });
    const fast = await createWebhook(deps, store.id, `${rx.url}/fast`, ['order.created']);
    for (let n = 0; n < 4; n++) await emit(clock, store.id);
    const dispatcher = new Dispatcher(deps, { perEndpoint: 2, prefetch: 4, pollMs: 50 });
    await dispatcher.runOnce(); // four quick answers: the endpoint is known to be fast
    for (let n = 0; n < 20; n++) await emit(clock, store.id);
    dispatcher.start();
    cleanups.push(() => dispatcher.stop());
    await vi.waitFor(async () => expect(await pendingOf(fast.id)).toBeGreaterThan(2), { timeout: 5_000, interval: 20 });
    expect(await pendingOf(fast.id)).toBeLessThanOrEqual(2 * (1 + 4));
    await vi.waitFor(
      async () => expect((await attemptsOf(fast.id)).filter((d) => d.status === 'success')).toHaveLength(24),
      { timeout: 20_000, interval: 50 },
    );
    await dispatcher.stop();
    // Never more than the 2 slots at once: each slow request's first 250 ms overlap at most one other.
    const slow = rx.received.slice(4).map((h) => h.receivedAt);
    for (const at of slow)
      expect(slow.filter((other) => other <= at && other + 250 > at).length).toBeLessThanOrEqual(2);
    expect(new Set(rx.received.map((h) => h.eventId)).size).toBe(24);
    expect(rx.received).toHaveLength(24);
  }, 30_000);

  it('claims no more than its slots for an endpoint not heard from yet, leaving the rest to other dispatchers', async () => {
    const clock = freshClock();
    const deps = depsFor(clock);
    const store = await createStore(orm.em.fork());
    const rx = await receiver({ answer: () => ({ status: 200, delayMs: 1_000 }) });
    const hook = await createWebhook(deps, store.id, `${rx.url}/slow`, ['order.created']);
    for (let n = 0; n < 10; n++) await emit(clock, store.id);
    const dispatcher = new Dispatcher(deps, { perEndpoint: 2, prefetch: 4, pollMs: 50 });
    dispatcher.start();
    cleanups.push(() => dispatcher.stop());
    await vi.waitFor(() => expect(rx.received.length).toBeGreaterThanOrEqual(2), { timeout: 5_000, interval: 20 });
    expect(await pendingOf(hook.id)).toBe(2);
    await dispatcher.stop();
  }, 30_000);

  it('gives claimed attempts it has not started back when it stops', async () => {
    const clock = freshClock();
    const deps = depsFor(clock);
    const store = await createStore(orm.em.fork());
    const rx = await receiver({ answer: (_hit, index) => ({ status: 200, delayMs: index < 2 ? 0 : 500 }) });
    const hook = await createWebhook(deps, store.id, `${rx.url}/stop`, ['order.created']);
    for (let n = 0; n < 2; n++) await emit(clock, store.id);
    const dispatcher = new Dispatcher(deps, { perEndpoint: 1, prefetch: 8, pollMs: 50 });
    await dispatcher.runOnce();
    for (let n = 0; n < 8; n++) await emit(clock, store.id);
    dispatcher.start();
    await vi.waitFor(async () => expect(await pendingOf(hook.id)).toBeGreaterThan(1), { timeout: 5_000, interval: 20 });
    await dispatcher.stop();
    // Only what was in flight was sent; the rest is queued again, for any dispatcher.
    const log = await attemptsOf(hook.id);
    expect(log.filter((d) => d.status === 'pending')).toEqual([]);
    expect(log.filter((d) => d.status === 'success')).toHaveLength(rx.received.length);
    expect(log.filter((d) => d.status === 'queued').length).toBe(10 - rx.received.length);
  }, 30_000);
});

describe('a database that goes away', () => {
  it('logs a failed pass as an error while running, and as a warning when it fails because the process is stopping', async () => {
    const clock = freshClock();
    const gone = await openOrm(workerDatabaseUrl(), { poolMax: 2 });
    await gone.close();
    const logged = (deps: AppDeps) => {
      const lines: Array<{ level: string; msg: string }> = [];
      deps.log.error = ((_obj: unknown, msg: string) =>
        lines.push({ level: 'error', msg })) as unknown as typeof deps.log.error;
      deps.log.warn = ((_obj: unknown, msg: string) =>
        lines.push({ level: 'warn', msg })) as unknown as typeof deps.log.warn;
      return lines;
    };

    const running = depsFor(clock, {}, gone);
    running.log = running.log.child({});
    const whileRunning = logged(running);
    const first = new Dispatcher(running, { pollMs: 60_000 });
    first.start();
    await vi.waitFor(
      () => expect(whileRunning).toContainEqual({ level: 'error', msg: 'webhook dispatcher pass failed' }),
      { timeout: 5_000, interval: 20 },
    );
    await first.stop();

    // Stopped while its first pass is on its way to the database (a Ctrl-C that reached an embedded PostgreSQL too).
    const stopping = depsFor(clock, {}, gone);
    stopping.log = stopping.log.child({});
    const whileStopping = logged(stopping);
    const second = new Dispatcher(stopping, { pollMs: 60_000 });
    second.start();
    await second.stop();
    expect(whileStopping).toContainEqual({ level: 'warn', msg: 'webhook dispatcher pass failed while stopping' });
    expect(whileStopping.filter((line) => line.level === 'error')).toEqual([]);
  });
});

describe('wake-ups from nested transactions', () => {
  it('wakes the dispatcher when an event flushed in a nested transaction commits with the outer one, not before and not on rollback', async () => {
    const clock = freshClock();
    const deps = depsFor(clock);
    const store = await createStore(orm.em.fork());
    const rx = await receiver({});
    await createWebhook(deps, store.id, `${rx.url}/nested`, ['order.paid']);
    // Polls only once a minute: a delivery within seconds can only come from the wake-up.
    const dispatcher = new Dispatcher(deps, { pollMs: 60_000 });
    dispatcher.start();
    cleanups.push(() => dispatcher.stop());
    await new Promise((resolve) => setTimeout(resolve, 300));

    // As a payment notification settles: the event is flushed in a transaction nested in another.
    await expect(
      orm.em.fork().transactional(async (outer) => {
        await outer.transactional(async (inner) => {
          await recordEvent(
            { em: inner },
            {
              livemode: true,
              storeId: store.id,
              type: 'order.paid',
              payload: orderPayload(store.id, { id: 'rolled back' }),
              at: clock.now(),
            },
          );
        });
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    await orm.em.fork().transactional(async (outer) => {
      await outer.transactional(async (inner) => {
        await recordEvent(
          { em: inner },
          {
            livemode: true,
            storeId: store.id,
            type: 'order.paid',
            payload: orderPayload(store.id, { id: 'nested' }),
            at: clock.now(),
          },
        );
      });
    });
    const [hit] = await rx.waitFor(1, { timeoutMs: 5_000 });
    expect(hit!.body).toMatchObject({ event: 'order.paid', data: { order: { id: 'nested' } } });
    await dispatcher.stop();
    expect(rx.received).toHaveLength(1);
  }, 20_000);
});
