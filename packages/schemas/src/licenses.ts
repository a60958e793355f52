/**
 * The License API (docs/architecture.md, The faces): the merchant's own software activates, validates and deactivates
 * the license keys it sold, with the key as the credential; and the merchant's view of them.
 */
import { z } from 'zod';
import { ZId, ZSingleLine, ZTimestamp, ZLivemode } from './common.js';
import { queryInt } from './query.js';

/**
 * `inactive`: a subscription's license while its subscription is paused or was never paid
 * (incomplete, incomplete_expired); it is valid again once the subscription is.
 */
export const LICENSE_STATUSES = ['active', 'inactive', 'expired', 'disabled'] as const;
export const ZLicenseStatus = z.enum(LICENSE_STATUSES);
export type TLicenseStatus = z.infer<typeof ZLicenseStatus>;

/**
 * Why a license does not validate, the first that applies: `disabled` (the seller, or a refund),
 * `subscription_inactive` (its subscription is paused or unpaid), `expired` (its validity or its
 * subscription's access ran out, or the subscription was canceled), `instance_not_found`.
 */
export const LICENSE_INVALID_REASONS = ['disabled', 'subscription_inactive', 'expired', 'instance_not_found'] as const;
export const ZLicenseInvalidReason = z.enum(LICENSE_INVALID_REASONS);

/** A license key as the buyer typed it; compared trimmed, as it was stocked. */
const ZLicenseKeyValue = z.string().min(1).max(500);
const ZInstanceName = ZSingleLine(200);

export const ZActivateLicenseInput = z.strictObject({
  productId: ZId,
  key: ZLicenseKeyValue,
  instanceName: ZInstanceName,
});
export const ZValidateLicenseInput = z.strictObject({
  productId: ZId,
  key: ZLicenseKeyValue,
  instanceId: ZId.optional(),
});
export const ZDeactivateLicenseInput = z.strictObject({ productId: ZId, key: ZLicenseKeyValue, instanceId: ZId });
export type TActivateLicenseInput = z.infer<typeof ZActivateLicenseInput>;
export type TValidateLicenseInput = z.infer<typeof ZValidateLicenseInput>;
export type TDeactivateLicenseInput = z.infer<typeof ZDeactivateLicenseInput>;

/** The public view: never the key, no order, e-mail or store data. */
export const ZLicense = z.object({
  id: z.string(),
  productId: z.string(),
  livemode: ZLivemode,
  status: ZLicenseStatus,
  /** Instances one license may have at once; null: unlimited. */
  activationLimit: z.number().int().min(1).max(10_000).nullable(),
  /** Instances active now. */
  activationUsage: z.number().int().min(0).max(1_000_000),
  /**
   * A one-time license: its assignment plus its product's validity days (null: never). A
   * subscription's: when its access ends (the period's end; the grace after a failed renewal; the
   * pause or the end), judged by a test subscription's own clock.
   */
  expiresAt: ZTimestamp.nullable(),
  /** The subscription the license follows; null for a one-time sale. */
  subscriptionId: z.string().nullable(),
  createdAt: ZTimestamp,
});
export type TLicense = z.infer<typeof ZLicense>;

export const ZLicenseInstance = z.object({ id: z.string(), name: z.string(), createdAt: ZTimestamp });
export type TLicenseInstance = z.infer<typeof ZLicenseInstance>;

/**
 * An offline lease: a compact JWS (RFC 7515) signed with the store's Ed25519 key (`alg: EdDSA`,
 * RFC 8037; header `kid`, `typ: svc-lease+jwt`), claims `iss`, `sub` (the license), `productId`,
 * `instanceId`, `livemode`, `status`, `iat`, `exp`. Verified offline against the store's JWKS.
 */
const ZLease = z.string().meta({
  description: "A compact JWS the software keeps and verifies offline against the store's JWKS until its exp",
});

export const ZActivateLicenseResult = z.object({
  activated: z.literal(true),
  license: ZLicense,
  instance: ZLicenseInstance,
  /** The offline lease for this instance. */
  lease: ZLease,
});
export const ZValidateLicenseResult = z.object({
  valid: z.boolean(),
  reason: ZLicenseInvalidReason.nullable(),
  license: ZLicense,
  instance: ZLicenseInstance.nullable(),
  /** The offline lease when valid; null otherwise. */
  lease: ZLease.nullable(),
});

/** A public key of a store's JWKS (RFC 7517, RFC 8037). */
export const ZLeaseJwk = z.object({
  kty: z.literal('OKP'),
  crv: z.literal('Ed25519'),
  x: z.string(),
  kid: z.string(),
  alg: z.literal('EdDSA'),
  use: z.literal('sig'),
});
export const ZLeaseJwks = z.object({ keys: z.array(ZLeaseJwk) });
export type TLeaseJwk = z.infer<typeof ZLeaseJwk>;
export type TLeaseJwks = z.infer<typeof ZLeaseJwks>;

/** A store's signing key as the seller sees it (never the private key). */
export const ZLicenseSigningKey = z.object({
  kid: z.string(),
  livemode: z.boolean(),
  /** The raw public key, base64url (the JWK's `x`). */
  publicKey: z.string(),
  createdAt: ZTimestamp,
  /** When a rotation replaced it; null for the current key. */
  retiredAt: ZTimestamp.nullable(),
  /** Until when the JWKS still publishes it (the longest lease it can have signed); null while current. */
  publishedUntil: ZTimestamp.nullable(),
});
export const ZLicenseSigningKeyList = z.object({ keys: z.array(ZLicenseSigningKey) });
export type TLicenseSigningKey = z.infer<typeof ZLicenseSigningKey>;
export type TLicenseSigningKeyList = z.infer<typeof ZLicenseSigningKeyList>;
export const ZDeactivateLicenseResult = z.object({ deactivated: z.literal(true), license: ZLicense });
export type TActivateLicenseResult = z.infer<typeof ZActivateLicenseResult>;
export type TValidateLicenseResult = z.infer<typeof ZValidateLicenseResult>;
export type TDeactivateLicenseResult = z.infer<typeof ZDeactivateLicenseResult>;

/** The merchant's view (and the `license.*` events' data): the public view and whose it is. */
export const ZMerchantLicense = ZLicense.extend({
  /** ORD-<n> */
  orderId: z.string(),
  /** The buyer's e-mail address; null when the order was placed without one. */
  customerEmail: z.string().nullable(),
  /** Eight dots, then the key's last four characters when it has more than eight: never the key, nor its length. */
  masked: z.string(),
  instances: z.array(ZLicenseInstance),
});
export type TMerchantLicense = z.infer<typeof ZMerchantLicense>;

export const ZListLicensesQuery = z.strictObject({
  storeId: ZId,
  productId: ZId.optional(),
  status: ZLicenseStatus.optional(),
  subscriptionId: ZId.optional().meta({ description: 'The licenses that follow one subscription' }),
  limit: queryInt(z.number().int().min(1).max(100)).optional(),
  cursor: z.string().min(1).max(200).optional(),
});
export type TListLicensesQuery = z.infer<typeof ZListLicensesQuery>;
/**
 * The merchant's search for a sold key by its whole value (what a buyer wrote in with): sent in a
 * POST body, never in a URL, so the key is in no access log, history or cache.
 */
export const ZFindLicensesByKeyInput = z.strictObject({
  storeId: ZId,
  key: ZLicenseKeyValue,
});
export type TFindLicensesByKeyInput = z.infer<typeof ZFindLicensesByKeyInput>;
export const ZLicenseList = z.object({
  licenses: z.array(ZMerchantLicense),
  hasMore: z.boolean(),
  nextCursor: z.string().nullable(),
});
/** The sold keys whose value is the one searched for: at most one per product of the store, newest first. */
export const ZLicenseMatches = z.object({ licenses: z.array(ZMerchantLicense) });
export const ZLicenseIdInput = z.strictObject({ storeId: ZId, licenseId: ZId });
export const ZLicenseInstanceIdInput = z.strictObject({ storeId: ZId, licenseId: ZId, instanceId: ZId });
