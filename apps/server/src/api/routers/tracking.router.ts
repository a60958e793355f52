import { ZTrackInput } from '@svc/schemas';
import { z } from 'zod';
import { publicProcedure, router } from '../../trpc/procedures.js';
import { track } from '../../modules/tracking/tracking.service.js';

export const trackingRouter = router({
  track: publicProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/track',
        tags: ['theme'],
        summary: 'Record a storefront event (no IP address is kept)',
      },
      successStatus: 204,
      rateLimit: { name: 'track', max: 120, windowMs: 60_000 },
      errors: ['not_found', 'store_banned'],
    })
    .input(ZTrackInput)
    .output(z.void())
    .mutation(({ ctx, input }) => track(ctx, input)),
});
