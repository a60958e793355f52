/**
 * The statements on webhook endpoints (`webhook`) that the ORM cannot say. The endpoints' failure
 * streak and disabling are written with an attempt's outcome (outcomes.repo.ts).
 */
import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Makes a store's webhook creations take turns until the transaction ends, so the per-store
 * limit holds under racing requests. An advisory lock (the ORM has none; no row to lock yet).
 */
export async function lockStoreWebhooks(em: EntityManager, storeId: string): Promise<void> {
  await em.execute('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`webhooks:${storeId}`]);
}
