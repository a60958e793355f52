/** The payments module's raw SQL. Everything else goes through the ORM. */
import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Records an inbound notification unless its (gateway, event id) was seen before; returns whether
 * this is the first. INSERT ... ON CONFLICT DO NOTHING: two deliveries of one notification racing
 * each other cannot both be first, and neither waits for an error to find out.
 */
export async function claimNotification(
  em: EntityManager,
  notification: { gateway: string; eventId: string; orderId: string; kind: string; receivedAt: Date },
): Promise<boolean> {
  const fresh: unknown[] = await em.execute(
    `insert into payment_notification (gateway, event_id, order_id, kind, outcome, received_at)
     values (?, ?, ?, ?, 'received', ?) on conflict (gateway, event_id) do nothing returning event_id`,
    [notification.gateway, notification.eventId, notification.orderId, notification.kind, notification.receivedAt],
  );
  return fresh.length === 1;
}
