import { ERROR_STATUS } from '@svc/schemas';
import { describe, expect, it } from 'vitest';
import { AppError, toPublicError } from './errors.js';

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
});
