/** License API: the instances (installations) a sold license key has activated. */
import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { LicenseKeySchema } from '../catalog/catalog.entities.js';

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
