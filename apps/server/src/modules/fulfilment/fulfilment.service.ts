/**
 * Fulfilment: what a paid order is owed and handing it over. Keys are claimed from stock with
 * FOR UPDATE SKIP LOCKED (catalog.repo.ts) and a key row holds one order, so no key is ever sold
 * twice; an order moves to `completed` when nothing is left to deliver, else waits in
 * `processing` (order-lifecycle.ts makes every status change). Restocks serve the orders that
 * waited, oldest payment first; the seller can mark an order delivered.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../lib/errors.js';
import { keyShortages, keysAssigned } from '../../lib/metrics.js';
import type { ServiceContext } from '../request/context.js';
import { ProductSchema, StoredFileSchema, type Product } from '../catalog/catalog.entities.js';
import { claimKeys } from '../catalog/catalog.repo.js';
import { assignedKeyCounts, importKeys, revokeOrderKeys } from '../catalog/key-store.js';
import { PAID_STATUSES, transition } from '../orders/order-lifecycle.js';
import { OrderLineSchema, type Order, type OrderLine } from '../orders/orders.entities.js';
import { lockOrder } from '../orders/orders.service.js';

interface LineState {
  line: OrderLine;
  product: Product | undefined;
  keysAssigned: number;
}

async function lineStates(em: EntityManager, order: Order): Promise<LineState[]> {
  const lines = await em.find(OrderLineSchema, { order: order.id }, { orderBy: { position: 'asc', id: 'asc' } });
  const productIds = lines.map((l) => l.productId).filter((id): id is string => !!id);
  const products = productIds.length ? await em.find(ProductSchema, { id: { $in: productIds } }) : [];
  const counts = lines.length ? await assignedKeyCounts(em, order.id) : new Map<string, number>();
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
export async function fulfil(em: EntityManager, order: Order, now: Date): Promise<void> {
  const states = await lineStates(em, order);
  let assigned = 0;
  for (const state of states.filter(needsKeys)) {
    const got = await claimKeys(em, {
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
  if (keysDone && sellerDone) await transition(em, order, 'complete', now);
  else if (order.status === 'paid') await transition(em, order, 'wait', now);
}

/** `POST /api/orders/{id}/try-assign-keys` and restocks: fill what a processing order still lacks. */
export async function tryAssignKeys(em: EntityManager, orderId: string, now: Date): Promise<Order> {
  return em.transactional(async (tx) => {
    const order = await lockOrder(tx, orderId);
    if (!PAID_STATUSES.includes(order.status)) throw new AppError('order_not_paid', 'This order is not paid.');
    if (order.status === 'processing') await fulfil(tx, order, now);
    return order;
  });
}

/** The keys an order is still owed. */
export async function keysOwed(em: EntityManager, order: Order): Promise<number> {
  return keysMissing(await lineStates(em, order));
}

/** After a restock: orders still waiting for this product's keys, oldest payment first. */
export async function fillWaitingOrders(em: EntityManager, productId: string, now: Date): Promise<number> {
  const waiting = await em
    .createQueryBuilder(OrderLineSchema, 'l')
    .select(['o.id', 'o.paidAt'], true)
    .join('l.order', 'o')
    .where({ productId, order: { status: 'processing' } })
    .orderBy({ order: { paidAt: 'asc', id: 'asc' } })
    .limit(1000)
    .execute<Array<{ id: string }>>('all');
  let filled = 0;
  for (const { id } of waiting) {
    const order = await tryAssignKeys(em.fork(), id, now);
    if (order.status === 'completed') filled++;
  }
  return filled;
}

/** Adds keys to stock (catalog) and serves the orders that waited for them, oldest payment first. */
export async function restock(
  ctx: ServiceContext,
  input: { storeId: string; productId: string; keys: string[] },
): Promise<{ added: number; duplicates: number }> {
  const result = await importKeys(ctx, input);
  if (result.added > 0) await fillWaitingOrders(ctx.em.fork(), input.productId, ctx.clock.now());
  return result;
}

/** The lifecycle's `revokeKeys` effect: a refunded order's keys leave the buyer. */
export const revokeKeys = revokeOrderKeys;

/** Whether there is anything to hand the buyer: a key, a file, instruction text or a manual-delivery line. */
async function hasDeliverableContent(em: EntityManager, order: Order): Promise<boolean> {
  if (order.keyCount > 0) return true;
  const products = (await lineStates(em, order)).map((s) => s.product).filter((p): p is Product => !!p);
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
export async function markDelivered(em: EntityManager, order: Order, now: Date, content?: string): Promise<void> {
  if (!PAID_STATUSES.includes(order.status)) {
    throw new AppError(
      'order_not_deliverable',
      `A ${order.status} order cannot be marked delivered; it must be paid first.`,
    );
  }
  if (!(await hasDeliverableContent(em, order)))
    throw new AppError('nothing_to_deliver', 'This order has nothing to deliver.');
  if ((content !== undefined && content !== order.manualDeliveryContent) || order.deliveredAt === null) {
    if (content !== undefined) order.manualDeliveryContent = content;
    order.deliveredAt ??= now;
    order.updatedAt = now;
  }
  if (order.status !== 'completed') await transition(em, order, 'complete', now);
}
