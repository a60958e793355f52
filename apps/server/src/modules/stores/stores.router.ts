import {
  ZAddMemberInput,
  ZCreateStoreInput,
  ZMember,
  ZMemberIdInput,
  ZMemberList,
  ZStore,
  ZStoreIdInput,
  ZStoreList,
  ZStoreLookupInput,
  ZStorePublic,
  ZUpdateMemberInput,
  ZUpdateStoreInput,
} from '@svc/schemas';
import { z } from 'zod';
import { AppError } from '../../lib/errors.js';
import { sessionProcedure, storeProcedure } from '../../trpc/guards.js';
import { publicProcedure, router } from '../../trpc/procedures.js';
import { addMember, createStore, getStore, listMembers, listStores, lookupStoreBySubdomain, removeMember, updateMember, updateStore } from './stores.service.js';

const dashboard = ['dashboard'];

/** Members are managed by the store's owner only: staff cannot widen their own access. */
const ownerProcedure = storeProcedure().use(({ ctx, next }) => {
  if (ctx.member.role !== 'owner') throw new AppError('permission_missing', 'Only the store owner manages members.');
  return next();
});

export const storesRouter = router({
  lookup: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/store/{subdomain}', tags: ['public'], summary: 'Look up a store by its subdomain', protect: false, errorResponses: [400, 403, 404, 500] } })
    .input(ZStoreLookupInput)
    .output(ZStorePublic)
    .query(({ ctx, input }) => lookupStoreBySubdomain(ctx, input)),

  create: sessionProcedure
    .meta({ openapi: { method: 'POST', path: '/dashboard/stores', tags: dashboard, summary: 'Create a store you own', protect: false }, auth: 'session', successStatus: 201 })
    .input(ZCreateStoreInput)
    .output(ZStore)
    .mutation(({ ctx, input }) => createStore(ctx, ctx.user, input)),

  list: sessionProcedure
    .meta({ openapi: { method: 'GET', path: '/dashboard/stores', tags: dashboard, summary: 'Stores you are a member of', protect: false }, auth: 'session' })
    .input(z.strictObject({}).optional())
    .output(ZStoreList)
    .query(async ({ ctx }) => ({ stores: await listStores(ctx, ctx.user) })),

  get: storeProcedure()
    .meta({ openapi: { method: 'GET', path: '/dashboard/stores/{storeId}', tags: dashboard, summary: 'One of your stores', protect: false }, auth: 'session' })
    .input(ZStoreIdInput)
    .output(ZStore)
    .query(({ ctx }) => getStore(ctx, ctx.member)),

  update: storeProcedure('manageSettings')
    .meta({ openapi: { method: 'PATCH', path: '/dashboard/stores/{storeId}', tags: dashboard, summary: 'Rename a store, change its currency or allowed origins', protect: false }, auth: 'session' })
    .input(ZUpdateStoreInput)
    .output(ZStore)
    .mutation(({ ctx, input }) => updateStore(ctx, ctx.member, input)),

  members: ownerProcedure
    .meta({ openapi: { method: 'GET', path: '/dashboard/stores/{storeId}/members', tags: dashboard, summary: 'The owner and staff of a store', protect: false }, auth: 'session' })
    .input(ZStoreIdInput)
    .output(ZMemberList)
    .query(async ({ ctx }) => ({ members: await listMembers(ctx, ctx.storeId) })),

  addMember: ownerProcedure
    .meta({ openapi: { method: 'POST', path: '/dashboard/stores/{storeId}/members', tags: dashboard, summary: 'Add a registered user as staff', protect: false }, auth: 'session', successStatus: 201 })
    .input(ZAddMemberInput)
    .output(ZMember)
    .mutation(({ ctx, input }) => addMember(ctx, ctx.storeId, input)),

  updateMember: ownerProcedure
    .meta({ openapi: { method: 'PATCH', path: '/dashboard/stores/{storeId}/members/{memberId}', tags: dashboard, summary: "Change a staff member's permissions", protect: false }, auth: 'session' })
    .input(ZUpdateMemberInput)
    .output(ZMember)
    .mutation(({ ctx, input }) => updateMember(ctx, ctx.storeId, input)),

  removeMember: ownerProcedure
    .meta({ openapi: { method: 'DELETE', path: '/dashboard/stores/{storeId}/members/{memberId}', tags: dashboard, summary: 'Remove a staff member', protect: false }, auth: 'session', successStatus: 204 })
    .input(ZMemberIdInput)
    .output(z.void())
    .mutation(({ ctx, input }) => removeMember(ctx, ctx.storeId, input.memberId)),
});
