/**
 * invokeProcedure runs a procedure's middleware chain as tRPC's own caller does: the same layers
 * in the same order, a context each middleware extends, the input and output schemas, `meta`,
 * and a failure anywhere thrown as the TRPCError tRPC would throw.
 */
import { TRPCError, initTRPC, type AnyProcedure } from '@trpc/server';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { invokeProcedure, type CallOptions } from './invoke.js';

const t = initTRPC.context<{ base: string }>().meta<{ tag: string }>().create();
const seen: string[] = [];
const traced = t.procedure
  .meta({ tag: 'traced' })
  .use(async ({ ctx, meta, path, type, next }) => {
    seen.push(`outer ${ctx.base} ${meta?.tag} ${path} ${type}`);
    const result = await next({ ctx: { user: 'u1' } });
    seen.push(`outer after ${result.ok}`);
    return result;
  })
  .use(({ ctx, next }) => next({ ctx: { role: `${ctx.user}:admin` } }));

const router = t.router({
  greet: traced
    .input(z.object({ name: z.string().min(1) }))
    .output(z.object({ text: z.string() }))
    .query(({ ctx, input }) => ({
      text: `${ctx.base} ${ctx.user} ${ctx.role} ${input.name}`,
      extra: 'dropped by the output schema',
    })),
  fail: traced.mutation(() => {
    throw new Error('boom');
  }),
  badOutput: traced.output(z.object({ n: z.number() })).query(() => ({ n: 'not a number' }) as never),
});

const options = (path: string, type: 'query' | 'mutation', input: unknown): CallOptions => ({
  ctx: { base: 'b' },
  path,
  type,
  getRawInput: () => Promise.resolve(input),
  signal: undefined,
  batchIndex: 0,
});

/** The same call through tRPC's own procedure caller, for comparison. */
async function viaTrpc(procedure: AnyProcedure, opts: CallOptions): Promise<unknown> {
  return (procedure as unknown as (opts: CallOptions) => Promise<unknown>)(opts);
}

describe('invokeProcedure', () => {
  it('answers as tRPC’s caller does, through every layer in order', async () => {
    seen.length = 0;
    const ours = await invokeProcedure(
      router._def.procedures.greet as AnyProcedure,
      options('greet', 'query', { name: 'Ann' }),
    );
    const theirs = await viaTrpc(
      router._def.procedures.greet as AnyProcedure,
      options('greet', 'query', { name: 'Ann' }),
    );
    expect(ours).toEqual({ text: 'b u1 u1:admin Ann' });
    expect(theirs).toEqual(ours);
    expect(seen).toEqual([
      'outer b traced greet query',
      'outer after true',
      'outer b traced greet query',
      'outer after true',
    ]);
  });

  it('throws the TRPCError tRPC throws: bad input, a throwing resolver, a bad output', async () => {
    const cases: Array<[string, 'query' | 'mutation', unknown]> = [
      ['greet', 'query', { name: '' }],
      ['fail', 'mutation', undefined],
      ['badOutput', 'query', undefined],
    ];
    for (const [path, type, input] of cases) {
      const procedure = router._def.procedures[path as 'greet'] as AnyProcedure;
      const ours = await invokeProcedure(procedure, options(path, type, input)).catch((error: unknown) => error);
      const theirs = await viaTrpc(procedure, options(path, type, input)).catch((error: unknown) => error);
      expect(ours).toBeInstanceOf(TRPCError);
      expect((ours as TRPCError).code).toBe((theirs as TRPCError).code);
      expect((ours as TRPCError).message).toBe((theirs as TRPCError).message);
    }
  });
});
