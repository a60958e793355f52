/**
 * The License API: three public routes the merchant's software calls with the key as its
 * credential (CORS open, no cookies, limited per client address), and the seller's license
 * resources for the merchant API (Bearer key, license scopes, capped by viewOrders / editOrders)
 * and the dashboard (session with those permissions), each operation declared once for both
 * (storeResource); and the dashboard's search by a whole key.
 */
import {
  ZActivateLicenseInput,
  ZActivateLicenseResult,
  ZDeactivateLicenseInput,
  ZDeactivateLicenseResult,
  ZFindLicensesByKeyInput,
  ZLicenseIdInput,
  ZLicenseInstanceIdInput,
  ZLicenseList,
  ZLicenseMatches,
  ZLicenseSigningKey,
  ZLicenseSigningKeyList,
  ZListLicensesQuery,
  ZMerchantLicense,
  ZStoreIdInput,
  ZValidateLicenseInput,
  ZValidateLicenseResult,
} from '@svc/schemas';
import { z } from 'zod';
import { publicProcedure, router, storeProcedure, storeResource } from '../../trpc/procedures.js';
import {
  activateLicense,
  deactivateLicense,
  disableLicense,
  enableLicense,
  findLicensesByKey,
  getLicense,
  listLicenses,
  removeLicenseInstance,
  validateLicense,
} from '../../modules/licenses/licenses.service.js';
import { listSigningKeys, rotateSigningKey } from '../../modules/licenses/lease.js';

const MINUTE = 60_000;
const software = ['licenses'];

const MERCHANT = '/merchant/v1/stores/{storeId}/licenses';
const tags = ['merchant: licenses'];
const dashboard = { tags: ['dashboard'] };
const one = `${MERCHANT}/{licenseId}` as const;
const SIGNING_KEYS = '/merchant/v1/stores/{storeId}/license-signing-keys';

const read = storeResource({ scope: 'license:read', permission: 'viewOrders' });
const write = storeResource({ scope: 'license:write', permission: 'editOrders' });

export const licensesRouter = router({
  activate: publicProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/v1/licenses/activate',
        tags: software,
        summary: 'Activate an instance of a license (idempotent per instance name)',
      },
      rateLimit: { name: 'licenses.activate', max: 60, windowMs: MINUTE },
      errors: ['not_found', 'activation_limit_reached', 'license_inactive'],
    })
    .input(ZActivateLicenseInput)
    .output(ZActivateLicenseResult)
    .mutation(({ ctx, input }) => activateLicense(ctx, input)),
  validate: publicProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/v1/licenses/validate',
        tags: software,
        summary: 'Whether a license (and an instance of it) is valid now',
      },
      rateLimit: { name: 'licenses.validate', max: 600, windowMs: MINUTE },
      errors: ['not_found'],
    })
    .input(ZValidateLicenseInput)
    .output(ZValidateLicenseResult)
    .mutation(({ ctx, input }) => validateLicense(ctx, input)),
  deactivate: publicProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/v1/licenses/deactivate',
        tags: software,
        summary: 'Deactivate an instance of a license',
      },
      rateLimit: { name: 'licenses.deactivate', max: 60, windowMs: MINUTE },
      errors: ['not_found'],
    })
    .input(ZDeactivateLicenseInput)
    .output(ZDeactivateLicenseResult)
    .mutation(({ ctx, input }) => deactivateLicense(ctx, input)),
  /** The store's keys that sign offline leases (lease.ts), of the caller's mode. */
  signingKeys: read
    .meta({
      openapi: {
        method: 'GET',
        path: SIGNING_KEYS,
        tags,
        summary: "The store's license signing keys of this mode, newest first (the current one has no retiredAt)",
      },
      dashboard,
      errors: [],
    })
    .input(ZStoreIdInput)
    .output(ZLicenseSigningKeyList)
    .query(({ ctx, input }) => listSigningKeys(ctx, input)),
  rotateSigningKey: write
    .meta({
      openapi: {
        method: 'POST',
        path: `${SIGNING_KEYS}/rotate`,
        tags,
        summary:
          'Rotate the signing key of this mode: new leases carry the new kid; the old key stays in the JWKS until every lease it signed has expired',
      },
      dashboard,
      errors: [],
    })
    .input(ZStoreIdInput)
    .output(ZLicenseSigningKey)
    .mutation(({ ctx, input }) => rotateSigningKey(ctx, input)),
  /** The seller's license resources. */
  list: read
    .meta({
      openapi: { method: 'GET', path: MERCHANT, tags, summary: 'List licenses (sold license keys), newest first' },
      dashboard,
      errors: [],
    })
    .input(ZListLicensesQuery)
    .output(ZLicenseList)
    .query(({ ctx, input }) => listLicenses(ctx, input)),
  get: read
    .meta({
      openapi: { method: 'GET', path: one, tags, summary: 'A license with its active instances' },
      dashboard,
      errors: ['not_found'],
    })
    .input(ZLicenseIdInput)
    .output(ZMerchantLicense)
    .query(({ ctx, input }) => getLicense(ctx, input)),
  disable: write
    .meta({
      openapi: {
        method: 'POST',
        path: `${one}/disable`,
        tags,
        summary: 'Disable a license (validate answers disabled)',
      },
      dashboard,
      errors: ['not_found'],
    })
    .input(ZLicenseIdInput)
    .output(ZMerchantLicense)
    .mutation(({ ctx, input }) => disableLicense(ctx, input)),
  enable: write
    .meta({
      openapi: {
        method: 'POST',
        path: `${one}/enable`,
        tags,
        summary: 'Enable a license the seller disabled',
      },
      dashboard,
      errors: ['not_found', 'conflict'],
    })
    .input(ZLicenseIdInput)
    .output(ZMerchantLicense)
    .mutation(({ ctx, input }) => enableLicense(ctx, input)),
  removeInstance: write
    .meta({
      openapi: {
        method: 'DELETE',
        path: `${one}/instances/{instanceId}`,
        tags,
        summary: 'Remove an instance of a license',
      },
      dashboard,
      successStatus: 204,
      errors: ['not_found'],
    })
    .input(ZLicenseInstanceIdInput)
    .output(z.void())
    .mutation(({ ctx, input }) => removeLicenseInstance(ctx, input)),

  /**
   * The dashboard's search by a whole key (issue 29): a POST, so the key travels in a body and is
   * in no URL or access log. Dashboard only, as the webhooks' dashboard-only procedures: an
   * integration that holds a key has the License API's validate.
   */
  dashboardFindByKey: storeProcedure('viewOrders')
    .meta({
      openapi: {
        method: 'POST',
        path: '/dashboard/stores/{storeId}/licenses/search',
        tags: dashboard.tags,
        summary: 'Find the sold keys whose value is the given whole key (shown masked)',
      },
      // A member guessing keys gets no further than the License API's own limit would let anyone.
      rateLimit: { name: 'licenses.findByKey', max: 60, windowMs: MINUTE },
      errors: [],
    })
    .input(ZFindLicensesByKeyInput)
    .output(ZLicenseMatches)
    .mutation(({ ctx, input }) => findLicensesByKey(ctx, input)),
});
