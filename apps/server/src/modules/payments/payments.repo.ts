/** The payments module's raw SQL. Everything else goes through the ORM. */
import type { EntityManager } from '@mikro-orm/postgresql';
import { preparedRows } from '../../db/prepared.js';
import { iso } from '../../lib/timestamps.js';
import type { SavedMethod } from './gateway.js';

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

/**
 * A settled payment (status `paid`). Prepared: every settlement writes one, a renewal's among
 * them, and the ORM would build and inline the INSERT anew each time.
 */
export async function insertPayment(
  em: EntityManager,
  payment: {
    id: string;
    orderId: string;
    gateway: string;
    providerRef: string | null;
    amountMinor: number;
    currency: string;
    now: Date;
  },
): Promise<void> {
  await preparedRows(
    em,
    `insert into payment (id, order_id, gateway, provider_ref, amount_minor, currency, status, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, 'paid', ?, ?)`,
    [
      payment.id,
      payment.orderId,
      payment.gateway,
      payment.providerRef,
      payment.amountMinor,
      payment.currency,
      payment.now,
      payment.now,
    ],
  );
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
  // Hot path (each renewal on a test card): a prepared statement.
  const fresh = await preparedRows<TestChargeRow>(
    em,
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
  const seen = await preparedRows<TestChargeRow>(
    em,
    `select ${columns} from test_gateway_charge where idempotency_key = ?`,
    [charge.idempotencyKey],
  );
  return seen[0]!;
}

const SAVED_METHOD_COLUMNS = `m.id, m.store_id as "storeId", m.livemode, m.gateway, m.customer_ref as "customerRef",
  m.method_ref as "methodRef", m.order_id as "orderId", m.subscription_id as "subscriptionId", m.created_at as "createdAt"`;

/** A row of SAVED_METHOD_COLUMNS (timestamps arrive as text) as a SavedMethod. */
function savedMethod(row: Omit<SavedMethod, 'createdAt'> & { createdAt: string }): SavedMethod {
  return { ...row, createdAt: new Date(iso(row.createdAt)) };
}

/**
 * The payment method a subscription's renewals charge: the newest saved by any of its orders (the
 * join on the order's subscription) or for it from the buyer's page (the partial index on
 * subscription and time); on a tie the page's, the later choice. One statement, each branch one
 * index probe: the renewal's hot path, which needs the references, not an entity.
 */
export async function selectSavedMethodOfSubscription(
  em: EntityManager,
  subscriptionId: string,
): Promise<SavedMethod | undefined> {
  const [method] = await preparedRows<Omit<SavedMethod, 'createdAt'> & { createdAt: string }>(
    em,
    `select id, "storeId", livemode, gateway, "customerRef", "methodRef", "orderId", "subscriptionId", "createdAt" from (
       (select ${SAVED_METHOD_COLUMNS}, 0 as from_page
          from saved_payment_method m join "order" o on o.id = m.order_id
         where o.subscription_id = ? order by m.created_at desc, m.id desc limit 1)
       union all
       (select ${SAVED_METHOD_COLUMNS}, 1 as from_page
          from saved_payment_method m
         where m.subscription_id = ? order by m.created_at desc, m.id desc limit 1)
     ) newest order by "createdAt" desc, from_page desc limit 1`,
    [subscriptionId, subscriptionId],
  );
  return method && savedMethod(method);
}

/** The payment method the order's checkout saved (its unique index). */
export async function selectSavedMethodOfOrder(em: EntityManager, orderId: string): Promise<SavedMethod | undefined> {
  const [method] = await preparedRows<Omit<SavedMethod, 'createdAt'> & { createdAt: string }>(
    em,
    `select ${SAVED_METHOD_COLUMNS} from saved_payment_method m where m.order_id = ?`,
    [orderId],
  );
  return method && savedMethod(method);
}
