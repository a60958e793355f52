import { ZApiKeyIdInput, ZApiKeyList, ZCreateApiKeyInput, ZCreatedApiKey } from '@svc/schemas';
import { z } from 'zod';
import { router, sessionProcedure } from '../../trpc/procedures.js';
import { createApiKey, listApiKeys, revokeApiKey } from '../../modules/api-keys/api-keys.service.js';

const tags = ['dashboard'];

export const apiKeysRouter = router({
  create: sessionProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/dashboard/api-keys',
        tags,
        summary: 'Create a merchant API key (the key is shown once)',
      },
      successStatus: 201,
      errors: ['store_forbidden', 'two_factor_enrolment_required'],
    })
    .input(ZCreateApiKeyInput)
    .output(ZCreatedApiKey)
    .mutation(({ ctx, input }) => createApiKey(ctx, ctx.user, input)),

  list: sessionProcedure
    .meta({
      openapi: { method: 'GET', path: '/dashboard/api-keys', tags, summary: 'Your API keys (prefixes only)' },
      errors: [],
    })
    .input(z.strictObject({}).optional())
    .output(ZApiKeyList)
    .query(async ({ ctx }) => ({ apiKeys: await listApiKeys(ctx, ctx.user) })),

  revoke: sessionProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/dashboard/api-keys/{keyId}',
        tags,
        summary: 'Revoke an API key; it stops working on the next request',
      },
      successStatus: 204,
      errors: ['not_found'],
    })
    .input(ZApiKeyIdInput)
    .output(z.void())
    .mutation(({ ctx, input }) => revokeApiKey(ctx, ctx.user, input.keyId)),
});
