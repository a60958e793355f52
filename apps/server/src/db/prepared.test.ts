/**
 * Hot-path reads as named prepared statements (db/prepared.ts), against the real database: the
 * rows are those em.execute gives for the same statement, a list goes as one parameter, the
 * statement runs inside the EntityManager's transaction when there is one (it sees the
 * transaction's own uncommitted rows; another connection does not), and a text with values built
 * in would not be a fixed statement.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../test/support/env.js';
import { newId } from '../lib/ids.js';
import { openOrm, type Orm } from './orm.js';
import { numberPlaceholders, preparedRows } from './prepared.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 4 });
});
afterAll(() => orm?.close());

describe('numberPlaceholders', () => {
  it('numbers ? outside quoted literals and identifiers', () => {
    expect(numberPlaceholders(`select '?' as "a?", ? as b, ?::bigint where x = any(?)`)).toBe(
      `select '?' as "a?", $1 as b, $2::bigint where x = any($3)`,
    );
  });
});

describe('preparedRows', () => {
  it('answers what em.execute answers, parameters included, timestamps as text alike', async () => {
    const em = orm.em.fork();
    const sql = `select ?::text as word, ?::int as n, now() - now() as zero, ?::timestamptz as at`;
    const params = ['hello', 42, new Date('2026-01-02T03:04:05.678Z')];
    const prepared = await preparedRows<Record<string, unknown>>(em, sql, params);
    const executed = await em.execute<Array<Record<string, unknown>>>(sql, params);
    expect(prepared).toEqual(executed);
    expect(prepared[0]).toMatchObject({ word: 'hello', n: 42, at: '2026-01-02 03:04:05.678+00' });
    // A ? in a literal is the literal's (em.execute would put a value there).
    expect(await preparedRows(em, `select 'x?' as literal, ? as v`, ['y'])).toEqual([{ literal: 'x?', v: 'y' }]);
    // The same statement again, other values: one prepared statement, new answers.
    expect(await preparedRows(em, sql, ['again', 7, new Date(0)])).toMatchObject([{ word: 'again', n: 7 }]);
  });

  it('takes a list as one parameter (= any(?))', async () => {
    const rows = await preparedRows<{ v: string }>(
      orm.em.fork(),
      `select v from unnest(array['a', 'b', 'c']) as v where v = any(?) order by v`,
      [['c', 'a', 'z']],
    );
    expect(rows.map((row) => row.v)).toEqual(['a', 'c']);
  });

  it('reads inside the EntityManager’s transaction when it is in one', async () => {
    const id = newId();
    const rollback = new Error('roll back');
    await expect(
      orm.em.fork().transactional(async (tx) => {
        await tx.execute(
          `insert into outbound_email (id, "to", subject, text, created_at) values (?, 'a@example.test', 's', 't', now())`,
          [id],
        );
        expect(await preparedRows(tx, 'select id from outbound_email where id = ?', [id])).toEqual([{ id }]);
        // Outside the transaction (another connection of the pool) the row is not there.
        expect(await preparedRows(orm.em.fork(), 'select id from outbound_email where id = ?', [id])).toEqual([]);
        throw rollback;
      }),
    ).rejects.toBe(rollback);
    expect(await preparedRows(orm.em.fork(), 'select id from outbound_email where id = ?', [id])).toEqual([]);
  });
});
