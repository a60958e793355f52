/**
 * Subscriptions written straight to a server's database, as checkout will write them: the
 * subscription routes are tested before checkout makes subscriptions. Each row is the module's
 * own new row with its `activate` move applied in a transaction (as the service test does), so
 * its state, period and events are the ones the module writes.
 */
import { openOrm } from '../../apps/server/src/db/orm.js';
import { newId } from '../../apps/server/src/lib/ids.js';
import { inTransaction } from '../../apps/server/src/modules/request/transaction.js';
import { applyMove, newSubscriptionRow } from '../../apps/server/src/modules/subscriptions/subscriptions.service.js';
import { serviceContext } from './in-process.js';

export interface SubscriptionSeed {
  /** The subscription's mode: live unless false (a test-mode subscription). */
  livemode?: boolean;
  productId?: string;
  productName?: string;
  customerEmail?: string;
  unitPriceMinor?: number;
  quantity?: number;
  currency?: string;
  /** Left `incomplete` (no `activate` move) when false. */
  activate?: boolean;
}

/** Inserts active (by default) monthly subscriptions for a store; answers their ids in order. */
export async function insertSubscriptions(
  databaseUrl: string,
  storeId: string,
  seeds: SubscriptionSeed[],
): Promise<string[]> {
  const orm = await openOrm(databaseUrl, { poolMax: 1 });
  try {
    const ids: string[] = [];
    for (const seed of seeds) {
      const ctx = { ...serviceContext(orm), livemode: seed.livemode ?? true };
      const now = ctx.clock.now();
      ids.push(
        await inTransaction(ctx, async (tx) => {
          const row = newSubscriptionRow(
            tx,
            {
              storeId,
              livemode: seed.livemode ?? true,
              productId: seed.productId ?? newId(),
              productName: seed.productName ?? 'Editor Pro',
              planId: newId(),
              interval: 'month',
              intervalCount: 1,
              unitPriceMinor: seed.unitPriceMinor ?? 900,
              quantity: seed.quantity ?? 1,
              discountMinor: 0,
              couponId: null,
              currency: seed.currency ?? 'USD',
              customerEmail: seed.customerEmail ?? 'buyer@example.com',
              paymentMethod: 'test',
              firstOrderId: newId(),
            },
            now,
          );
          if (seed.activate ?? true) await applyMove(tx, row, 'activate', now);
          await tx.em.flush();
          return row.id;
        }),
      );
    }
    return ids;
  } finally {
    await orm.close();
  }
}
