/** Test mode (docs/architecture.md, Test mode): the job that deletes a store's test data. */
import { z } from 'zod';
import { ZCount, ZId, ZTimestamp } from './common.js';

export const TEST_DATA_WIPE_STATUSES = ['queued', 'running', 'succeeded', 'failed'] as const;
export const ZTestDataWipeStatus = z.enum(TEST_DATA_WIPE_STATUSES);

export const ZTestDataJobInput = z.strictObject({ storeId: ZId, jobId: ZId });

/** A wipe of a store's test data: its status and what it has deleted so far, table by table. */
export const ZTestDataJob = z.object({
  id: z.string(),
  storeId: z.string(),
  /** `queued` until a worker takes it, `running`, then `succeeded` or `failed`. */
  status: ZTestDataWipeStatus,
  /** Rows deleted so far, by table (`order`, `event`, `webhook_delivery`, ...); tables with none are left out. */
  deleted: z.record(z.string(), ZCount).meta({ description: 'Rows deleted so far, by table' }),
  /** Why it failed; null otherwise. */
  error: z.string().nullable(),
  createdAt: ZTimestamp,
  startedAt: ZTimestamp.nullable(),
  finishedAt: ZTimestamp.nullable(),
});
export type TTestDataJob = z.infer<typeof ZTestDataJob>;
