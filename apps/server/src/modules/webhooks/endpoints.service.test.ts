/**
 * The webhook endpoints (endpoints.service.ts) against the real database, without HTTP: the
 * secret shown once and kept only encrypted, the receiver URL rules in and outside production,
 * the limit of 16 per store under racing creates, store isolation (in every operation on an
 * endpoint, its deliveries' included), enabling and disabling, and rotation. What is sent to an
 * endpoint is deliveries.service.test.ts's; the delivery engine, scheduler.test.ts's.
 *
 * Every test runs on its own ManualClock, each later than the one before and all far in the
 * future (2100 on), so the attempts these tests leave queued are never due for a dispatcher of
 * another test in this worker's database (their clocks are the real one or earlier ones).
 * Events are written as already dispatched, so no dispatcher fans them out either.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../../test/support/env.js';
import { createStore } from '../../../../../test/support/factories.js';
import { verifyServiceSignature, verifyStandardSignature } from '../../../../../test/support/webhook-receiver.js';
import { call, clockedSetups, createEndpoint, webhookTestData } from '../../../../../test/support/webhooks.js';
import { openOrm, type Orm } from '../../db/orm.js';
import { unseal } from '../../lib/crypto.js';
import { replayWebhook, retryWebhookDelivery, testWebhook, listDeliveries } from './deliveries.service.js';
import {
  MAX_WEBHOOKS_PER_STORE,
  deleteWebhook,
  getWebhook,
  listWebhooks,
  rotateWebhookSecret,
  updateWebhook,
} from './endpoints.service.js';
import { webhookSecretKey } from './signing.js';
import { WebhookSchema } from './webhooks.entities.js';

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
const { webhookRow, countWebhooks, attemptsOf, receiver, insertEvent, logAttempt } = webhookTestData(
  () => orm,
  cleanups,
);

const { setup } = clockedSetups(() => orm, Date.UTC(2100, 0, 1));

describe('createWebhook', () => {
  it('shows the secret once (whsec_ + base64 of 32 bytes, prefix its first 12 characters) and stores it only encrypted', async () => {
    const { clock, base } = setup();
    const store = await createStore(orm.em.fork());
    const created = await createEndpoint(base, store.id, {
      name: 'Fulfilment',
      events: ['order.paid', 'order.refunded'],
    });
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
    const another = await createEndpoint(base, store.id);
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
    for (const url of allowed)
      await expect(createEndpoint(base, store.id, { url }), url).resolves.toMatchObject({ url });
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
      await expect(createEndpoint(base, store.id, { url }), url).rejects.toMatchObject({ appCode: 'url_not_allowed' });
    expect(await countWebhooks(store.id)).toBe(allowed.length);

    // The same rules on update; a refused URL changes nothing.
    const hook = await createEndpoint(base, store.id);
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
    for (const url of allowed)
      await expect(createEndpoint(base, store.id, { url }), url).resolves.toMatchObject({ url });
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
      await expect(createEndpoint(base, store.id, { url }), url).rejects.toMatchObject({ appCode: 'url_not_allowed' });
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
      Array.from({ length: 20 }, (_, n) => createEndpoint(base, store.id, { name: `Hook ${n}` })),
    );
    const created = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    expect(created).toHaveLength(16);
    expect(refused).toHaveLength(4);
    for (const error of refused) expect(error).toMatchObject({ appCode: 'webhook_limit_reached' });
    expect(await countWebhooks(store.id)).toBe(16);

    await expect(createEndpoint(base, store.id)).rejects.toMatchObject({ appCode: 'webhook_limit_reached' });
    // Another store's count is its own; deleting one frees a place.
    await expect(createEndpoint(base, neighbour.id)).resolves.toMatchObject({ storeId: neighbour.id });
    await deleteWebhook(call(base), { storeId: store.id, webhookId: created[0]!.id });
    await expect(createEndpoint(base, store.id)).resolves.toMatchObject({ storeId: store.id });
    expect(await countWebhooks(store.id)).toBe(16);
  });
});

describe('store isolation', () => {
  it("answers not_found for another store's webhook in every operation, and changes nothing", async () => {
    const { base } = setup();
    const store = await createStore(orm.em.fork());
    const intruder = await createStore(orm.em.fork());
    const rx = await receiver();
    const hook = await createEndpoint(base, store.id, { url: `${rx.url}/isolated`, events: ['order.paid'] });
    const eventId = await insertEvent(store.id, 'order.paid', base.clock.now());
    const deliveryId = await logAttempt(hook.id, store.id, {
      status: 'failed',
      createdAt: base.clock.now(),
      event: 'order.paid',
      eventId,
    });
    const before = await webhookRow(hook.id);
    const ref = { storeId: intruder.id, webhookId: hook.id };
    const range = { from: new Date(0).toISOString(), to: new Date(base.clock.now().getTime() + DAY).toISOString() };

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
    const hook = await createEndpoint(base, store.id, { events: ['order.created'] });
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
    const hook = await createEndpoint(base, store.id, { url: `${rx.url}/rotate` });
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
