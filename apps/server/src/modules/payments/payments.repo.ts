/** The payments module's raw SQL. Everything else goes through the ORM. */
import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Records an inbound notification unless its (gateway, event id) was seen before; returns whether
 * this is the first. INSERT ... ON CONFLICT DO NOTHING: two deliveries of one notification racing
 * each other cannot both be first, and neither waits for an error to find out.
 */
export async function claimNotification(
  em: EntityManager,
  notification: { gateway: string; eventId: string; orderId: string | null; kind: string; receivedAt: Date },
): Promise<boolean> {
  const fresh: unknown[] = await em.execute(
    `insert into payment_notification (gateway, event_id, order_id, kind, outcome, received_at)
     values (?, ?, ?, ?, 'received', ?) on conflict (gateway, event_id) do nothing returning event_id`,
    [notification.gateway, notification.eventId, notification.orderId, notification.kind, notification.receivedAt],
  );
  return fresh.length === 1;
}

/** A test gateway charge as raw SQL reads it back. */
export interface TestChargeRow {
  id: string;
  method_id: string;
  amount_minor: string;
  currency: string;
  status: 'succeeded' | 'failed' | 'requires_action';
  decline_code: string | null;
}

/**
 * Records the test gateway's charge under its idempotency key, or reads the one a first attempt
 * recorded. INSERT ... ON CONFLICT DO NOTHING, then a read of the winner: two attempts with one key
 * racing each other make one row (the second waits for the first's commit, then finds it), and
 * neither waits for an error to find out.
 */
export async function claimTestCharge(
  em: EntityManager,
  charge: {
    id: string;
    idempotencyKey: string;
    methodId: string;
    livemode: boolean;
    amountMinor: number;
    currency: string;
    status: TestChargeRow['status'];
    declineCode: string | null;
    now: Date;
  },
): Promise<TestChargeRow> {
  const columns = 'id, method_id, amount_minor, currency, status, decline_code';
  const fresh = await em.execute<TestChargeRow[]>(
    `insert into test_gateway_charge
       (id, idempotency_key, method_id, livemode, amount_minor, currency, status, decline_code, created_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict (idempotency_key) do nothing returning ${columns}`,
    [
      charge.id,
      charge.idempotencyKey,
      charge.methodId,
      charge.livemode,
      charge.amountMinor,
      charge.currency,
      charge.status,
      charge.declineCode,
      charge.now,
    ],
  );
  if (fresh[0]) return fresh[0];
  const seen = await em.execute<TestChargeRow[]>(
    `select ${columns} from test_gateway_charge where idempotency_key = ?`,
    [charge.idempotencyKey],
  );
  return seen[0]!;
}
