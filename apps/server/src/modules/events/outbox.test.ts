/**
 * The outbox's one writer against the real database: the event is in the change's transaction
 * (it commits and rolls back with it), and the dispatchers' wake-up comes when that transaction
 * commits, never before and never on a rollback, whatever the transaction's shape: none, an ORM
 * transaction, a savepoint nested in one, a raw statement that writes the event beside other rows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../../test/support/env.js';
import { productPayload } from '../../../../../test/support/event-payloads.js';
import { createStore } from '../../../../../test/support/factories.js';
import { openOrm, type Orm } from '../../db/orm.js';
import { EventSchema } from './events.entities.js';
import { afterEventWrite, eventInsert, recordEvent } from './outbox.js';
import { wakeHubFor } from './wake.js';

let orm: Orm;
let wakes = 0;
const listener = () => void wakes++;

beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 2 });
  wakeHubFor(orm).listeners.add(listener);
});
afterAll(async () => {
  wakeHubFor(orm).listeners.delete(listener);
  await orm?.close();
});

const exists = async (id: string) => (await orm.em.fork().count(EventSchema, { id })) === 1;
const event = (storeId: string) => ({
  storeId,
  livemode: true,
  type: 'product.created' as const,
  payload: productPayload(storeId) as Record<string, unknown>,
  at: new Date(),
});

describe('recordEvent', () => {
  it('outside a transaction: writes the event and wakes at once', async () => {
    const store = await createStore(orm.em.fork());
    const before = wakes;
    const id = await recordEvent({ em: orm.em.fork() }, event(store.id));
    expect(id).toMatch(/^evt_[a-z0-9]{24}$/);
    expect(await exists(id)).toBe(true);
    expect(wakes).toBe(before + 1);
  });

  it('in a transaction: wakes when it commits, not before, and never for one rolled back', async () => {
    const store = await createStore(orm.em.fork());
    let before = wakes;
    let written = '';
    await orm.em.fork().transactional(async (em) => {
      written = await recordEvent({ em }, event(store.id));
      expect(wakes).toBe(before);
    });
    expect(wakes).toBe(before + 1);
    expect(await exists(written)).toBe(true);

    before = wakes;
    await expect(
      orm.em.fork().transactional(async (em) => {
        written = await recordEvent({ em }, event(store.id));
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(wakes).toBe(before);
    expect(await exists(written)).toBe(false);
  });

  it('nested in a transaction: wakes when the outer one commits', async () => {
    const store = await createStore(orm.em.fork());
    const before = wakes;
    await orm.em.fork().transactional(async (outer) => {
      await outer.transactional(async (inner) => {
        await recordEvent({ em: inner }, event(store.id));
      });
      // The savepoint is released; the event is not committed yet.
      expect(wakes).toBe(before);
    });
    expect(wakes).toBe(before + 1);
  });

  it('writes an already dispatched event (the test ping) without a wake-up', async () => {
    const store = await createStore(orm.em.fork());
    const before = wakes;
    const id = await recordEvent(
      { em: orm.em.fork() },
      {
        ...event(store.id),
        type: 'webhook.test',
        payload: { webhookId: 'wh1' },
        dispatched: true,
      },
    );
    expect(wakes).toBe(before);
    expect((await orm.em.fork().findOneOrFail(EventSchema, { id })).dispatchedAt).not.toBeNull();
  });
});

describe('eventInsert and afterEventWrite (a raw statement writing the event beside other rows)', () => {
  it('wakes when the statement’s transaction commits', async () => {
    const store = await createStore(orm.em.fork());
    const before = wakes;
    let id = '';
    await orm.em.fork().transactional(async (em) => {
      const insert = eventInsert(event(store.id));
      id = insert.id;
      await em.execute(`with marker as (select 1) ${insert.sql}`, insert.params);
      afterEventWrite({ em });
      expect(wakes).toBe(before);
    });
    expect(wakes).toBe(before + 1);
    expect(await exists(id)).toBe(true);
  });
});

describe('payload schemas (EVENT_PAYLOADS)', () => {
  it('refuses, in every shape, a payload that does not match its event type, and writes nothing', async () => {
    const store = await createStore(orm.em.fork());
    const bad = { ...event(store.id), type: 'order.created' as const, payload: { order: { id: 'o' } } };
    await expect(recordEvent({ em: orm.em.fork() }, bad)).rejects.toThrow(/order\.created payload does not match/);
    expect(() => eventInsert(bad)).toThrow(/order\.created payload does not match/);
    expect(() => eventInsert({ ...event(store.id), payload: productPayload(store.id, { minQuantity: -1 }) })).toThrow(
      /product\.minQuantity/,
    );
    expect(await orm.em.fork().count(EventSchema, { store: store.id })).toBe(0);
  });
});
