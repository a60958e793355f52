/**
 * The order lifecycle: the one place an order's status changes (docs/architecture.md, The data rules).
 *
 *   checkout ──────────────────────────────> pending
 *   pending ──pay──> paid ──wait──> processing          (keys short, or the seller delivers by hand)
 *   paid | processing ──complete──> completed
 *   paid | processing | completed ──refund──> refunded  (keys revoked, payments refunded)
 *   pending ──cancel──> cancelled                        (the seller; the coupon use is given back)
 *   pending ──expire──> expired                          (the checkout lifetime ran out; likewise)
 *
 * `transition()` applies one row of the table to an order the caller has locked in its
 * transaction: the status, the row's timestamp, its event in the outbox (same transaction), and
 * its effects on other modules' tables, which the caller supplies (the lifecycle knows that a
 * refund revokes keys, not how: keys are the catalog's rows, payments the payments module's).
 * `expireStale()` is the same `expire` row for every stale order in one statement.
 */
import { inTransaction } from '../request/transaction.js';
import type { ServiceContext } from '../request/context.js';
import type { TErrorCode, TOrderStatus } from '@svc/schemas';
import { AppError } from '../../lib/errors.js';
import { recordEvent, type EventType } from '../events/outbox.js';
import type { Order } from './orders.entities.js';
import { expirePendingOrders } from './orders.repo.js';
import { toOrderDetail } from './order-views.js';

/** What the effects of the table's rows do, supplied by the module that owns the rows they touch. */
export interface LifecycleEffects {
  /** Revokes the keys the order holds; returns how many. */
  revokeKeys(ctx: ServiceContext, orderId: string): Promise<number>;
  /** Marks the order's settled payments refunded. */
  refundPayments(ctx: ServiceContext, orderId: string, now: Date): Promise<void>;
  /** Gives back coupon uses: coupon id -> how many orders gave one back. */
  releaseCoupons(ctx: ServiceContext, uses: Map<string, number>): Promise<void>;
}
type Effect = keyof LifecycleEffects;

interface Rule {
  from: readonly TOrderStatus[];
  to: TOrderStatus;
  /** The timestamp the transition sets. */
  stamp?: 'paidAt' | 'completedAt' | 'refundedAt' | 'cancelledAt' | 'expiredAt';
  event?: EventType;
  effects: readonly Effect[];
  /** Why an order in another status is refused (the buyer- or seller-facing error). */
  refusal: { code: TErrorCode; message: string };
}

const LIFECYCLE = {
  pay: {
    from: ['pending'],
    to: 'paid',
    stamp: 'paidAt',
    event: 'order.paid',
    effects: [],
    refusal: { code: 'order_not_pending', message: 'This order is no longer awaiting payment.' },
  },
  wait: {
    from: ['paid'],
    to: 'processing',
    effects: [],
    refusal: { code: 'conflict', message: 'Only a just-paid order waits for delivery.' },
  },
  complete: {
    from: ['paid', 'processing'],
    to: 'completed',
    stamp: 'completedAt',
    event: 'order.completed',
    effects: [],
    refusal: { code: 'order_not_deliverable', message: 'This order cannot be completed; it must be paid first.' },
  },
  refund: {
    from: ['paid', 'processing', 'completed'],
    to: 'refunded',
    stamp: 'refundedAt',
    event: 'order.refunded',
    effects: ['revokeKeys', 'refundPayments'],
    refusal: { code: 'order_not_paid', message: 'Only a paid order can be refunded.' },
  },
  cancel: {
    from: ['pending'],
    to: 'cancelled',
    stamp: 'cancelledAt',
    effects: ['releaseCoupons'],
    refusal: { code: 'order_not_pending', message: 'Only a pending order can be cancelled.' },
  },
  expire: {
    from: ['pending'],
    to: 'expired',
    stamp: 'expiredAt',
    effects: ['releaseCoupons'],
    refusal: { code: 'order_not_pending', message: 'Only a pending order can expire.' },
  },
} as const satisfies Record<string, Rule>;

export type OrderAction = keyof typeof LIFECYCLE;

/** The status an order is created in (checkout writes it with the order row). */
export const INITIAL_STATUS: TOrderStatus = 'pending';
/** The statuses of an order that is paid and not refunded. */
export const PAID_STATUSES: readonly TOrderStatus[] = LIFECYCLE.refund.from;

/** Whether an order in `status` may take `action`. */
export function can(status: TOrderStatus, action: OrderAction): boolean {
  return (LIFECYCLE[action].from as readonly TOrderStatus[]).includes(status);
}

/** The handlers an action's effects need: none for most, so the argument is left out. */
type EffectsFor<A extends OrderAction> = (typeof LIFECYCLE)[A]['effects'] extends readonly []
  ? []
  : [Pick<LifecycleEffects, (typeof LIFECYCLE)[A]['effects'][number]>];

/**
 * Moves a locked order by `action`, in the caller's transaction; refuses (409 with the rule's
 * code) when the order's status is not one the action leaves from.
 */
export async function transition<A extends OrderAction>(
  ctx: ServiceContext,
  order: Order,
  action: A,
  now: Date,
  ...effects: EffectsFor<A>
): Promise<void> {
  const rule: Rule = LIFECYCLE[action];
  if (!ctx.em.isInTransaction())
    throw new Error(`order ${action}: the caller must hold the order's row lock in a transaction`);
  if (!rule.from.includes(order.status)) throw new AppError(rule.refusal.code, rule.refusal.message);
  const handlers = effects[0] as Partial<LifecycleEffects> | undefined;
  for (const effect of rule.effects) {
    if (effect === 'revokeKeys') order.keyCount -= await handlers!.revokeKeys!(ctx, order.id);
    if (effect === 'refundPayments') await handlers!.refundPayments!(ctx, order.id, now);
    if (effect === 'releaseCoupons' && order.couponId)
      await handlers!.releaseCoupons!(ctx, new Map([[order.couponId, 1]]));
  }
  order.status = rule.to;
  if (rule.stamp) order[rule.stamp] = now;
  order.updatedAt = now;
  if (rule.event)
    await recordEvent(ctx, {
      storeId: order.store.id,
      livemode: order.livemode,
      type: rule.event,
      payload: { order: toOrderDetail(order) },
      at: now,
    });
}

/**
 * `expire` for every pending order created at or before `createdBefore`, in one statement, with
 * the coupon uses they held given back in the same transaction. Returns how many expired.
 */
export async function expireStale(
  ctx: ServiceContext,
  input: { createdBefore: Date; now: Date },
  effects: Pick<LifecycleEffects, 'releaseCoupons'>,
): Promise<number> {
  const rule = LIFECYCLE.expire;
  return inTransaction(ctx, async (tx) => {
    const { createdBefore, now } = input;
    const expired = await expirePendingOrders(tx.em, { from: rule.from, to: rule.to, createdBefore, now });
    const uses = new Map<string, number>();
    for (const { couponId } of expired) if (couponId) uses.set(couponId, (uses.get(couponId) ?? 0) + 1);
    if (uses.size > 0) await effects.releaseCoupons(tx, uses);
    return expired.length;
  });
}
