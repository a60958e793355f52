/**
 * Deleting a store's test data (test mode: docs/architecture.md): the merchant API's routes (a test key)
 * and the dashboard's twins (manageSettings, whatever mode the dashboard shows). 202 with the job;
 * its status is read by id.
 */
import { ZStoreIdInput, ZTestDataJob, ZTestDataJobInput } from '@svc/schemas';
import { merchantProcedure, router, storeProcedure } from '../../trpc/procedures.js';
import { getTestDataWipe, requestTestDataWipe, requireTestMode } from '../../modules/test-data/test-data.service.js';

const MERCHANT = '/merchant/v1/stores/{storeId}/test-data';
const DASHBOARD = '/dashboard/stores/{storeId}/test-data';
const merchantTags = ['merchant: test data'];
const dashboardTags = ['dashboard'];

export const testDataRouter = router({
  merchantDelete: merchantProcedure('product:write')
    .meta({
      openapi: {
        method: 'DELETE',
        path: MERCHANT,
        tags: merchantTags,
        summary: 'Delete every test-mode object of the store, in the background (a test key)',
        description:
          'Queues a job that deletes the store’s test products, orders, customers, licenses, events, webhook endpoints and their deliveries, tickets, coupons, blacklist entries and files, and nothing live. Answers 202 with the job; while one waits or runs, asking again answers that one. A live key is 403 `test_key_required`.',
      },
      successStatus: 202,
      errors: ['test_key_required'],
    })
    .input(ZStoreIdInput)
    .output(ZTestDataJob)
    .mutation(({ ctx, input }) => {
      requireTestMode(ctx);
      return requestTestDataWipe(ctx, input, `api_key:${ctx.credential.keyId}`);
    }),

  merchantGet: merchantProcedure('product:read')
    .meta({
      openapi: {
        method: 'GET',
        path: `${MERCHANT}/{jobId}`,
        tags: merchantTags,
        summary: 'A test data deletion job: its status and what it has deleted (a test key)',
      },
      errors: ['test_key_required', 'not_found'],
    })
    .input(ZTestDataJobInput)
    .output(ZTestDataJob)
    .query(({ ctx, input }) => {
      requireTestMode(ctx);
      return getTestDataWipe(ctx, input);
    }),

  dashboardDelete: storeProcedure('manageSettings')
    .meta({
      openapi: {
        method: 'DELETE',
        path: DASHBOARD,
        tags: dashboardTags,
        summary: 'Delete every test-mode object of the store, in the background',
      },
      successStatus: 202,
      errors: [],
    })
    .input(ZStoreIdInput)
    .output(ZTestDataJob)
    .mutation(({ ctx, input }) => requestTestDataWipe(ctx, input, `user:${ctx.user.id}`)),

  dashboardGet: storeProcedure('manageSettings')
    .meta({
      openapi: {
        method: 'GET',
        path: `${DASHBOARD}/{jobId}`,
        tags: dashboardTags,
        summary: 'A test data deletion job: its status and what it has deleted',
      },
      errors: ['not_found'],
    })
    .input(ZTestDataJobInput)
    .output(ZTestDataJob)
    .query(({ ctx, input }) => getTestDataWipe(ctx, input)),
});
