/** The native tRPC endpoint at /trpc, for @svc/sdk and other tRPC clients. */
import type { AnyRouter } from '@trpc/server';
import { fastifyTRPCPlugin } from '@trpc/server/adapters/fastify';
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../deps.js';
import { jsonShapeProblem } from '../lib/input-limits.js';
import { jsonAnswers, logAdapterError } from '../trpc/adapter-options.js';
import { contextFactory } from '../trpc/context.js';
import type { SvcErrorData } from '../trpc/init.js';

/** tRPC's JSON-RPC code for BAD_REQUEST. */
const BAD_REQUEST_JSON_RPC = -32600;

export async function trpcPlugin(app: FastifyInstance, opts: { deps: AppDeps; router: AnyRouter }): Promise<void> {
  // The adapter parses the JSON itself (the body as text, a query's `input`): its shape is checked
  // first, so nesting that would overflow the adapter's stack is a 400 like on REST.
  // The refusal is in tRPC's error shape, as the adapter's own invalid-JSON answer is.
  app.addHook('preHandler', async (request, reply) => {
    const input = (request.query as Record<string, unknown> | undefined)?.input;
    const problem =
      (typeof request.body === 'string' ? jsonShapeProblem(request.body) : undefined) ??
      (typeof input === 'string' ? jsonShapeProblem(input) : undefined);
    if (!problem) return;
    const data: SvcErrorData = { code: 'validation_failed', httpStatus: 400, issues: [{ path: '', message: problem }] };
    return reply
      .code(400)
      .type('application/json')
      .send({ error: { message: 'The request is not valid.', code: BAD_REQUEST_JSON_RPC, data } });
  });
  await app.register(fastifyTRPCPlugin, {
    prefix: '/trpc',
    trpcOptions: {
      router: opts.router,
      createContext: contextFactory(opts.deps),
      onError: logAdapterError,
      responseMeta: jsonAnswers,
      maxBatchSize: opts.deps.config.trpcMaxBatchSize,
      maxBodySize: opts.deps.config.bodyLimitBytes,
    },
  });
}
