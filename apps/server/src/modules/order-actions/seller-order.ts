/**
 * The order as sellers read it, on the merchant API and the dashboard alike: the detail, each line
 * with what it has delivered so far (keys masked, never whole), and the buyer's own link to the
 * order (`orderUrl`), so a merchant can send a receipt of their own.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { TDeliveryMethod, TOrderLine, TSellerOrderDetail } from '@svc/schemas';
import { LicenseKeySchema, ProductSchema, StoredFileSchema } from '../catalog/catalog.entities.js';
import { decryptLicenseKey, maskKey } from '../catalog/license-key-crypto.js';
import { minorToAmount } from '../../lib/money.js';
import { PAID_STATUSES } from '../orders/order-lifecycle.js';
import { orderUrl } from '../orders/order-link.js';
import { OrderLineSchema, type Order } from '../orders/orders.entities.js';
import { findStoreOrder, toOrderDetail } from '../orders/orders.service.js';
import type { ServiceContext } from '../request/context.js';

/** The seller's view of `order`, read through `em` (the caller's transaction, when it holds one). */
export async function sellerOrderDetail(
  ctx: ServiceContext,
  order: Order,
  em: EntityManager = ctx.em,
): Promise<TSellerOrderDetail> {
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

/** GET an order of the store by cuid or `ORD-<n>`, as sellers read it. */
export async function getSellerOrder(
  ctx: ServiceContext,
  input: { storeId: string; orderId: string },
): Promise<TSellerOrderDetail> {
  return sellerOrderDetail(ctx, await findStoreOrder(ctx.em, input.storeId, ctx.livemode, input.orderId));
}
