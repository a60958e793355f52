import {
  ZAddMemberInput,
  ZCreateStoreInput,
  ZMember,
  ZMemberIdInput,
  ZMemberList,
  ZMerchantStore,
  ZMerchantUpdateStoreInput,
  ZStore,
  ZStoreIdInput,
  ZStoreList,
  ZStoreOnboarding,
  ZStoreLookupInput,
  ZStorePreview,
  ZStorePublic,
  ZSetRequireTwoFactorInput,
  ZUpdateMemberInput,
  ZUpdateStoreInput,
} from '@svc/schemas';
import { z } from 'zod';
import { merchantProcedure, publicProcedure, router, sessionProcedure, storeProcedure } from '../../trpc/procedures.js';
import { storePreview } from '../../modules/stores/preview-token.js';
import { storeOnboarding } from '../../flows/store-onboarding.js';
import {
  addMember,
  createStore,
  getMerchantStore,
  getStore,
  listMembers,
  listStores,
  lookupStoreBySubdomain,
  removeMember,
  setRequireTwoFactor,
  updateMember,
  updateMerchantStore,
  updateStore,
} from '../../modules/stores/stores.service.js';

const dashboard = ['dashboard'];
const merchant = ['merchant: store'];
const MERCHANT_STORE = '/merchant/v1/stores/{storeId}';

/** Members and the staff's two-factor policy are the store's owner's only: staff cannot widen their own access. */
const ownerProcedure = storeProcedure(undefined, { ownerOnly: true });

export const storesRouter = router({
  lookup: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/store/{subdomain}',
        tags: ['public'],
        summary: 'Look up a store by its subdomain',
      },
      errors: ['not_found', 'store_banned'],
    })
    .input(ZStoreLookupInput)
    .output(ZStorePublic)
    .query(({ ctx, input }) => lookupStoreBySubdomain(ctx, input)),

  create: sessionProcedure
    .meta({
      openapi: { method: 'POST', path: '/dashboard/stores', tags: dashboard, summary: 'Create a store you own' },
      successStatus: 201,
      errors: ['conflict'],
    })
    .input(ZCreateStoreInput)
    .output(ZStore)
    .mutation(({ ctx, input }) => createStore(ctx, ctx.user, input)),

  list: sessionProcedure
    .meta({
      openapi: { method: 'GET', path: '/dashboard/stores', tags: dashboard, summary: 'Stores you are a member of' },
      errors: [],
    })
    .input(z.strictObject({}).optional())
    .output(ZStoreList)
    .query(async ({ ctx }) => ({ stores: await listStores(ctx, ctx.user) })),

  previewToken: storeProcedure()
    .meta({
      openapi: {
        method: 'GET',
        path: '/dashboard/stores/{storeId}/preview-token',
        tags: dashboard,
        summary:
          "A preview token of the store's test mode, for an hour: the storefront and the theme API show its bearer the store's test products",
      },
      errors: [],
    })
    .input(ZStoreIdInput)
    .output(ZStorePreview)
    .query(({ ctx, input }) => storePreview(ctx, input)),

  get: storeProcedure()
    .meta({
      openapi: { method: 'GET', path: '/dashboard/stores/{storeId}', tags: dashboard, summary: 'One of your stores' },
      errors: [],
    })
    .input(ZStoreIdInput)
    .output(ZStore)
    .query(({ ctx }) => getStore(ctx, ctx.member)),

  /** The Home's setup checklist: five existence reads (flows/store-onboarding.ts), read with Home's figures. */
  onboarding: storeProcedure('viewOrders')
    .meta({
      openapi: {
        method: 'GET',
        path: '/dashboard/stores/{storeId}/onboarding',
        tags: dashboard,
        summary:
          "A new store's setup steps (add a product, choose payment methods, view the store, make a test purchase, create an API key) and whether each is done",
      },
      errors: [],
    })
    .input(ZStoreIdInput)
    .output(ZStoreOnboarding)
    .query(({ ctx, input }) => storeOnboarding(ctx, input)),

  update: storeProcedure('manageSettings')
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/dashboard/stores/{storeId}',
        tags: dashboard,
        summary: 'Rename a store, change its currency or allowed origins',
      },
      errors: [],
    })
    .input(ZUpdateStoreInput)
    .output(ZStore)
    .mutation(({ ctx, input }) => updateStore(ctx, ctx.member, input)),

  merchantGet: merchantProcedure('store:read')
    .meta({
      openapi: {
        method: 'GET',
        path: MERCHANT_STORE,
        tags: merchant,
        summary: 'The store: name, currency, its look (description, accent colour, logo), origins and settings',
      },
      errors: [],
    })
    .input(ZStoreIdInput)
    .output(ZMerchantStore)
    .query(({ ctx, input }) => getMerchantStore(ctx, input)),

  merchantUpdate: merchantProcedure('store:write')
    .meta({
      openapi: {
        method: 'PATCH',
        path: MERCHANT_STORE,
        tags: merchant,
        summary:
          'Rename the store, change its look (description, accent colour; null resets the colour) or its tax (`settings.tax`)',
      },
      errors: [],
    })
    .input(ZMerchantUpdateStoreInput)
    .output(ZMerchantStore)
    .mutation(({ ctx, input }) => updateMerchantStore(ctx, input)),

  members: ownerProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/dashboard/stores/{storeId}/members',
        tags: dashboard,
        summary: 'The owner and staff of a store',
      },
      errors: [],
    })
    .input(ZStoreIdInput)
    .output(ZMemberList)
    .query(async ({ ctx }) => ({ members: await listMembers(ctx, ctx.storeId) })),

  addMember: ownerProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/dashboard/stores/{storeId}/members',
        tags: dashboard,
        summary: 'Add a registered user as staff',
      },
      successStatus: 201,
      errors: ['not_found', 'conflict'],
    })
    .input(ZAddMemberInput)
    .output(ZMember)
    .mutation(({ ctx, input }) => addMember(ctx, ctx.storeId, input)),

  updateMember: ownerProcedure
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/dashboard/stores/{storeId}/members/{memberId}',
        tags: dashboard,
        summary: "Change a staff member's permissions",
      },
      errors: ['not_found', 'conflict'],
    })
    .input(ZUpdateMemberInput)
    .output(ZMember)
    .mutation(({ ctx, input }) => updateMember(ctx, ctx.storeId, input)),

  removeMember: ownerProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/dashboard/stores/{storeId}/members/{memberId}',
        tags: dashboard,
        summary: 'Remove a staff member',
      },
      successStatus: 204,
      errors: ['not_found', 'conflict'],
    })
    .input(ZMemberIdInput)
    .output(z.void())
    .mutation(({ ctx, input }) => removeMember(ctx, ctx.storeId, input.memberId)),

  setRequireTwoFactor: ownerProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/dashboard/stores/{storeId}/require-two-factor',
        tags: dashboard,
        summary:
          'Require two-factor sign-in of every member (owner only; the owner must have it on): members without it are answered two_factor_enrolment_required',
      },
      errors: ['two_factor_enrolment_required'],
    })
    .input(ZSetRequireTwoFactorInput)
    .output(ZStore)
    .mutation(({ ctx, input }) => setRequireTwoFactor(ctx, ctx.member, input)),
});
