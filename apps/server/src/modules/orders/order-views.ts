/**
 * How an order reads: its public number and the detail every audience shares (events, the
 * seller, the buyer's checkout). Plain functions of the entity or of the same fields just inserted.
 */
import type { TCheckoutOrder, TOrderDetail } from '@svc/schemas';
import { minorToAmount } from '../../lib/money.js';
import type { Order } from './orders.entities.js';

export function publicOrderNumber(number: number | string): string {
  return `ORD-${number}`;
}

/** What toOrderDetail reads: an Order entity, or the same fields of an order just inserted with SQL. */
export type OrderDetailFields = Pick<
  Order,
  | 'id'
  | 'number'
  | 'livemode'
  | 'status'
  | 'productName'
  | 'priceMinor'
  | 'discountMinor'
  | 'couponCode'
  | 'paidMinor'
  | 'currency'
  | 'paymentMethod'
  | 'customerEmail'
  | 'country'
  | 'keyCount'
  | 'createdAt'
  | 'completedAt'
  | 'updatedAt'
  | 'note'
  | 'customFieldResponses'
> & { store: { id: string } };

export function toOrderDetail(order: OrderDetailFields): TOrderDetail {
  return {
    id: order.id,
    orderId: publicOrderNumber(order.number),
    storeId: order.store.id,
    livemode: order.livemode,
    status: order.status,
    productName: order.productName,
    price: minorToAmount(order.priceMinor, order.currency),
    discount: minorToAmount(order.discountMinor, order.currency),
    couponCode: order.couponCode ?? null,
    paid: minorToAmount(order.paidMinor, order.currency),
    paymentMethod: order.paymentMethod,
    customerEmail: order.customerEmail,
    country: order.country,
    keyCount: order.keyCount,
    createdAt: order.createdAt.toISOString(),
    completedAt: order.completedAt?.toISOString() ?? null,
    updatedAt: order.updatedAt.toISOString(),
    note: order.note,
    customFieldResponses: order.customFieldResponses.map(({ name, value }) => ({ name, value })),
  };
}

/** What the buyer's checkout shows of an order: the detail's fields and the discount's. */
export type CheckoutOrderFields = OrderDetailFields & Pick<Order, 'subtotalMinor'>;

/** The order as its checkout page reads it, its lifetime from the configuration. */
export function toCheckoutOrder(
  order: CheckoutOrderFields,
  lines: Array<{ productId: string | null; productName: string; quantity: number; unitPriceMinor: number }>,
  lifetimeMs: number,
): TCheckoutOrder {
  return {
    id: order.id,
    orderId: publicOrderNumber(order.number),
    storeId: order.store.id,
    livemode: order.livemode,
    status: order.status,
    lines: lines.map((line) => ({
      productId: line.productId,
      productName: line.productName,
      quantity: line.quantity,
      unitPrice: minorToAmount(line.unitPriceMinor, order.currency),
    })),
    subtotal: minorToAmount(order.subtotalMinor, order.currency),
    discount: minorToAmount(order.discountMinor, order.currency),
    price: minorToAmount(order.priceMinor, order.currency),
    currency: order.currency,
    email: order.customerEmail,
    paymentMethod: order.paymentMethod,
    createdAt: order.createdAt.toISOString(),
    expiresAt: new Date(order.createdAt.getTime() + lifetimeMs).toISOString(),
  };
}
