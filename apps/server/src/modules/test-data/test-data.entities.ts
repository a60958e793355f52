/**
 * Test mode (docs/architecture.md, Test mode): a job that deletes a store's test data. Requested by the merchant API
 * or the dashboard, run in the background by `svc serve` (test-data.runner.ts).
 */
import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { TEST_DATA_WIPE_STATUSES } from '@svc/schemas';
import { StoreSchema } from '../stores/stores.entities.js';

export const TestDataWipeSchema = defineEntity({
  name: 'TestDataWipe',
  tableName: 'test_data_wipe',
  indexes: [
    // At most one wipe of a store waits or runs at a time: asking again answers that one.
    {
      name: 'test_data_wipe_store_active_unique',
      expression: `create unique index "test_data_wipe_store_active_unique" on "test_data_wipe" ("store_id") where "status" in ('queued', 'running')`,
    },
    // Claims: the waiting wipes, and those whose runner's lease ran out.
    {
      name: 'test_data_wipe_active_index',
      expression: `create index "test_data_wipe_active_index" on "test_data_wipe" ("created_at") where "status" in ('queued', 'running')`,
    },
  ],
  properties: (p) => ({
    id: p.string().primary().length(32),
    store: p
      .manyToOne(StoreSchema)
      .ref()
      .foreignKeyName('test_data_wipe_store_id_fkey')
      .updateRule('no action')
      .deleteRule('cascade'),
    status: p.enum([...TEST_DATA_WIPE_STATUSES]).default('queued'),
    /** Who asked: `user:<id>` (the dashboard) or `api_key:<id>` (the merchant API). */
    requestedBy: p.string().length(64),
    /** Rows deleted so far, by table; each batch adds its count in the batch's own transaction. */
    deleted: p.json<Record<string, number>>().default('{}'),
    error: p.string().length(500).nullable(),
    /** A runner's lease while `running`: past it the runner died, and another takes the wipe over. */
    lockedUntil: p.datetime().nullable(),
    createdAt: p.datetime(),
    startedAt: p.datetime().nullable(),
    finishedAt: p.datetime().nullable(),
  }),
});
export type TestDataWipe = InferEntity<typeof TestDataWipeSchema>;
