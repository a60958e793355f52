/**
 * A claim's lease against the real database: the claim of one endpoint's backlog (claims.repo.ts)
 * and the batched write of successes under their claims' leases (outcomes.repo.ts). Concurrent
 * refills of one endpoint take disjoint attempts and lock only what they take (another endpoint
 * and the rows past the limit stay claimable), and a batch of successes writes each attempt only
 * while its claim's lease holds, ending the endpoint's failure streak. Each test makes its own
 * store and endpoints.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../../test/support/env.js';
import { createStore } from '../../../../../test/support/factories.js';
import { openOrm, type Orm } from '../../db/orm.js';
import { newId } from '../../lib/ids.js';
import { claimForEndpoint } from './claims.repo.js';
import { recordSuccesses } from './outcomes.repo.js';
import { WebhookDeliverySchema, WebhookSchema } from './webhooks.entities.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 8 });
});
afterAll(() => orm?.close());

async function endpointWith(storeId: string, queued: number, dueAt: Date): Promise<string> {
  const em = orm.em.fork();
  const now = new Date();
  const hook = em.create(WebhookSchema, {
    id: newId(),
    store: storeId,
    name: 'repo test',
    url: 'http://127.0.0.1:9/hook',
    secretEnc: 'sealed',
    secretPrefix: 'whsec_x',
    events: ['order.created'],
    enabled: true,
    failureCount: 3,
    firstFailureAt: now,
    disabledAt: null,
    lastDeliveredAt: null,
    createdAt: now,
    updatedAt: now,
  });
  for (let n = 0; n < queued; n++) {
    em.create(WebhookDeliverySchema, {
      id: newId(),
      webhook: hook.id,
      storeId,
      eventId: `evt_${newId()}`,
      event: 'order.created',
      attempt: 1,
      status: 'queued',
      dueAt: new Date(dueAt.getTime() + n),
      lockedUntil: null,
      responseCode: null,
      responseBodyPreview: null,
      errorMessage: null,
      durationMs: null,
      createdAt: now,
      updatedAt: now,
    });
  }
  await em.flush();
  return hook.id;
}

const statuses = async (webhookId: string) =>
  (await orm.em.fork().find(WebhookDeliverySchema, { webhook: webhookId })).reduce<Record<string, number>>(
    (all, d) => ({ ...all, [d.status]: (all[d.status] ?? 0) + 1 }),
    {},
  );

describe('claimForEndpoint', () => {
  it('gives concurrent refills of one endpoint disjoint attempts, oldest first, due ones only, and no other endpoint’s', async () => {
    const store = await createStore(orm.em.fork());
    const now = new Date();
    const hook = await endpointWith(store.id, 40, new Date(now.getTime() - 60_000));
    const other = await endpointWith(store.id, 5, new Date(now.getTime() - 60_000));
    const later = await endpointWith(store.id, 5, new Date(now.getTime() + 60_000));
    const lease = new Date(now.getTime() + 60_000);
    const claims = await Promise.all(
      [1, 2, 3].map(() => claimForEndpoint(orm.em, { webhookId: hook, now, lease, limit: 10 })),
    );
    const ids = claims.flat().map((c) => c.id);
    expect(ids).toHaveLength(30);
    expect(new Set(ids).size).toBe(30);
    for (const claim of claims) {
      expect(
        claim.every(
          (c) => c.webhookId === hook && c.lease.getTime() === lease.getTime() && c.url === 'http://127.0.0.1:9/hook',
        ),
      ).toBe(true);
    }
    expect(await statuses(hook)).toEqual({ pending: 30, queued: 10 });
    // The oldest were taken: the ten left are the newest.
    const left = await orm.em
      .fork()
      .find(WebhookDeliverySchema, { webhook: hook, status: 'queued' }, { orderBy: { dueAt: 'asc' } });
    const taken = await orm.em
      .fork()
      .find(WebhookDeliverySchema, { webhook: hook, status: 'pending' }, { orderBy: { dueAt: 'desc' } });
    expect(left[0]!.dueAt.getTime()).toBeGreaterThan(taken[0]!.dueAt.getTime());
    expect(await statuses(other)).toEqual({ queued: 5 });
    expect(await claimForEndpoint(orm.em, { webhookId: later, now, lease, limit: 10 })).toEqual([]);
  });

  it('locks only the rows it takes: a refill inside an open transaction leaves the rest to another', async () => {
    const store = await createStore(orm.em.fork());
    const now = new Date();
    const hook = await endpointWith(store.id, 6, new Date(now.getTime() - 60_000));
    const lease = new Date(now.getTime() + 60_000);
    const release = new Error('roll back');
    let locked!: () => void;
    let finish!: () => void;
    const twoLocked = new Promise<void>((resolve) => (locked = resolve));
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const open = orm.em.fork().transactional(async (tx) => {
      expect(await claimForEndpoint(tx, { webhookId: hook, now, lease, limit: 2 })).toHaveLength(2);
      locked();
      await finished;
      throw release;
    });
    await twoLocked;
    // Another connection, while those two are still locked: it gets the other four, at once.
    const others = await claimForEndpoint(orm.em, { webhookId: hook, now, lease, limit: 10 });
    expect(others).toHaveLength(4);
    finish();
    await expect(open).rejects.toBe(release);
    expect(await statuses(hook)).toEqual({ pending: 4, queued: 2 });
  });
});

describe('recordSuccesses', () => {
  it('writes each success while its lease holds, in one statement, and ends the endpoint’s failure streak', async () => {
    const store = await createStore(orm.em.fork());
    const now = new Date();
    const hook = await endpointWith(store.id, 3, new Date(now.getTime() - 60_000));
    const lease = new Date(now.getTime() + 60_000);
    const claimed = await claimForEndpoint(orm.em, { webhookId: hook, now, lease, limit: 3 });
    const result = (statusCode: number) => ({
      ok: true,
      statusCode,
      bodyPreview: `ok ${statusCode}`,
      errorMessage: null,
      durationMs: 7,
      retryAfterMs: null,
      // Headers as sent, with a value that needs quoting in an array literal.
      requestHeaders: { 'x-service-delivery-id': `d-${statusCode}`, 'x-note': 'a "quoted", {braced} \\ value' },
    });
    const written = await recordSuccesses(
      orm.em,
      [
        { id: claimed[0]!.id, webhookId: hook, lease, result: result(200), at: now },
        { id: claimed[1]!.id, webhookId: hook, lease, result: result(204), at: now },
        // Its claim was taken over (another lease): nothing is written.
        { id: claimed[2]!.id, webhookId: hook, lease: new Date(lease.getTime() + 1), result: result(200), at: now },
      ],
      now,
    );
    expect([...written].sort()).toEqual([claimed[0]!.id, claimed[1]!.id].sort());
    const rows = await orm.em.fork().find(WebhookDeliverySchema, { webhook: hook }, { orderBy: { dueAt: 'asc' } });
    expect(rows.map((r) => [r.status, r.responseCode, r.responseBodyPreview, r.durationMs, r.lockedUntil])).toEqual([
      ['success', 200, 'ok 200', 7, null],
      ['success', 204, 'ok 204', 7, null],
      ['pending', null, null, null, lease],
    ]);
    // The headers each attempt went out with are kept as they were sent.
    expect(rows.map((r) => r.requestHeaders)).toEqual([result(200).requestHeaders, result(204).requestHeaders, null]);
    const endpoint = await orm.em.fork().findOneOrFail(WebhookSchema, { id: hook });
    expect([endpoint.failureCount, endpoint.firstFailureAt, endpoint.lastDeliveredAt?.getTime()]).toEqual([
      0,
      null,
      now.getTime(),
    ]);
    expect(await recordSuccesses(orm.em, [], now)).toEqual(new Set());
  });
});
