/** License API: the instances (installations) a sold license key has activated. */
import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { LicenseKeySchema } from '../catalog/catalog.entities.js';
import { StoreSchema } from '../stores/stores.entities.js';

export const LicenseInstanceSchema = defineEntity({
  name: 'LicenseInstance',
  tableName: 'license_instance',
  // One instance per name and license: activating a name twice finds the first (and a race cannot add two).
  uniques: [{ name: 'license_instance_key_name_unique', properties: ['licenseKey', 'name'] }],
  properties: (p) => ({
    id: p.string().primary().length(32),
    licenseKey: p
      .manyToOne(LicenseKeySchema)
      .ref()
      .foreignKeyName('license_instance_license_key_id_fkey')
      .updateRule('no action')
      .deleteRule('cascade'),
    /** Its license key's mode. */
    livemode: p.boolean().default(true),
    name: p.string().length(200),
    createdAt: p.datetime(),
  }),
});
export type LicenseInstance = InferEntity<typeof LicenseInstanceSchema>;

/**
 * A store's Ed25519 key for one mode, signing offline license leases (lease.ts). The id is the
 * key's `kid`. The private key is sealed at rest (lib/crypto.ts seal); the public key is the raw
 * 32 bytes, base64url, as a JWK's `x`. One current key per store and mode (retired_at null); a
 * retired key stays published in the store's JWKS until `publishedUntil`, when no lease it signed
 * can still be unexpired.
 */
export const LicenseSigningKeySchema = defineEntity({
  name: 'LicenseSigningKey',
  tableName: 'license_signing_key',
  indexes: [
    // The one current key of a store and mode (a race making two on first use leaves one).
    {
      name: 'license_signing_key_current_unique',
      expression:
        'create unique index "license_signing_key_current_unique" on "license_signing_key" ("store_id", "livemode") where "retired_at" is null',
    },
    // The store's JWKS: its keys still published.
    { name: 'license_signing_key_store_index', properties: ['store', 'createdAt'] },
  ],
  properties: (p) => ({
    id: p.string().primary().length(32),
    store: p.manyToOne(StoreSchema).ref().foreignKeyName('license_signing_key_store_id_fkey').updateRule('no action'),
    livemode: p.boolean(),
    /** The raw public key, base64url (a JWK's `x`). */
    publicKey: p.string().length(64),
    /** The PKCS#8 private key (DER, base64), sealed. */
    privateKeySealed: p.text(),
    createdAt: p.datetime(),
    retiredAt: p.datetime().nullable(),
    /** Published in the JWKS until then; null while current. */
    publishedUntil: p.datetime().nullable(),
  }),
});
export type LicenseSigningKey = InferEntity<typeof LicenseSigningKeySchema>;
