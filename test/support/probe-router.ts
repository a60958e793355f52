/**
 * Procedures that exist only in tests, mounted through the real pipeline (base
 * middleware, error formatter, both adapters) to exercise what no product route of the
 * foundation needs yet: booleans in bodies, a rate-limited route, 201/204, a crash.
 */
import { queryInt } from '@svc/schemas';
import { z } from 'zod';
import { storesRouter } from '../../apps/server/src/api/routers/stores.router.js';
import { publicProcedure, router } from '../../apps/server/src/trpc/procedures.js';

export const PROBE_LIMIT = { name: 'probe', max: 5, windowMs: 60_000 };

const ZToggle = z.strictObject({ flag: z.boolean(), count: z.number().int().optional() });

export function createProbeRouter() {
  return router({
    stores: storesRouter,
    probe: router({
      toggle: publicProcedure
        .meta({ openapi: { method: 'POST', path: '/probe/toggle' }, errors: [] })
        .input(ZToggle)
        .output(ZToggle)
        .mutation(({ input }) => input),
      page: publicProcedure
        .meta({ openapi: { method: 'GET', path: '/probe/page' }, errors: [] })
        .input(z.strictObject({ limit: queryInt(z.number().int().min(1).max(100)).optional() }))
        .output(z.object({ limit: z.number() }))
        .query(({ input }) => ({ limit: input.limit ?? 50 })),
      touch: publicProcedure
        .meta({ openapi: { method: 'POST', path: '/probe/touch' }, errors: [] })
        .input(z.strictObject({}))
        .output(z.object({ ok: z.boolean() }))
        .mutation(() => ({ ok: true })),
      explode: publicProcedure
        .meta({ openapi: { method: 'POST', path: '/probe/explode' }, errors: [] })
        .input(z.strictObject({}))
        .output(z.object({}))
        .mutation(() => {
          throw new Error('relation "secret_table" does not exist: SELECT password FROM users -- hunter2');
        }),
      badOutput: publicProcedure
        .meta({ openapi: { method: 'GET', path: '/probe/bad-output' }, errors: [] })
        .input(z.strictObject({}))
        .output(z.object({ id: z.string() }))
        .query(() => ({ id: 42, password: 'hunter2' }) as unknown as { id: string }),
      limited: publicProcedure
        .meta({ openapi: { method: 'GET', path: '/probe/limited' }, rateLimit: PROBE_LIMIT, errors: [] })
        .input(z.strictObject({}))
        .output(z.object({ ok: z.boolean() }))
        .query(() => ({ ok: true })),
      create: publicProcedure
        .meta({ openapi: { method: 'POST', path: '/probe/items' }, successStatus: 201, errors: [] })
        .input(z.strictObject({ name: z.string() }))
        .output(z.object({ name: z.string() }))
        .mutation(({ input }) => input),
      remove: publicProcedure
        .meta({ openapi: { method: 'DELETE', path: '/probe/items/{id}' }, successStatus: 204, errors: [] })
        .input(z.strictObject({ id: z.string() }))
        .output(z.void())
        .mutation(() => undefined),
    }),
  });
}
