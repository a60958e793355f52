import {
  ZBlacklistEntry,
  ZBlacklistEntryIdInput,
  ZBlacklistEntryList,
  ZClientGate,
  ZClientGateInput,
  ZCreateBlacklistEntryInput,
  ZStoreIdInput,
} from '@svc/schemas';
import { z } from 'zod';
import { buyerCountry } from '../../lib/geo.js';
import { publicProcedure, router, storeProcedure } from '../../trpc/procedures.js';
import {
  addBlacklistEntry,
  clientGate,
  listBlacklist,
  removeBlacklistEntry,
} from '../../modules/blacklist/blacklist.service.js';

const dashboard = ['dashboard: blacklist'];
const base = '/dashboard/stores/{storeId}/blacklist';

export const blacklistRouter = router({
  add: storeProcedure('manageSettings')
    .meta({
      openapi: {
        method: 'POST',
        path: base,
        tags: dashboard,
        summary: 'Refuse orders from an e-mail, IP address or country',
      },
      successStatus: 201,
      errors: ['conflict'],
    })
    .input(ZCreateBlacklistEntryInput)
    .output(ZBlacklistEntry)
    .mutation(({ ctx, input }) => addBlacklistEntry(ctx, input)),

  list: storeProcedure('manageSettings')
    .meta({ openapi: { method: 'GET', path: base, tags: dashboard, summary: "The store's blacklist" }, errors: [] })
    .input(ZStoreIdInput)
    .output(ZBlacklistEntryList)
    .query(async ({ ctx, input }) => ({ entries: await listBlacklist(ctx, input) })),

  remove: storeProcedure('manageSettings')
    .meta({
      openapi: { method: 'DELETE', path: `${base}/{entryId}`, tags: dashboard, summary: 'Remove a blacklist entry' },
      successStatus: 204,
      errors: ['not_found'],
    })
    .input(ZBlacklistEntryIdInput)
    .output(z.void())
    .mutation(({ ctx, input }) => removeBlacklistEntry(ctx, input)),

  clientGate: publicProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/checkout/client-gate',
        tags: ['buyer'],
        summary: 'Whether the store takes orders from this buyer (e-mail, IP, country)',
      },
      rateLimit: { name: 'checkout.client-gate', max: 30, windowMs: 60_000 },
      errors: ['not_found', 'store_banned'],
    })
    .input(ZClientGateInput)
    .output(ZClientGate)
    .mutation(({ ctx, input }) => clientGate(ctx, input, { ip: ctx.caller.ip, country: buyerCountry(ctx.caller) })),
});
