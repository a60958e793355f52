/** The native tRPC endpoint at /trpc, for @svc/sdk and other tRPC clients. */
import type { AnyRouter } from '@trpc/server';
import { fastifyTRPCPlugin } from '@trpc/server/adapters/fastify';
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../deps.js';
import { logAdapterError } from '../trpc/adapter-options.js';
import { contextFactory } from '../trpc/context.js';

export async function trpcPlugin(app: FastifyInstance, opts: { deps: AppDeps; router: AnyRouter }): Promise<void> {
  await app.register(fastifyTRPCPlugin, {
    prefix: '/trpc',
    trpcOptions: {
      router: opts.router,
      createContext: contextFactory(opts.deps),
      onError: logAdapterError,
      maxBatchSize: opts.deps.config.trpcMaxBatchSize,
      maxBodySize: opts.deps.config.bodyLimitBytes,
    },
  });
}
