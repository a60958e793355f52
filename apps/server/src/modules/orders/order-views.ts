/**
 * How an order reads: its public number and the detail every audience shares (events, the
 * seller, the buyer's checkout). Plain functions of the entity or of the same fields just inserted.
 */
import type { TCheckoutOrder, TOrderDetail, TOrderLinePlan } from '@svc/schemas';
import { minorToAmount } from '../../lib/money.js';
import { rateFraction } from '../tax/tax.js';
import type { Order, OrderLine } from './orders.entities.js';

/** What a line records of its plan: the plan's id and terms as they were at the sale. */
export type LinePlanFields = Pick<OrderLine, 'planId' | 'planInterval' | 'planIntervalCount' | 'planTrialDays'>;

/** A line's plan as every view shows it; null for a one-time product's line. */
export function toLinePlan(line: Partial<LinePlanFields>): TOrderLinePlan {
  if (!line.planId || !line.planInterval) return null;
  return {
    id: line.planId,
    interval: line.planInterval,
    intervalCount: line.planIntervalCount ?? 1,
    trialDays: line.planTrialDays ?? 0,
  };
}

export function publicOrderNumber(number: number | string): string {
  return `ORD-${number}`;
}

/** What every view of an order says of its tax, from an entity or a row's same fields. */
export interface OrderTaxFields {
  currency: string;
  subtotalMinor: number;
  taxMinor: number;
  taxRatePpm?: number | null | undefined;
  taxCountry?: string | null | undefined;
  reverseCharge: boolean;
  invoiceNumber?: string | null | undefined;
  creditNoteNumber?: string | null | undefined;
}

export function toOrderTax(
  order: OrderTaxFields,
): Pick<
  TOrderDetail,
  'subtotal' | 'taxAmount' | 'taxRate' | 'taxCountry' | 'reverseCharge' | 'invoiceNumber' | 'creditNoteNumber'
> {
  return {
    subtotal: minorToAmount(order.subtotalMinor, order.currency),
    taxAmount: minorToAmount(order.taxMinor, order.currency),
    taxRate: rateFraction(order.taxRatePpm ?? null),
    taxCountry: order.taxCountry ?? null,
    reverseCharge: order.reverseCharge,
    invoiceNumber: order.invoiceNumber ?? null,
    creditNoteNumber: order.creditNoteNumber ?? null,
  };
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
  | 'subscriptionId'
  | 'billingReason'
  | 'createdAt'
  | 'completedAt'
  | 'updatedAt'
  | 'note'
  | 'customFieldResponses'
  | 'subtotalMinor'
  | 'taxMinor'
  | 'taxRatePpm'
  | 'taxCountry'
  | 'reverseCharge'
  | 'invoiceNumber'
  | 'creditNoteNumber'
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
    subscriptionId: order.subscriptionId ?? null,
    billingReason: order.billingReason,
    ...toOrderTax(order),
    createdAt: order.createdAt.toISOString(),
    completedAt: order.completedAt?.toISOString() ?? null,
    updatedAt: order.updatedAt.toISOString(),
    note: order.note,
    customFieldResponses: order.customFieldResponses.map(({ name, value }) => ({ name, value })),
  };
}

/** What the buyer's checkout shows of an order: the detail's fields and how its prices carry tax. */
export type CheckoutOrderFields = OrderDetailFields & Pick<Order, 'taxBehavior'>;

/** The order as its checkout page reads it, its lifetime from the configuration. */
export function toCheckoutOrder(
  order: CheckoutOrderFields,
  lines: Array<
    {
      productId: string | null;
      productName: string;
      quantity: number;
      unitPriceMinor: number;
    } & Partial<LinePlanFields>
  >,
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
      plan: toLinePlan(line),
    })),
    discount: minorToAmount(order.discountMinor, order.currency),
    price: minorToAmount(order.priceMinor, order.currency),
    ...toOrderTax(order),
    taxBehavior: order.taxBehavior ?? 'off',
    currency: order.currency,
    email: order.customerEmail,
    paymentMethod: order.paymentMethod,
    subscriptionId: order.subscriptionId ?? null,
    billingReason: order.billingReason,
    createdAt: order.createdAt.toISOString(),
    expiresAt: new Date(order.createdAt.getTime() + lifetimeMs).toISOString(),
  };
}

/** The tax fields of a list row (orders.repo.ts LIST_COLUMNS). */
export function orderRowTax(row: {
  currency: string;
  subtotal_minor: string;
  tax_minor: string;
  tax_rate_ppm: number | null;
  tax_country: string | null;
  reverse_charge: boolean;
  invoice_number: string | null;
  credit_note_number: string | null;
}): ReturnType<typeof toOrderTax> {
  return toOrderTax({
    currency: row.currency,
    subtotalMinor: Number(row.subtotal_minor),
    taxMinor: Number(row.tax_minor),
    taxRatePpm: row.tax_rate_ppm,
    taxCountry: row.tax_country,
    reverseCharge: row.reverse_charge,
    invoiceNumber: row.invoice_number,
    creditNoteNumber: row.credit_note_number,
  });
}
