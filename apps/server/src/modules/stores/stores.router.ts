import { ZStoreLookupInput, ZStorePublic } from '@svc/schemas';
import { publicProcedure, router } from '../../trpc/procedures.js';
import { lookupStoreBySubdomain } from './stores.service.js';

export const storesRouter = router({
  lookup: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/store/{subdomain}', tags: ['public'], summary: 'Look up a store by its subdomain', protect: false, errorResponses: [400, 403, 404, 500] } })
    .input(ZStoreLookupInput)
    .output(ZStorePublic)
    .query(({ ctx, input }) => lookupStoreBySubdomain(ctx, input)),
});
