/** Merchant API keys. Only the SHA-256 of a key is stored; the key is shown once. */
import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { UserSchema } from '../identity/identity.entities.js';

export const ApiKeySchema = defineEntity({
  name: 'ApiKey',
  tableName: 'api_key',
  // Whether a store has any key (the Home's setup checklist): array containment on a GIN index.
  indexes: [
    {
      name: 'api_key_store_ids_index',
      expression: 'create index "api_key_store_ids_index" on "api_key" using gin ("store_ids")',
    },
  ],
  properties: (p) => ({
    id: p.string().primary().length(32),
    user: p
      .manyToOne(UserSchema)
      .ref()
      .foreignKeyName('api_key_user_id_fkey')
      .updateRule('no action')
      .deleteRule('cascade')
      .index(),
    name: p.string().length(100),
    /** The mode the key reads and writes (test mode: docs/architecture.md); keys made before modes are live. */
    mode: p.enum(['live', 'test']).default('live'),
    prefix: p.string().length(16),
    keyHash: p.string().length(64).unique(),
    scopes: p.array(),
    storeIds: p.array(),
    expiresAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
    lastUsedAt: p.datetime().nullable(),
    createdAt: p.datetime(),
  }),
});
export type ApiKey = InferEntity<typeof ApiKeySchema>;
