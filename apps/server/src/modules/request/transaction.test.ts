/**
 * The transaction on the context, against the real database: `inTransaction` commits the work,
 * rolls all of it back on a throw, and inside a transaction already joins it (no new transaction,
 * no savepoint), so a flow's services commit or roll back with the flow.
 */
import { LockMode } from '@mikro-orm/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../../test/support/env.js';
import { serviceContext } from '../../../../../test/support/in-process.js';
import { openOrm, type Orm } from '../../db/orm.js';
import { newId } from '../../lib/ids.js';
import { StoreSchema } from '../stores/stores.entities.js';
import type { ServiceContext } from './context.js';
import { inTransaction, lockOnce } from './transaction.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 2 });
});
afterAll(() => orm?.close());

const context = (): ServiceContext => ({ ...serviceContext(orm), em: orm.em.fork() });

/** A store row written through the context's EntityManager (flushed by the transaction). */
function addStore(ctx: ServiceContext): string {
  const id = newId();
  const now = new Date();
  ctx.em.create(StoreSchema, {
    id,
    name: 'Transaction test',
    subdomain: `tx-${id.slice(-12)}`,
    currency: 'USD',
    createdAt: now,
    updatedAt: now,
  });
  return id;
}

const stored = async (id: string) => (await orm.em.fork().count(StoreSchema, { id })) === 1;

/** The backend pid and transaction id the statement runs in (txid_current opens one if needed). */
async function txOf(ctx: ServiceContext): Promise<string> {
  const [row] = await ctx.em
    .getConnection()
    .execute<Array<{ txid: string }>>('select txid_current()::text as txid', [], 'all', ctx.em.getTransactionContext());
  return row!.txid;
}

describe('inTransaction', () => {
  it('runs the work in one transaction on a context of its own and commits it', async () => {
    const ctx = context();
    expect(ctx.em.isInTransaction()).toBe(false);
    const id = await inTransaction(ctx, (tx) => {
      expect(tx.em.isInTransaction()).toBe(true);
      expect(tx.em).not.toBe(ctx.em);
      // The rest of the context is the caller's.
      expect({ ...tx, em: undefined }).toEqual({ ...ctx, em: undefined });
      return Promise.resolve(addStore(tx));
    });
    expect(await stored(id)).toBe(true);
  });

  it('rolls the whole work back when it throws', async () => {
    const ctx = context();
    let id = '';
    await expect(
      inTransaction(ctx, async (tx) => {
        id = addStore(tx);
        await tx.em.flush();
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(id).not.toBe('');
    expect(await stored(id)).toBe(false);
  });

  it('joins the transaction it is already in: the same EntityManager, no savepoint, one commit or rollback', async () => {
    const ctx = context();
    let inner = '';
    let outer = '';
    const outerId = await inTransaction(ctx, async (tx) => {
      outer = await txOf(tx);
      await inTransaction(tx, async (joined) => {
        expect(joined).toBe(tx);
        inner = await txOf(joined);
        addStore(joined);
      });
      return addStore(tx);
    });
    expect(inner).toBe(outer);
    expect(await stored(outerId)).toBe(true);

    // A throw in the joined work rolls back what the outer work did too: there is no savepoint to stop at.
    let kept = '';
    let joinedId = '';
    await expect(
      inTransaction(context(), async (tx) => {
        kept = addStore(tx);
        await tx.em.flush();
        await inTransaction(tx, async (joined) => {
          joinedId = addStore(joined);
          await joined.em.flush();
          throw new Error('inner refused');
        });
      }),
    ).rejects.toThrow('inner refused');
    expect(await stored(kept)).toBe(false);
    expect(await stored(joinedId)).toBe(false);
  });

  it('writes what the joined work changed before the caller goes on, as a nested block would', async () => {
    const ctx = context();
    await inTransaction(ctx, async (tx) => {
      const id = await inTransaction(tx, (joined) => Promise.resolve(addStore(joined)));
      // Flushed at the joined work's end: a plain statement of the same transaction sees the row.
      const [row] = await tx.em
        .getConnection()
        .execute<Array<{ n: string }>>(
          'select count(*)::text as n from store where id = ?',
          [id],
          'all',
          tx.em.getTransactionContext(),
        );
      expect(row!.n).toBe('1');
    });
  });
});

describe('lockOnce', () => {
  it('locks a row once per transaction: the services a flow calls share the locked entity', async () => {
    const id = await inTransaction(context(), (tx) => Promise.resolve(addStore(tx)));
    let locks = 0;
    const lock = (tx: ServiceContext) => () => {
      locks++;
      return tx.em.findOne(StoreSchema, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    };
    await inTransaction(context(), async (tx) => {
      const first = await lockOnce(tx, `store:${id}`, lock(tx));
      // A joined inTransaction (a service the flow calls) is the same transaction: no second lock.
      const again = await inTransaction(tx, (inner) => lockOnce(inner, `store:${id}`, lock(inner)));
      expect(again).toBe(first);
      expect(locks).toBe(1);
    });
    // A new transaction locks it anew.
    await inTransaction(context(), (tx) => lockOnce(tx, `store:${id}`, lock(tx)));
    expect(locks).toBe(2);
    // Outside a transaction nothing is held (and MikroORM refuses a lock there): every call runs its own.
    const outside = context();
    let reads = 0;
    const read = () => {
      reads++;
      return outside.em.findOne(StoreSchema, { id });
    };
    await lockOnce(outside, `store:${id}`, read);
    await lockOnce(outside, `store:${id}`, read);
    expect(reads).toBe(2);
  });

  it('does not remember a row that was not there', async () => {
    let locks = 0;
    await inTransaction(context(), async (tx) => {
      const gone = () => {
        locks++;
        return tx.em.findOne(StoreSchema, { id: 'missing' }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      };
      expect(await lockOnce(tx, 'store:missing', gone)).toBeNull();
      expect(await lockOnce(tx, 'store:missing', gone)).toBeNull();
    });
    expect(locks).toBe(2);
  });
});
