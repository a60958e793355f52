import { TRPCError } from '@trpc/server';
import { getHTTPStatusCodeFromError } from '@trpc/server/http';
import { ERROR_STATUS } from '@svc/schemas';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AppError } from '../lib/errors.js';
import { appErrorOf, publicError, toTRPCError } from './errors.js';

describe('our errors as tRPC carries them', () => {
  it('keeps every AppError with the status of its code, and tRPC agrees on the status', () => {
    for (const code of Object.keys(ERROR_STATUS) as (keyof typeof ERROR_STATUS)[]) {
      const error = new AppError(code, 'said');
      const carried = toTRPCError(error);
      expect(appErrorOf(carried)).toBe(error);
      expect(publicError(carried)).toMatchObject({
        code,
        status: ERROR_STATUS[code],
        message: 'said',
        internal: false,
      });
      // tRPC's own status for the error must agree with ours, or /trpc and REST would differ.
      expect(getHTTPStatusCodeFromError(carried)).toBe(ERROR_STATUS[code]);
      // As tRPC wraps a thrown AppError it did not make itself: an internal error whose cause is ours.
      const wrapped = new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause: error });
      expect(publicError(wrapped)).toMatchObject({ code, status: ERROR_STATUS[code], message: 'said' });
    }
  });

  it('hides the message of anything that is not ours', () => {
    const wrapped = publicError(
      new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: 'SELECT 1', cause: new Error('x') }),
    );
    expect(wrapped.message).toBe('Internal server error.');
    expect(wrapped.internal).toBe(true);
  });

  it('reports zod input issues with their paths', () => {
    const result = z.strictObject({ a: z.number() }).safeParse({ a: 'x', b: 1 });
    const pub = publicError(new TRPCError({ code: 'BAD_REQUEST', cause: result.error }));
    expect(pub.code).toBe('validation_failed');
    expect(pub.issues?.map((issue) => issue.path).sort()).toEqual(['a', 'b']);
  });
});
