/**
 * Idempotency-Key claims of the order-creating routes: one row per (procedure, store as given,
 * SHA-256 of the key), claimed before the procedure runs and holding its answer once it succeeded.
 * Kept 24 h (the prune-idempotency-keys job).
 */
import { defineEntity, type InferEntity } from '@mikro-orm/core';

export const IdempotencyKeySchema = defineEntity({
  name: 'IdempotencyKey',
  tableName: 'idempotency_key',
  indexes: [{ name: 'idempotency_key_created_index', properties: ['createdAt'] }],
  properties: (p) => ({
    path: p.string().primary().length(200),
    scope: p.text().primary(),
    keyHash: p.string().primary().columnType('char(64)'),
    bodyHash: p.string().columnType('char(64)'),
    /** The claim's own random token: only the request holding it may answer or release it. */
    claim: p.string().length(64),
    status: p.integer().nullable(),
    response: p.text().nullable(),
    createdAt: p.datetime(),
    claimedAt: p.datetime(),
    completedAt: p.datetime().nullable(),
  }),
});
export type IdempotencyKey = InferEntity<typeof IdempotencyKeySchema>;
