import { ZTrackInput } from '@svc/schemas';
import { z } from 'zod';
import { publicProcedure, router } from '../../trpc/procedures.js';
import { track } from './tracking.service.js';

export const trackingRouter = router({
  track: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/track', tags: ['theme'], summary: 'Record a storefront event (no IP address is kept)', protect: false, errorResponses: [400, 403, 404, 500] },
      successStatus: 204,
      rateLimit: { name: 'track', max: 120, windowMs: 60_000 },
    })
    .input(ZTrackInput)
    .output(z.void())
    .mutation(({ ctx, input }) => track(ctx, input)),
});
