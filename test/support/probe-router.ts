/**
 * Procedures that exist only in tests, mounted through the real pipeline (base
 * middleware, error formatter, both adapters) to exercise what no product route of the
 * foundation needs yet: booleans in bodies, a rate-limited route, 201/204, a crash, and calls
 * that report how many of their kind were running beside them (a /trpc batch's turns).
 */
import { queryInt } from '@svc/schemas';
import { z } from 'zod';
import { storesRouter } from '../../apps/server/src/api/routers/stores.router.js';
import { publicProcedure, router } from '../../apps/server/src/trpc/procedures.js';

export const PROBE_LIMIT = { name: 'probe', max: 5, windowMs: 60_000 };

const ZToggle = z.strictObject({ flag: z.boolean(), count: z.number().int().optional() });

const ZTurn = z.object({ n: z.number(), order: z.number(), alongside: z.number() });

/**
 * A call that takes a few turns of the event loop and says in which order it began and how many
 * calls of its kind were running when it did: 0 for each call of a batch run one after another.
 */
function turnTaker() {
  let running = 0;
  let started = 0;
  return async (n: number) => {
    const order = started++;
    const alongside = running++;
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    running--;
    return { n, order, alongside };
  };
}

export function createProbeRouter() {
  const writeTurn = turnTaker();
  const readTurn = turnTaker();
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
      turn: publicProcedure
        .meta({ openapi: { method: 'POST', path: '/probe/turn' }, errors: [] })
        .input(z.strictObject({ n: z.number() }))
        .output(ZTurn)
        .mutation(({ input }) => writeTurn(input.n)),
      readTurn: publicProcedure
        .meta({ openapi: { method: 'GET', path: '/probe/turn' }, errors: [] })
        .input(z.strictObject({ n: queryInt(z.number()) }))
        .output(ZTurn)
        .query(({ input }) => readTurn(input.n)),
      remove: publicProcedure
        .meta({ openapi: { method: 'DELETE', path: '/probe/items/{id}' }, successStatus: 204, errors: [] })
        .input(z.strictObject({ id: z.string() }))
        .output(z.void())
        .mutation(() => undefined),
    }),
  });
}
