/**
 * The order state machine after checkout, in one place (DESIGN §5 Orders):
 *
 *   pending --settle--> paid --fulfil--> completed | processing
 *   processing --keys found / marked delivered--> completed
 *   paid | processing | completed --refund--> refunded   (keys revoked)
 *   pending --cancel--> cancelled;  pending --lifetime--> expired (checkout.service)
 *
 * Every transition runs in a transaction holding the order's row lock and writes its
 * event to the outbox in that transaction. Keys are claimed with FOR UPDATE SKIP LOCKED,
 * and a key row holds one order, so no key is ever sold twice.
 */
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { TOrderStatus } from '@svc/schemas';
import { AppError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { keyShortages, keysAssigned, settlements } from '../../lib/metrics.js';
import { ProductSchema, StoredFileSchema, type Product } from '../catalog/catalog.entities.js';
import { recordEvent } from '../events/outbox.js';
import { OrderLineSchema, OrderSchema, type Order, type OrderLine } from '../orders/orders.entities.js';
import { toOrderDetail } from '../orders/orders.service.js';
import { PaymentSchema } from '../payments/payments.entities.js';

export const FULFILLED_STATUSES: TOrderStatus[] = ['paid', 'processing', 'completed'];

export async function lockOrder(em: EntityManager, orderId: string): Promise<Order> {
  const order = await em.findOne(OrderSchema, { id: orderId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
  if (!order) throw new AppError('not_found', 'Order not found.');
  return order;
}

interface LineState {
  line: OrderLine;
  product: Product | undefined;
  keysAssigned: number;
}

async function lineStates(em: EntityManager, order: Order): Promise<LineState[]> {
  const lines = await em.find(OrderLineSchema, { order: order.id }, { orderBy: { position: 'asc', id: 'asc' } });
  const productIds = lines.map((l) => l.productId).filter((id): id is string => !!id);
  const products = productIds.length ? await em.find(ProductSchema, { id: { $in: productIds } }) : [];
  const counts: Array<{ order_line_id: string; n: string }> = lines.length
    ? await em.execute(`select order_line_id, count(*) as n from license_key where order_id = ? and status = 'assigned' group by order_line_id`, [order.id])
    : [];
  return lines.map((line) => ({
    line,
    product: products.find((p) => p.id === line.productId),
    keysAssigned: Number(counts.find((c) => c.order_line_id === line.id)?.n ?? 0),
  }));
}

const needsKeys = (s: LineState) => !!s.product?.deliveryMethods.includes('licenseKeys');
const needsSeller = (s: LineState) => !!s.product?.deliveryMethods.includes('manualDelivery');

/** Claims up to `count` available keys of a product for a line, skipping keys other transactions hold. */
async function claimKeys(em: EntityManager, order: Order, line: OrderLine, productId: string, count: number, now: Date): Promise<number> {
  if (count <= 0) return 0;
  const claimed: unknown[] = await em.execute(
    `with picked as (
       select id from license_key where product_id = ? and status = 'available'
       order by id limit ? for update skip locked
     )
     update license_key k set status = 'assigned', order_id = ?, order_line_id = ?, assigned_at = ?
     from picked where k.id = picked.id returning k.id`,
    [productId, count, order.id, line.id, now],
  );
  return claimed.length;
}

/**
 * Assigns every key still owed to the order (as far as stock goes) and moves it to
 * `completed` when nothing is left to deliver, else `processing`. The order must be
 * locked by the caller's transaction.
 */
async function fulfil(em: EntityManager, order: Order, now: Date): Promise<void> {
  const states = await lineStates(em, order);
  let assigned = 0;
  for (const state of states.filter(needsKeys)) {
    const missing = state.line.quantity - state.keysAssigned;
    const got = await claimKeys(em, order, state.line, state.product!.id, missing, now);
    state.keysAssigned += got;
    assigned += got;
  }
  order.keyCount += assigned;
  const keysDone = states.filter(needsKeys).every((s) => s.keysAssigned >= s.line.quantity);
  if (assigned > 0) keysAssigned.inc(assigned);
  if (!keysDone) keyShortages.inc();
  const sellerDone = !states.some(needsSeller) || order.deliveredAt !== null;
  const next: TOrderStatus = keysDone && sellerDone ? 'completed' : 'processing';
  order.updatedAt = now;
  if (next === order.status) return;
  order.status = next;
  if (next === 'completed') {
    order.completedAt = now;
    await recordEvent(em, { storeId: order.store.id, type: 'order.completed', payload: { order: toOrderDetail(order) }, at: now });
  }
}

export interface Settlement {
  gateway: string;
  providerRef: string | null;
  amountMinor: number;
  currency: string;
}

export type SettleOutcome = 'settled' | 'already_settled' | 'not_pending' | 'amount_mismatch' | 'currency_mismatch';

/**
 * A payment of the stored amount in the stored currency settles a pending order and
 * fulfils it in the same transaction. Anything less never settles; the order keeps a
 * flag the seller sees. Settling twice is a no-op.
 */
export async function settleOrder(em: EntityManager, orderId: string, payment: Settlement, now: Date): Promise<SettleOutcome> {
  const outcome = await em.transactional(async (tx): Promise<SettleOutcome> => {
    const order = await lockOrder(tx, orderId);
    if (order.status !== 'pending') {
      return order.paidAt && FULFILLED_STATUSES.includes(order.status) ? 'already_settled' : 'not_pending';
    }
    const mismatch: SettleOutcome | undefined =
      payment.currency !== order.currency ? 'currency_mismatch' : payment.amountMinor < order.priceMinor ? 'amount_mismatch' : undefined;
    if (mismatch) {
      order.paymentFlag = mismatch;
      order.updatedAt = now;
      return mismatch;
    }
    order.status = 'paid';
    order.paidMinor = payment.amountMinor;
    order.paidAt = now;
    order.paymentFlag = null;
    order.updatedAt = now;
    if (!order.paymentMethod) order.paymentMethod = payment.gateway;
    tx.create(PaymentSchema, {
      id: newId(),
      order,
      gateway: payment.gateway,
      providerRef: payment.providerRef,
      amountMinor: payment.amountMinor,
      currency: payment.currency,
      status: 'paid',
      createdAt: now,
      updatedAt: now,
    });
    await recordEvent(tx, { storeId: order.store.id, type: 'order.paid', payload: { order: toOrderDetail(order) }, at: now });
    await fulfil(tx, order, now);
    return 'settled';
  });
  settlements.inc({ outcome });
  return outcome;
}

/** `POST /api/orders/{id}/try-assign-keys` and restocks: fill what a processing order still lacks. */
export async function tryAssignKeys(em: EntityManager, orderId: string, now: Date): Promise<Order> {
  return em.transactional(async (tx) => {
    const order = await lockOrder(tx, orderId);
    if (!FULFILLED_STATUSES.includes(order.status)) throw new AppError('order_not_paid', 'This order is not paid.');
    if (order.status === 'processing') await fulfil(tx, order, now);
    return order;
  });
}

/** After a restock: orders still waiting for this product's keys, oldest payment first. */
export async function fillWaitingOrders(em: EntityManager, productId: string, now: Date): Promise<number> {
  const waiting: Array<{ id: string }> = await em.execute(
    `select distinct o.id, o.paid_at from "order" o join order_line l on l.order_id = o.id
     where o.status = 'processing' and l.product_id = ? order by o.paid_at, o.id limit 1000`,
    [productId],
  );
  let filled = 0;
  for (const { id } of waiting) {
    const order = await tryAssignKeys(em.fork(), id, now);
    if (order.status === 'completed') filled++;
  }
  return filled;
}

/** Whether there is anything to hand the buyer: a key, a file, instruction text or a manual-delivery line. */
async function hasDeliverableContent(em: EntityManager, order: Order): Promise<boolean> {
  if (order.keyCount > 0) return true;
  const products = (await lineStates(em, order)).map((s) => s.product).filter((p): p is Product => !!p);
  if (products.some((p) => p.deliveryMethods.includes('manualDelivery'))) return true;
  if (products.some((p) => p.deliveryMethods.includes('deliveryInstructions') && p.deliveryInstructions.trim() !== '')) return true;
  const withFiles = products.filter((p) => p.deliveryMethods.includes('downloadFiles')).map((p) => p.id);
  return withFiles.length > 0 && (await em.count(StoredFileSchema, { product: { $in: withFiles } })) > 0;
}

/** The seller marks an order delivered (merchant PATCH, dashboard): -> completed, idempotent. */
export async function markDelivered(em: EntityManager, order: Order, now: Date, content?: string): Promise<void> {
  if (!FULFILLED_STATUSES.includes(order.status)) {
    throw new AppError('order_not_deliverable', `A ${order.status} order cannot be marked delivered; it must be paid first.`);
  }
  if (!(await hasDeliverableContent(em, order))) throw new AppError('nothing_to_deliver', 'This order has nothing to deliver.');
  if (content !== undefined) order.manualDeliveryContent = content;
  order.deliveredAt ??= now;
  if (order.status !== 'completed') {
    order.status = 'completed';
    order.completedAt = now;
    await recordEvent(em, { storeId: order.store.id, type: 'order.completed', payload: { order: toOrderDetail(order) }, at: now });
  }
  order.updatedAt = now;
}

/** Refund (seller action or gateway): keys are revoked and leave the delivery payload. */
export async function refundOrder(em: EntityManager, orderId: string, now: Date): Promise<Order> {
  return em.transactional(async (tx) => {
    const order = await lockOrder(tx, orderId);
    if (order.status === 'refunded') return order;
    if (!FULFILLED_STATUSES.includes(order.status)) throw new AppError('order_not_paid', 'Only a paid order can be refunded.');
    await tx.execute(`update license_key set status = 'revoked' where order_id = ? and status = 'assigned'`, [order.id]);
    await tx.nativeUpdate(PaymentSchema, { order: order.id, status: 'paid' }, { status: 'refunded', updatedAt: now });
    order.status = 'refunded';
    order.refundedAt = now;
    order.updatedAt = now;
    await recordEvent(tx, { storeId: order.store.id, type: 'order.refunded', payload: { order: toOrderDetail(order) }, at: now });
    return order;
  });
}

/** The seller cancels an order that was never paid. */
export async function cancelOrder(em: EntityManager, orderId: string, now: Date): Promise<Order> {
  return em.transactional(async (tx) => {
    const order = await lockOrder(tx, orderId);
    if (order.status !== 'pending') throw new AppError('order_not_pending', 'Only a pending order can be cancelled.');
    order.status = 'cancelled';
    order.updatedAt = now;
    if (order.couponId) await tx.execute('update coupon set uses = greatest(uses - 1, 0) where id = ?', [order.couponId]);
    return order;
  });
}
