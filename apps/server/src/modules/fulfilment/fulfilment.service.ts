/**
 * Fulfilment: what a paid order is owed and handing it over. Keys are claimed from stock with
 * FOR UPDATE SKIP LOCKED (catalog.repo.ts) and a key row holds one order, so no key is ever sold
 * twice; an order moves to `completed` when nothing is left to deliver, else waits in
 * `processing` (order-lifecycle.ts makes every status change). Restocks serve the orders that
 * waited, oldest payment first (flows/restock.ts adds the keys and calls fillWaitingOrders); the
 * seller can mark an order delivered.
 */
import { inTransaction } from '../request/transaction.js';
import { AppError } from '../../lib/errors.js';
import { keyShortages, keysAssigned } from '../../lib/metrics.js';
import type { ServiceContext } from '../request/context.js';
import { ProductSchema, StoredFileSchema, type Product } from '../catalog/catalog.entities.js';
import { claimKeys } from '../catalog/catalog.repo.js';
import { assignedKeyCounts, revokeOrderKeys } from '../catalog/key-store.js';
import { PAID_STATUSES, transition } from '../orders/order-lifecycle.js';
import { OrderLineSchema, type Order, type OrderLine } from '../orders/orders.entities.js';
import { lockOrder } from '../orders/order-lookup.js';

interface LineState {
  line: OrderLine;
  product: Product | undefined;
  keysAssigned: number;
}

/**
 * A subscription's renewal or change order owes nothing to hand over: the keys, files and
 * deliveries went with its first order, and its license follows the subscription (the same key
 * and instances through every renewal).
 */
const owesGoods = (order: Order) =>
  order.billingReason !== 'subscription_cycle' && order.billingReason !== 'subscription_update';

async function lineStates(ctx: ServiceContext, order: Order): Promise<LineState[]> {
  const { em } = ctx;
  if (!owesGoods(order)) return [];
  const lines = await em.find(OrderLineSchema, { order: order.id }, { orderBy: { position: 'asc', id: 'asc' } });
  const productIds = lines.map((l) => l.productId).filter((id): id is string => !!id);
  const products = productIds.length ? await em.find(ProductSchema, { id: { $in: productIds } }) : [];
  const counts = lines.length ? await assignedKeyCounts(ctx, order.id) : new Map<string, number>();
  return lines.map((line) => ({
    line,
    product: products.find((p) => p.id === line.productId),
    keysAssigned: counts.get(line.id) ?? 0,
  }));
}

const needsKeys = (s: LineState) => !!s.product?.deliveryMethods.includes('licenseKeys');
const needsSeller = (s: LineState) => !!s.product?.deliveryMethods.includes('manualDelivery');
const keysMissing = (states: LineState[]) =>
  states.filter(needsKeys).reduce((sum, s) => sum + Math.max(s.line.quantity - s.keysAssigned, 0), 0);

/**
 * Assigns every key still owed to the order (as far as stock goes), then `complete`s it when
 * nothing is left to deliver, or lets a just-paid one `wait`. The order must be locked by the
 * caller's transaction. An order that gains nothing is left as it was.
 */
export async function fulfil(ctx: ServiceContext, input: { order: Order; now: Date }): Promise<void> {
  const { order, now } = input;
  const states = await lineStates(ctx, order);
  let assigned = 0;
  for (const state of states.filter(needsKeys)) {
    const got = await claimKeys(ctx.em, {
      productId: state.product!.id,
      orderId: order.id,
      orderLineId: state.line.id,
      count: state.line.quantity - state.keysAssigned,
      now,
    });
    state.keysAssigned += got;
    assigned += got;
  }
  if (assigned > 0) {
    order.keyCount += assigned;
    order.updatedAt = now;
    keysAssigned.inc(assigned);
  }
  const keysDone = keysMissing(states) === 0;
  if (!keysDone) keyShortages.inc();
  const sellerDone = !states.some(needsSeller) || order.deliveredAt !== null;
  if (keysDone && sellerDone) await transition(ctx, order, 'complete', now);
  else if (order.status === 'paid') await transition(ctx, order, 'wait', now);
}

/** `POST /api/orders/{id}/try-assign-keys` and restocks: fill what a processing order still lacks. */
export async function tryAssignKeys(ctx: ServiceContext, input: { orderId: string; now: Date }): Promise<Order> {
  const { orderId, now } = input;
  return inTransaction(ctx, async (tx) => {
    const order = await lockOrder(tx, orderId);
    if (!PAID_STATUSES.includes(order.status)) throw new AppError('order_not_paid', 'This order is not paid.');
    if (order.status === 'processing') await fulfil(tx, { order, now });
    return order;
  });
}

/** The keys an order is still owed. */
export async function keysOwed(ctx: ServiceContext, order: Order): Promise<number> {
  return keysMissing(await lineStates(ctx, order));
}

/**
 * After a restock: orders still waiting for this product's keys, oldest payment first, each in a
 * transaction of its own (one order's lock is never held while the next is served).
 */
export async function fillWaitingOrders(ctx: ServiceContext, input: { productId: string; now: Date }): Promise<number> {
  const { productId, now } = input;
  const waiting = await ctx.em
    .createQueryBuilder(OrderLineSchema, 'l')
    .select(['o.id', 'o.paidAt'], true)
    .join('l.order', 'o')
    .where({ productId, order: { status: 'processing' } })
    .orderBy({ order: { paidAt: 'asc', id: 'asc' } })
    .limit(1000)
    .execute<Array<{ id: string }>>('all');
  let filled = 0;
  for (const { id } of waiting) {
    const order = await tryAssignKeys({ ...ctx, em: ctx.em.fork() }, { orderId: id, now });
    if (order.status === 'completed') filled++;
  }
  return filled;
}

/** The lifecycle's `revokeKeys` effect: a refunded order's keys leave the buyer. */
export const revokeKeys = revokeOrderKeys;

/** Whether there is anything to hand the buyer: a key, a file, instruction text or a manual-delivery line. */
async function hasDeliverableContent(ctx: ServiceContext, order: Order): Promise<boolean> {
  const { em } = ctx;
  if (order.keyCount > 0) return true;
  const products = (await lineStates(ctx, order)).map((s) => s.product).filter((p): p is Product => !!p);
  if (products.some((p) => p.deliveryMethods.includes('manualDelivery'))) return true;
  if (products.some((p) => p.deliveryMethods.includes('deliveryInstructions') && p.deliveryInstructions.trim() !== ''))
    return true;
  const withFiles = products.filter((p) => p.deliveryMethods.includes('downloadFiles')).map((p) => p.id);
  return withFiles.length > 0 && (await em.count(StoredFileSchema, { product: { $in: withFiles } })) > 0;
}

/**
 * The seller marks a locked order delivered (merchant PATCH, dashboard), optionally with what
 * they delivered by hand: it completes; marking a completed order again changes nothing unless
 * the content does.
 */
export async function markDelivered(
  ctx: ServiceContext,
  input: { order: Order; now: Date; content?: string | undefined },
): Promise<void> {
  const { order, now, content } = input;
  if (!PAID_STATUSES.includes(order.status)) {
    throw new AppError(
      'order_not_deliverable',
      `A ${order.status} order cannot be marked delivered; it must be paid first.`,
    );
  }
  if (!(await hasDeliverableContent(ctx, order)))
    throw new AppError('nothing_to_deliver', 'This order has nothing to deliver.');
  if ((content !== undefined && content !== order.manualDeliveryContent) || order.deliveredAt === null) {
    if (content !== undefined) order.manualDeliveryContent = content;
    order.deliveredAt ??= now;
    order.updatedAt = now;
  }
  if (order.status !== 'completed') await transition(ctx, order, 'complete', now);
}
