import { ERROR_STATUS } from '@svc/schemas';
import { describe, expect, it } from 'vitest';
import { AppError, logUnshown, toPublicError } from './errors.js';

describe('toPublicError', () => {
  it('keeps an AppError as it is, with the status of its code', () => {
    for (const code of Object.keys(ERROR_STATUS) as (keyof typeof ERROR_STATUS)[]) {
      const error = new AppError(code, 'said');
      expect(toPublicError(error)).toMatchObject({
        code,
        status: ERROR_STATUS[code],
        message: 'said',
        internal: false,
      });
      expect(error.status).toBe(ERROR_STATUS[code]);
      // A plain Error: tRPC's knowledge stays in trpc/errors.ts.
      expect(Object.getPrototypeOf(AppError.prototype)).toBe(Error.prototype);
    }
  });

  it('hides the message of anything that is not ours', () => {
    const pub = toPublicError(new Error('duplicate key value violates unique constraint "user_email_unique"'));
    expect(pub).toEqual({ code: 'internal_error', status: 500, message: 'Internal server error.', internal: true });
  });

  it('maps an unreachable database to 503 and a unique violation to 409', () => {
    expect(
      toPublicError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })),
    ).toMatchObject({
      code: 'service_unavailable',
      status: 503,
    });
    // A crash under a running query: node-postgres says so without a code, MikroORM appends it to the SQL.
    const lost = Object.assign(new Error('select pg_sleep(5) - Connection terminated unexpectedly'), {
      name: 'DriverException',
    });
    expect(toPublicError(lost)).toMatchObject({ code: 'service_unavailable', status: 503 });
    expect(
      toPublicError(Object.assign(new Error('Knex: Timeout acquiring a connection.'), { name: 'KnexTimeoutError' })),
    ).toMatchObject({ status: 503 });
    // The next statement of a transaction whose connection died under it.
    const completed = Object.assign(
      new Error('Transaction query already complete, run with DEBUG=knex:tx for more info'),
      { name: 'DriverException' },
    );
    expect(toPublicError(completed)).toMatchObject({ code: 'service_unavailable', status: 503 });
    // Only at the end, where the driver's text is: not somewhere inside the SQL.
    expect(toPublicError(new Error("select 'Connection terminated unexpectedly' - boom")).status).toBe(500);
    const unique = Object.assign(new Error('duplicate key'), { name: 'UniqueConstraintViolationException' });
    expect(toPublicError(unique)).toMatchObject({ code: 'conflict', status: 409 });
  });

  it('maps a foreign-key violation to 409 as a unique one, by name or by SQLSTATE under any wrapper', () => {
    const foreign = Object.assign(new Error('insert into "x" ... - violates foreign key constraint'), {
      name: 'ForeignKeyConstraintViolationException',
    });
    expect(toPublicError(foreign)).toMatchObject({ code: 'conflict', status: 409 });
    const raw = Object.assign(new Error('duplicate key'), { code: '23505', severity: 'ERROR' });
    expect(toPublicError(new Error('wrapped', { cause: raw }))).toMatchObject({ status: 409 });
    // A check constraint is no race: still a 500.
    expect(toPublicError(Object.assign(new Error('check'), { code: '23514', severity: 'ERROR' })).status).toBe(500);
  });
});

describe('logUnshown', () => {
  /** A unique violation as MikroORM throws it: the statement with its values, PostgreSQL's fields copied on. */
  const slugTaken = () =>
    Object.assign(
      new Error(
        `insert into "product" ("name", "delivery_instructions") values ('Course', 'PAID-CONTENT') - duplicate key value violates unique constraint "product_store_slug_unique"`,
      ),
      {
        name: 'UniqueConstraintViolationException',
        code: '23505',
        severity: 'ERROR',
        detail: 'Key (store_id, livemode, slug)=(s1, t, course) already exists.',
        constraint: 'product_store_slug_unique',
        table: 'product',
        schema: 'public',
        routine: '_bt_check_unique',
      },
    );

  function recorder() {
    const lines: Array<{ level: string; fields: object; message: string }> = [];
    return {
      lines,
      log: {
        warn: (fields: object, message: string) => lines.push({ level: 'warn', fields, message }),
        error: (fields: object, message: string) => lines.push({ level: 'error', fields, message }),
      },
    };
  }

  it('logs a conflict as a warning naming its constraint and table, and nothing of the statement', () => {
    const { log, lines } = recorder();
    const error = slugTaken();
    logUnshown(log, error, toPublicError(error), { path: 'products.create' }, 'procedure failed');
    expect(lines).toEqual([
      {
        level: 'warn',
        message: 'conflict: the database refused the change',
        fields: {
          path: 'products.create',
          database: {
            sqlState: '23505',
            type: 'UniqueConstraintViolationException',
            constraint: 'product_store_slug_unique',
            table: 'product',
            routine: '_bt_check_unique',
          },
        },
      },
    ]);
    expect(JSON.stringify(lines)).not.toMatch(/PAID-CONTENT|course|insert into/);
  });

  it('logs what was shown to the client not at all, and anything else as an error with the error', () => {
    const { log, lines } = recorder();
    logUnshown(log, new AppError('not_found'), toPublicError(new AppError('not_found')), {}, 'failed');
    expect(lines).toEqual([]);
    const boom = new Error('boom');
    logUnshown(log, boom, toPublicError(boom), { path: 'x' }, 'procedure failed');
    expect(lines).toEqual([{ level: 'error', message: 'procedure failed', fields: { path: 'x', err: boom } }]);
  });
});
