/**
 * The webhook endpoints API (webhooks.service.ts) against the real database, without HTTP:
 * the secret shown once and kept only encrypted, the receiver URL rules in and outside
 * production, the limit of 16 per store under racing creates, store isolation, enabling and
 * disabling, rotation, the synchronous test ping against a receiver on loopback, the delivery
 * log's keyset paging and filters, retry / replay queueing the right attempts, and pruning the
 * outbox.
 * The delivery engine itself is scheduler.test.ts's.
 *
 * Every test runs on its own ManualClock, each later than the one before and all far in the
 * future (2100 on), so the attempts these tests leave queued are never due for a dispatcher of
 * another test in this worker's database (their clocks are the real one or earlier ones).
 * Events are written as already dispatched, so no dispatcher fans them out either.
 */
import { randomBytes } from 'node:crypto';
import type { TWebhookEvent } from '@svc/schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../../test/support/env.js';
import { createStore } from '../../../../../test/support/factories.js';
import { serviceContext } from '../../../../../test/support/in-process.js';
import {
  startWebhookReceiver,
  verifyServiceSignature,
  verifyStandardSignature,
  type ReceiverAnswer,
  type WebhookReceiver,
} from '../../../../../test/support/webhook-receiver.js';
import { openOrm, type Orm } from '../../db/orm.js';
import { JOBS } from '../../jobs.js';
import { ManualClock } from '../../lib/clock.js';
import { unseal } from '../../lib/crypto.js';
import { newEventId, newId } from '../../lib/ids.js';
import type { ServiceContext } from '../request/context.js';
import { EventSchema } from '../events/events.entities.js';
import { webhookSecretKey } from './signing.js';
import { WebhookDeliverySchema, WebhookSchema } from './webhooks.entities.js';
import {
  EVENT_RETENTION_MS,
  MAX_WEBHOOKS_PER_STORE,
  createWebhook,
  deleteWebhook,
  getWebhook,
  listDeliveries,
  listEventDeliveries,
  listWebhooks,
  replayWebhook,
  resendEvent,
  retryWebhookDelivery,
  rotateWebhookSecret,
  testWebhook,
  updateWebhook,
  webhookStats,
} from './webhooks.service.js';

const MINUTE = 60_000;
const DAY = 24 * 3_600_000;
const SECRET_SHAPE = /^whsec_[A-Za-z0-9+/]{43}=$/;

let orm: Orm;
const cleanups: Array<() => Promise<unknown>> = [];
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 4 });
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  await orm?.close();
});

let epoch = Date.UTC(2100, 0, 1);
/** A clock 40 days after the previous test's, far past any other test's clock. */
function freshClock(): ManualClock {
  epoch += 40 * DAY;
  return new ManualClock(epoch);
}

/** One application's worth of deps (its own APP_ENCRYPTION_KEY) on a clock of its own. */
function setup(env: Record<string, string> = {}) {
  const clock = freshClock();
  return { clock, base: serviceContext(orm, clock, env) };
}

/** A service call as a request makes it: the same deps, a fresh EntityManager. */
const call = (base: ServiceContext): ServiceContext => ({ ...base, em: orm.em.fork() });

const create = (
  base: ServiceContext,
  storeId: string,
  input: Partial<{ name: string; url: string; events: TWebhookEvent[] }> = {},
) =>
  createWebhook(call(base), {
    storeId,
    name: 'Orders',
    url: 'https://hooks.example.com/svc',
    events: ['order.created'],
    ...input,
  });

const webhookRow = async (id: string) => {
  const [row] = await orm.em.fork().execute<Array<Record<string, unknown>>>('select * from webhook where id = ?', [id]);
  return row;
};
const countWebhooks = (storeId: string) => orm.em.fork().count(WebhookSchema, { store: storeId });
const attemptsOf = (webhookId: string) =>
  orm.em.fork().find(WebhookDeliverySchema, { webhook: webhookId }, { orderBy: { eventId: 'asc', attempt: 'asc' } });

async function receiver(answer?: (index: number) => ReceiverAnswer): Promise<WebhookReceiver> {
  const started = await startWebhookReceiver({ answer: answer && ((_hit, index) => answer(index)) });
  cleanups.push(() => started.close());
  return started;
}

/** An event of the store, written as already dispatched (the fan-out is the dispatcher's, not under test here). */
async function insertEvent(
  storeId: string,
  type: string,
  createdAt: Date,
  dispatchedAt: Date | null = createdAt,
): Promise<string> {
  const id = newEventId();
  await orm.em
    .fork()
    .insert(EventSchema, { id, store: storeId, type, payload: { order: { id: newId() } }, createdAt, dispatchedAt });
  return id;
}

/** A row of the delivery log, as the dispatcher would have left it. */
async function logAttempt(
  webhookId: string,
  storeId: string,
  row: {
    status: 'success' | 'failed' | 'skipped' | 'queued' | 'pending';
    createdAt: Date;
    event?: string;
    eventId?: string;
    attempt?: number;
  },
): Promise<string> {
  const id = newId();
  await orm.em.fork().insert(WebhookDeliverySchema, {
    id,
    webhook: webhookId,
    storeId,
    eventId: row.eventId ?? newEventId(),
    event: row.event ?? 'order.created',
    attempt: row.attempt ?? 1,
    status: row.status,
    dueAt: row.createdAt,
    lockedUntil: null,
    responseCode: row.status === 'success' ? 200 : row.status === 'failed' ? 500 : null,
    createdAt: row.createdAt,
    updatedAt: row.createdAt,
  });
  return id;
}

describe('createWebhook', () => {
  it('shows the secret once (whsec_ + base64 of 32 bytes, prefix its first 12 characters) and stores it only encrypted', async () => {
    const { clock, base } = setup();
    const store = await createStore(orm.em.fork());
    const created = await create(base, store.id, { name: 'Fulfilment', events: ['order.paid', 'order.refunded'] });
    expect(created).toMatchObject({
      storeId: store.id,
      name: 'Fulfilment',
      url: 'https://hooks.example.com/svc',
      events: ['order.paid', 'order.refunded'],
      enabled: true,
      failureCount: 0,
      disabledAt: null,
      disabledReason: null,
      lastDeliveredAt: null,
      createdAt: clock.now().toISOString(),
    });
    expect(created.secret).toMatch(SECRET_SHAPE);
    expect(Buffer.from(created.secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(created.secretPrefix).toBe(created.secret.slice(0, 12));

    const row = await webhookRow(created.id);
    expect(JSON.stringify(row)).not.toContain(created.secret);
    expect(JSON.stringify(row)).not.toContain(created.secret.slice('whsec_'.length));
    // Sealed under the application key: it opens with that key only.
    expect(unseal(webhookSecretKey(base.deps.config), String(row!.secret_enc))).toBe(created.secret);
    expect(() => unseal(webhookSecretKey(setup().base.deps.config), String(row!.secret_enc))).toThrow();

    // Reading it back never shows the secret again.
    expect(await getWebhook(call(base), { storeId: store.id, webhookId: created.id })).not.toHaveProperty('secret');
    expect((await listWebhooks(call(base), store.id))[0]).not.toHaveProperty('secret');
    const another = await create(base, store.id);
    expect(another.secret).not.toBe(created.secret);
  });

  it('outside production takes https anywhere and http only to loopback', async () => {
    const { base } = setup();
    const store = await createStore(orm.em.fork());
    const allowed = [
      'https://hooks.example.com/svc',
      'https://10.1.2.3/private-is-fine-over-https',
      'http://127.0.0.1:8080/hook',
      'http://127.8.9.10/hook',
      'http://localhost:3000/hook',
      'http://[::1]:8080/hook',
    ];
    for (const url of allowed) await expect(create(base, store.id, { url }), url).resolves.toMatchObject({ url });
    const refused = [
      'http://hooks.example.com/svc',
      'http://10.1.2.3/hook',
      'http://192.168.1.10/hook',
      'http://localhost.example.com/hook',
      'ftp://127.0.0.1/hook',
      'ws://127.0.0.1/hook',
      'https://user:secret@hooks.example.com/svc',
      'hooks.example.com/svc',
      `https://hooks.example.com/${'a'.repeat(2048)}`,
    ];
    for (const url of refused)
      await expect(create(base, store.id, { url }), url).rejects.toMatchObject({ appCode: 'url_not_allowed' });
    expect(await countWebhooks(store.id)).toBe(allowed.length);

    // The same rules on update; a refused URL changes nothing.
    const hook = await create(base, store.id);
    await expect(
      updateWebhook(call(base), {
        storeId: store.id,
        webhookId: hook.id,
        url: 'http://hooks.example.com/new',
        name: 'Renamed',
      }),
    ).rejects.toMatchObject({
      appCode: 'url_not_allowed',
    });
    expect(await getWebhook(call(base), { storeId: store.id, webhookId: hook.id })).toMatchObject({
      url: hook.url,
      name: hook.name,
    });
  });

  it('in production takes only https to public addresses', async () => {
    const { base } = setup({
      NODE_ENV: 'production',
      DATABASE_URL: workerDatabaseUrl(),
      APP_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      PUBLIC_URL: 'https://svc.example',
      SMTP_URL: 'smtp://127.0.0.1:9',
    });
    expect(base.deps.config.isProduction).toBe(true);
    const store = await createStore(orm.em.fork());
    // Address literals: no DNS needed to decide.
    const allowed = ['https://1.1.1.1/hooks', 'https://[2606:4700:4700::1111]/hooks'];
    for (const url of allowed) await expect(create(base, store.id, { url }), url).resolves.toMatchObject({ url });
    const refused = [
      'http://1.1.1.1/hooks',
      'http://127.0.0.1:8080/hook',
      'http://localhost:3000/hook',
      'https://127.0.0.1/hook',
      'https://localhost/hook',
      'https://10.1.2.3/hook',
      'https://172.16.5.4/hook',
      'https://192.168.1.10/hook',
      'https://100.64.0.1/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://0.0.0.0/hook',
      'https://[::1]/hook',
      'https://[fd00::1]/hook',
      'https://[fe80::1]/hook',
      'https://[::ffff:127.0.0.1]/hook',
    ];
    for (const url of refused)
      await expect(create(base, store.id, { url }), url).rejects.toMatchObject({ appCode: 'url_not_allowed' });
    expect(await countWebhooks(store.id)).toBe(allowed.length);

    const [hook] = await listWebhooks(call(base), store.id);
    await expect(
      updateWebhook(call(base), { storeId: store.id, webhookId: hook!.id, url: 'https://192.168.1.10/hook' }),
    ).rejects.toMatchObject({
      appCode: 'url_not_allowed',
    });
  });

  it(`allows at most ${MAX_WEBHOOKS_PER_STORE} per store, also when 20 are created at once`, async () => {
    const { base } = setup();
    const store = await createStore(orm.em.fork());
    const neighbour = await createStore(orm.em.fork());
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, n) => create(base, store.id, { name: `Hook ${n}` })),
    );
    const created = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    expect(created).toHaveLength(16);
    expect(refused).toHaveLength(4);
    for (const error of refused) expect(error).toMatchObject({ appCode: 'webhook_limit_reached' });
    expect(await countWebhooks(store.id)).toBe(16);

    await expect(create(base, store.id)).rejects.toMatchObject({ appCode: 'webhook_limit_reached' });
    // Another store's count is its own; deleting one frees a place.
    await expect(create(base, neighbour.id)).resolves.toMatchObject({ storeId: neighbour.id });
    await deleteWebhook(call(base), { storeId: store.id, webhookId: created[0]!.id });
    await expect(create(base, store.id)).resolves.toMatchObject({ storeId: store.id });
    expect(await countWebhooks(store.id)).toBe(16);
  });
});

describe('store isolation', () => {
  it("answers not_found for another store's webhook in every operation, and changes nothing", async () => {
    const { base } = setup();
    const store = await createStore(orm.em.fork());
    const intruder = await createStore(orm.em.fork());
    const rx = await receiver();
    const hook = await create(base, store.id, { url: `${rx.url}/isolated`, events: ['order.paid'] });
    const eventId = await insertEvent(store.id, 'order.paid', base.clock.now());
    const deliveryId = await logAttempt(hook.id, store.id, {
      status: 'failed',
      createdAt: base.clock.now(),
      event: 'order.paid',
      eventId,
    });
    const before = await webhookRow(hook.id);
    const ref = { storeId: intruder.id, webhookId: hook.id };
    const range = { from: new Date(0).toISOString(), to: new Date(epoch + DAY).toISOString() };

    const attempts: Array<[string, () => Promise<unknown>]> = [
      ['get', () => getWebhook(call(base), ref)],
      [
        'update',
        () =>
          updateWebhook(call(base), { ...ref, name: 'Taken over', url: 'https://evil.example/hook', enabled: false }),
      ],
      ['delete', () => deleteWebhook(call(base), ref)],
      ['rotate', () => rotateWebhookSecret(call(base), ref)],
      ['test', () => testWebhook(call(base), ref)],
      ['deliveries', () => listDeliveries(call(base), ref)],
      ['retry', () => retryWebhookDelivery(call(base), { ...ref, deliveryId })],
      ['replay', () => replayWebhook(call(base), { ...ref, ...range })],
    ];
    for (const [name, attempt] of attempts)
      await expect(attempt(), name).rejects.toMatchObject({ appCode: 'not_found' });

    expect(await webhookRow(hook.id)).toEqual(before);
    expect(await listWebhooks(call(base), intruder.id)).toEqual([]);
    expect((await attemptsOf(hook.id)).map((d) => d.id)).toEqual([deliveryId]);
    expect(rx.received).toEqual([]);
  });
});

describe('updateWebhook', () => {
  it('changes only the fields given; disabling sets disabledAt, and re-enabling clears it and the failure streak', async () => {
    const { clock, base } = setup();
    const store = await createStore(orm.em.fork());
    const hook = await create(base, store.id, { events: ['order.created'] });
    const ref = { storeId: store.id, webhookId: hook.id };

    clock.advance(MINUTE);
    const renamed = await updateWebhook(call(base), {
      ...ref,
      name: 'Renamed',
      events: ['order.paid', 'product.updated'],
    });
    expect(renamed).toMatchObject({
      name: 'Renamed',
      events: ['order.paid', 'product.updated'],
      url: hook.url,
      enabled: true,
      disabledAt: null,
      updatedAt: clock.now().toISOString(),
    });

    clock.advance(MINUTE);
    const disabledAt = clock.now().toISOString();
    expect(await updateWebhook(call(base), { ...ref, enabled: false })).toMatchObject({ enabled: false, disabledAt });
    clock.advance(MINUTE);
    // Disabling what is disabled keeps the moment it was disabled.
    expect(await updateWebhook(call(base), { ...ref, enabled: false })).toMatchObject({ enabled: false, disabledAt });

    // As the dispatcher leaves an endpoint it disabled after a failure streak.
    await orm.em.fork().nativeUpdate(
      WebhookSchema,
      { id: hook.id },
      {
        failureCount: 23,
        firstFailureAt: new Date(clock.now().getTime() - 6 * DAY),
        disabledReason: 'The receiver answered 410 Gone.',
      },
    );
    expect(await getWebhook(call(base), ref)).toMatchObject({ disabledReason: 'The receiver answered 410 Gone.' });
    clock.advance(MINUTE);
    const enabled = await updateWebhook(call(base), { ...ref, enabled: true });
    expect(enabled).toMatchObject({
      enabled: true,
      failureCount: 0,
      disabledAt: null,
      disabledReason: null,
      name: 'Renamed',
    });
    expect(await webhookRow(hook.id)).toMatchObject({
      enabled: true,
      failure_count: 0,
      disabled_at: null,
      first_failure_at: null,
    });
  });
});

describe('rotateWebhookSecret', () => {
  it('shows a new secret once; the old one is gone and the next ping is signed with the new one', async () => {
    const { base } = setup();
    const store = await createStore(orm.em.fork());
    const rx = await receiver();
    const hook = await create(base, store.id, { url: `${rx.url}/rotate` });
    const rotated = await rotateWebhookSecret(call(base), { storeId: store.id, webhookId: hook.id });
    expect(rotated.id).toBe(hook.id);
    expect(rotated.secret).toMatch(SECRET_SHAPE);
    expect(rotated.secret).not.toBe(hook.secret);
    expect(rotated.secretPrefix).toBe(rotated.secret.slice(0, 12));

    const row = await webhookRow(hook.id);
    expect(unseal(webhookSecretKey(base.deps.config), String(row!.secret_enc))).toBe(rotated.secret);
    expect(JSON.stringify(row)).not.toContain(hook.secret.slice('whsec_'.length));
    expect(JSON.stringify(row)).not.toContain(rotated.secret.slice('whsec_'.length));
    expect(row!.secret_prefix).toBe(rotated.secretPrefix);

    await testWebhook(call(base), { storeId: store.id, webhookId: hook.id });
    const [hit] = rx.received;
    const signature = String(hit!.headers['x-service-signature']);
    expect(verifyServiceSignature(rotated.secret, signature, hit!.rawBody)).toBe(true);
    expect(verifyStandardSignature(rotated.secret, hit!.headers, hit!.rawBody)).toBe(true);
    expect(verifyServiceSignature(hook.secret, signature, hit!.rawBody)).toBe(false);
    expect(verifyStandardSignature(hook.secret, hit!.headers, hit!.rawBody)).toBe(false);
  });
});

describe('testWebhook', () => {
  it('makes one signed webhook.test attempt now and records what the receiver answered', async () => {
    const { clock, base } = setup();
    const store = await createStore(orm.em.fork());
    let answer: ReceiverAnswer = { status: 200, body: 'pong' };
    const rx = await receiver(() => answer);
    const hook = await create(base, store.id, { url: `${rx.url}/ping` });
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
    const hook = await create(base, store.id, { url: `${rx.url}/off` });
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
    const hook = await create(base, store.id, { events: ['order.created', 'order.paid'] });
    const other = await create(base, store.id, { events: ['order.created'] });
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
    const hook = await create(base, store.id, { url: 'http://127.0.0.1:9/never-sent', events: ['order.paid'] });
    const sibling = await create(base, store.id, { events: ['order.paid'] });
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
    const hook = await create(base, store.id, {
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

describe('pruneEvents', () => {
  it('deletes, in the hourly job, outbox events past 30 days that were dispatched and whose attempts all finished; keeps the rest', async () => {
    const { clock, base } = setup();
    expect(EVENT_RETENTION_MS).toBe(30 * DAY);
    const store = await createStore(orm.em.fork());
    const hook = await create(base, store.id, { url: 'http://127.0.0.1:9/never-sent' });
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

describe('resendEvent', () => {
  it("queues one of the store's events for one endpoint now, as its next attempt of it, also one it never had", async () => {
    const { clock, base } = setup();
    const store = await createStore(orm.em.fork());
    const neighbour = await createStore(orm.em.fork());
    const hook = await create(base, store.id, { url: 'http://127.0.0.1:9/never-sent', events: ['order.paid'] });
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
    const first = await create(base, store.id, { events: ['order.paid'] });
    const second = await create(base, store.id, { events: ['order.paid'] });
    const theirs = await create(base, neighbour.id, { events: ['order.paid'] });
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
    const hook = await create(base, store.id);
    const other = await create(base, store.id);
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
