import { TRPCError } from '@trpc/server';
import { ERROR_STATUS } from '@svc/schemas';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AppError, toPublicError } from './errors.js';

describe('toPublicError', () => {
  it('keeps an AppError as it is, with the status of its code', () => {
    for (const code of Object.keys(ERROR_STATUS) as (keyof typeof ERROR_STATUS)[]) {
      const error = new AppError(code, 'said');
      expect(toPublicError(error)).toMatchObject({ code, status: ERROR_STATUS[code], message: 'said', internal: false });
      // tRPC's own status for the error must agree with ours, or /trpc and REST would differ.
      expect(error.status).toBe(ERROR_STATUS[code]);
    }
  });

  it('hides the message of anything that is not ours', () => {
    const pub = toPublicError(new Error('duplicate key value violates unique constraint "user_email_unique"'));
    expect(pub).toEqual({ code: 'internal_error', status: 500, message: 'Internal server error.', internal: true });
    const wrapped = toPublicError(new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: 'SELECT 1', cause: new Error('x') }));
    expect(wrapped.message).toBe('Internal server error.');
  });

  it('maps an unreachable database to 503 and a unique violation to 409', () => {
    expect(toPublicError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))).toMatchObject({
      code: 'service_unavailable',
      status: 503,
    });
    const unique = Object.assign(new Error('duplicate key'), { name: 'UniqueConstraintViolationException' });
    expect(toPublicError(unique)).toMatchObject({ code: 'conflict', status: 409 });
  });

  it('reports zod input issues with their paths', () => {
    const result = z.strictObject({ a: z.number() }).safeParse({ a: 'x', b: 1 });
    const pub = toPublicError(new TRPCError({ code: 'BAD_REQUEST', cause: result.error }));
    expect(pub.code).toBe('validation_failed');
    expect(pub.issues?.map((issue) => issue.path).sort()).toEqual(['a', 'b']);
  });
});
