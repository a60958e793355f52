/**
 * What sellers do to an order, shared by the merchant API and the dashboard: the note, mark
 * delivered, settle a manual payment, refund, cancel, and the order as sellers read it (the detail
 * with what each line has delivered, keys masked, and the buyer's own link, `orderUrl`, so a
 * merchant can send a receipt of their own). Each action returns that view. They combine orders,
 * fulfilment, payments, coupons and the catalog (flows: docs/architecture.md).
 */
import type { TDeliveryMethod, TOrderLine, TSellerOrderDetail } from '@svc/schemas';
import { AppError, invalidField } from '../lib/errors.js';
import { minorToAmount } from '../lib/money.js';
import { LicenseKeySchema, ProductSchema, StoredFileSchema } from '../modules/catalog/catalog.entities.js';
import { decryptLicenseKey, maskKey } from '../modules/catalog/license-key-crypto.js';
import { releaseCoupons } from '../modules/coupons/coupons.service.js';
import { markDelivered } from '../modules/fulfilment/fulfilment.service.js';
import { PAID_STATUSES, transition } from '../modules/orders/order-lifecycle.js';
import { orderUrl } from '../modules/orders/order-link.js';
import { findStoreOrder, lockOrder } from '../modules/orders/order-lookup.js';
import { toLinePlan, toOrderDetail } from '../modules/orders/order-views.js';
import { OrderLineSchema, type Order } from '../modules/orders/orders.entities.js';
import { refundAtGateways } from '../modules/payments/gateways.js';
import type { ServiceContext } from '../modules/request/context.js';
import { inTransaction } from '../modules/request/transaction.js';
import { refundOrder } from './refund-order.js';
import { settleOrder } from './settle-payment.js';

/** The context on a fresh EntityManager: work that must not see (or be seen by) the call's unit of work. */
const forked = (ctx: ServiceContext): ServiceContext => ({ ...ctx, em: ctx.em.fork() });

/**
 * PATCH an order: `note` sets the seller note; `markDelivered: true` marks it delivered
 * (400 on a pending order or one with nothing to deliver); `markDelivered: false` is a
 * no-op the API refuses with 400; a body with neither is 400. Transaction: one, holding the
 * order's row lock, in which the view is read too.
 */
export async function updateOrder(
  ctx: ServiceContext,
  input: { storeId: string; orderId: string; note?: string | undefined; markDelivered?: boolean | undefined },
): Promise<TSellerOrderDetail> {
  if (input.markDelivered === false)
    throw invalidField('markDelivered', 'Only true is meaningful; false changes nothing.');
  if (input.note === undefined && input.markDelivered === undefined)
    throw invalidField('', 'Send note or markDelivered.');
  const { id } = await findStoreOrder(ctx, input);
  return inTransaction(ctx, async (tx) => {
    const order = await lockOrder(tx, id);
    const now = ctx.clock.now();
    if (input.markDelivered) await markDelivered(tx, { order, now });
    if (input.note !== undefined && input.note !== order.note) {
      order.note = input.note;
      order.updatedAt = now;
    }
    await tx.em.flush();
    return sellerOrderDetail(tx, order);
  });
}

/**
 * The seller marks the order delivered, optionally with what they delivered by hand. Transaction:
 * one, holding the order's row lock, in which the view is read too.
 */
export async function markOrderDelivered(
  ctx: ServiceContext,
  input: { storeId: string; orderId: string; content?: string | undefined },
): Promise<TSellerOrderDetail> {
  const { id } = await findStoreOrder(ctx, input);
  return inTransaction(ctx, async (tx) => {
    const order = await lockOrder(tx, id);
    await markDelivered(tx, { order, now: ctx.clock.now(), content: input.content });
    await tx.em.flush();
    return sellerOrderDetail(tx, order);
  });
}

/**
 * The seller confirms a manual payment: the order settles for its full price. Transaction:
 * settle-payment's own, on a fresh EntityManager; the view is read after it commits.
 */
export async function markOrderPaid(
  ctx: ServiceContext,
  input: { storeId: string; orderId: string },
): Promise<TSellerOrderDetail> {
  const order = await findStoreOrder(ctx, input);
  if (order.status !== 'pending')
    throw new AppError('order_not_pending', `This order is ${order.status}, not awaiting payment.`);
  const outcome = await settleOrder(forked(ctx), {
    orderId: order.id,
    payment: { gateway: 'manual', providerRef: null, amountMinor: order.priceMinor, currency: order.currency },
    now: ctx.clock.now(),
  });
  if (outcome !== 'settled') throw new AppError('order_not_pending', 'This order is no longer awaiting payment.');
  const read = forked(ctx);
  return sellerOrderDetail(read, await findStoreOrder(read, { storeId: input.storeId, orderId: order.id }));
}

/**
 * The seller refunds: the money goes back at the gateway first (Stripe; 502 `gateway_error` with
 * nothing changed when it refuses), then the order is refunded with the gateway's refund id. A
 * refunded order answers as it is, with no second gateway call. Transactions: none across the
 * gateway's call; then refund-order's own, on a fresh EntityManager; the view is read after it commits.
 */
export async function refundStoreOrder(
  ctx: ServiceContext,
  input: { storeId: string; orderId: string },
): Promise<TSellerOrderDetail> {
  const order = await findStoreOrder(ctx, input);
  const now = ctx.clock.now();
  const refunds = await refundAtGateways(ctx, order);
  const tx = forked(ctx);
  return sellerOrderDetail(tx, await refundOrder(tx, { orderId: order.id, now, refunds }));
}

/**
 * The seller cancels a pending order of the store. Transaction: cancelOrder's, on a fresh
 * EntityManager; the view is read after it commits.
 */
export async function cancelStoreOrder(
  ctx: ServiceContext,
  input: { storeId: string; orderId: string },
): Promise<TSellerOrderDetail> {
  const { id } = await findStoreOrder(ctx, input);
  const tx = forked(ctx);
  return sellerOrderDetail(tx, await cancelOrder(tx, { orderId: id, now: ctx.clock.now() }));
}

/**
 * The seller cancels an order that was never paid; its coupon use is given back. Transaction: one,
 * holding the order's row lock; joined when the context holds one.
 */
export async function cancelOrder(ctx: ServiceContext, input: { orderId: string; now: Date }): Promise<Order> {
  return inTransaction(ctx, async (tx) => {
    const order = await lockOrder(tx, input.orderId);
    await transition(tx, order, 'cancel', input.now, { releaseCoupons });
    return order;
  });
}

/**
 * The seller's view of `order`, read through the context's EntityManager (the caller's
 * transaction, when it holds one). Transaction: none of its own.
 */
export async function sellerOrderDetail(ctx: ServiceContext, order: Order): Promise<TSellerOrderDetail> {
  const { em } = ctx;
  const lines = await em.find(OrderLineSchema, { order: order.id }, { orderBy: { position: 'asc', id: 'asc' } });
  const productIds = [...new Set(lines.map((line) => line.productId).filter((id): id is string => id !== null))];
  const products = new Map(
    (productIds.length ? await em.find(ProductSchema, { id: { $in: productIds } }) : []).map((p) => [p.id, p]),
  );
  const keys = await em.find(
    LicenseKeySchema,
    { order: order.id, status: { $in: ['assigned', 'revoked'] } },
    { orderBy: { assignedAt: 'asc', id: 'asc' } },
  );
  // Files and instructions are the buyer's from payment until a refund, as the delivery shows them.
  const delivering = PAID_STATUSES.includes(order.status);
  const withFiles = [...products.values()].filter((p) => p.deliveryMethods.includes('downloadFiles'));
  const files =
    delivering && withFiles.length
      ? await em.find(
          StoredFileSchema,
          { product: { $in: withFiles.map((p) => p.id) } },
          { orderBy: { createdAt: 'asc', id: 'asc' } },
        )
      : [];

  const detailLines = lines.map((line): TOrderLine => {
    const product = line.productId ? products.get(line.productId) : undefined;
    const methods: TDeliveryMethod[] = product ? [...product.deliveryMethods] : [];
    return {
      id: line.id,
      productId: line.productId ?? null,
      productName: line.productName,
      quantity: line.quantity,
      unitPrice: minorToAmount(line.unitPriceMinor, order.currency),
      plan: toLinePlan(line),
      deliveryMethods: methods,
      delivered: {
        licenseKeys: keys
          .filter((key) => key.orderLineId === line.id)
          .map((key) => ({
            id: key.id,
            masked: maskKey(decryptLicenseKey(ctx.deps.config, key.valueEnc)),
            status: key.status === 'revoked' ? 'revoked' : 'assigned',
          })),
        downloadFiles: files
          .filter((file) => file.product?.id === line.productId)
          .map((file) => ({ id: file.id, name: file.name, size: file.size })),
        deliveryInstructions:
          delivering && product && methods.includes('deliveryInstructions') && product.deliveryInstructions.trim()
            ? product.deliveryInstructions
            : null,
        manualDelivery: methods.includes('manualDelivery') ? (order.deliveredAt ? 'delivered' : 'pending') : null,
      },
    };
  });
  return { ...toOrderDetail(order), lines: detailLines, orderUrl: orderUrl(ctx.deps.config, order.id) };
}

/** GET an order of the store by cuid or `ORD-<n>`, as sellers read it. Transaction: none. */
export async function getSellerOrder(
  ctx: ServiceContext,
  input: { storeId: string; orderId: string },
): Promise<TSellerOrderDetail> {
  return sellerOrderDetail(ctx, await findStoreOrder(ctx, input));
}
