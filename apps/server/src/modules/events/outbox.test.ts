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
import type { EntityManager } from '@mikro-orm/postgresql';
import { contextOn } from '../../../../../test/support/in-process.js';
import { openOrm, type Orm } from '../../db/orm.js';
import { preparedRows } from '../../db/prepared.js';
import { inTransaction } from '../request/transaction.js';
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
/** How many of `ids` the transaction `em` is in sees in the event table. */
const countIn = async (em: EntityManager, ids: string[]) =>
  Number((await preparedRows<{ n: string }>(em, 'select count(*) as n from event where id = any(?)', [ids]))[0]!.n);
/** Calls `seen` with each statement the transaction `em` is in sends from now on (its connection's). */
function onStatement(em: EntityManager, seen: (sql: string) => void): void {
  const trx = em.getTransactionContext<{
    client: { acquireConnection(): Promise<{ query: (...args: unknown[]) => unknown }> };
  }>()!;
  void trx.client.acquireConnection().then((connection) => {
    const query = connection.query.bind(connection);
    connection.query = (...args: unknown[]) => {
      const first = args[0] as string | { text: string };
      seen(typeof first === 'string' ? first : first.text);
      return query(...args);
    };
  });
}
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

  it("in a transaction inTransaction opened: the transaction's events are one statement just before it commits, in the order recorded", async () => {
    const store = await createStore(orm.em.fork());
    const before = wakes;
    const statements: string[] = [];
    const ctx = contextOn(orm.em.fork());
    const ids = await inTransaction(ctx, async (tx) => {
      const recorded = [];
      for (let i = 0; i < 3; i++) recorded.push(await recordEvent(tx, event(store.id)));
      // Nothing is written yet: a joined transaction's flush does not write them either.
      await inTransaction(tx, async () => {});
      expect(await countIn(tx.em, recorded)).toBe(0);
      onStatement(tx.em, (sql) => statements.push(sql));
      return recorded;
    });
    expect(statements.filter((sql) => /insert into event/i.test(sql))).toHaveLength(1);
    expect(wakes).toBe(before + 1);
    const rows = await preparedRows<{ id: string }>(
      orm.em.fork(),
      'select id from event where id = any(?) order by seq',
      [ids],
    );
    expect(rows.map((row) => row.id)).toEqual(ids);
  });

  it('in a transaction inTransaction opened that rolls back: none of its events is written, and the next transaction writes only its own', async () => {
    const store = await createStore(orm.em.fork());
    let dropped: string[] = [];
    await expect(
      inTransaction(contextOn(orm.em.fork()), async (tx) => {
        dropped = [await recordEvent(tx, event(store.id)), await recordEvent(tx, event(store.id))];
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    const kept = await inTransaction(contextOn(orm.em.fork()), (tx) => recordEvent(tx, event(store.id)));
    for (const id of dropped) expect(await exists(id)).toBe(false);
    expect(await exists(kept)).toBe(true);
    expect(await orm.em.fork().count(EventSchema, { store: store.id })).toBe(1);
  });

  it('in a savepoint inside a transaction inTransaction opened: the event rolls back with the savepoint', async () => {
    const store = await createStore(orm.em.fork());
    let inSavepoint = '';
    const kept = await inTransaction(contextOn(orm.em.fork()), async (tx) => {
      await expect(
        tx.em.transactional(async (inner) => {
          inSavepoint = await recordEvent({ em: inner }, event(store.id));
          throw new Error('roll back the savepoint');
        }),
      ).rejects.toThrow('roll back the savepoint');
      return recordEvent(tx, event(store.id));
    });
    expect(await exists(inSavepoint)).toBe(false);
    expect(await exists(kept)).toBe(true);
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
