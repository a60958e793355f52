/**
 * `@svc/sdk/licenses`: the license client alone, with the errors its calls throw, for the
 * merchant's own software (desktop, Electron, web) that checks the key its user typed.
 */
export { createLicenseClient } from '../licenses.js';
export type {
  LicenseClient,
  LicenseClientOptions,
  LicenseActivation,
  LicenseValidation,
  LicenseDeactivation,
} from '../licenses.js';
export type { License, LicenseInstance, LicenseStatus } from '../models.js';
export * from './errors.js';
export { verifyLicenseLease, fetchJwks, LeaseInvalidError, LEASE_TYP } from '../license-lease.js';
export type { LeaseClaims, LeaseInvalidReason, LeaseJwk, LeaseJwks, VerifyLeaseOptions } from '../license-lease.js';
