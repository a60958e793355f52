/** Orders as merchants, staff and buyers see them. */
import { z } from 'zod';
import { ZDeliveryMethod, ZPlanInterval } from './catalog.js';
import { ZBuyerToken, ZCount, ZId, ZPlainText, ZTimestamp, ZLivemode } from './common.js';
import { queryInt } from './query.js';
import { orderTaxFields } from './tax.js';

export const ORDER_STATUSES = [
  'pending',
  'paid',
  'processing',
  'completed',
  'refunded',
  'cancelled',
  'expired',
] as const;
export const ZOrderStatus = z.enum(ORDER_STATUSES);
export type TOrderStatus = z.infer<typeof ZOrderStatus>;

/** Why an order exists (Stripe's names): a one-time purchase, or a subscription's first, renewal or change payment. */
export const BILLING_REASONS = [
  'purchase',
  'subscription_create',
  'subscription_cycle',
  'subscription_update',
] as const;
export const ZBillingReason = z.enum(BILLING_REASONS);
export type TBillingReason = z.infer<typeof ZBillingReason>;

/** The two fields every view of an order carries about its subscription. */
export const orderBillingFields = {
  subscriptionId: z.string().nullable().meta({
    description:
      'The subscription the order pays for; null for a one-time purchase (and until the subscription exists)',
  }),
  billingReason: ZBillingReason.meta({
    description:
      "`purchase` for a one-time purchase; `subscription_create` for a subscription's first payment, `subscription_cycle` for a renewal, `subscription_update` for a change of plan",
  }),
};

/** The plan a line of a recurring product was bought on, as it was then; null for a one-time product's line. */
export const ZOrderLinePlan = z
  .object({
    id: z.string(),
    interval: ZPlanInterval,
    intervalCount: z.number().int().min(1).max(12),
    trialDays: z.number().int().min(0).max(365),
  })
  .nullable();
export type TOrderLinePlan = z.infer<typeof ZOrderLinePlan>;

export const ZOrder = z.object({
  id: z.string(),
  orderId: z.string(),
  storeId: z.string(),
  livemode: ZLivemode,
  status: ZOrderStatus,
  productName: z.string(),
  price: z.number(),
  paid: z.number(),
  // The interface fixes these as strings: "none" is '' here (decisions.md #27 Types that tell the truth).
  paymentMethod: z.string().meta({
    description: "The payment method's name (`manual`, `stripe`, ...); an empty string until the buyer chooses one",
  }),
  customerEmail: z.string().meta({ description: "The buyer's e-mail address; an empty string when none was given" }),
  country: z.string().meta({ description: 'Two-letter country code; `XX` when unknown' }),
  keyCount: ZCount,
  ...orderBillingFields,
  ...orderTaxFields,
  createdAt: ZTimestamp,
  completedAt: ZTimestamp.nullable(),
  updatedAt: ZTimestamp,
});
export type TOrder = z.infer<typeof ZOrder>;

export const ZCustomFieldResponse = z.object({ name: z.string(), value: z.string() });

export const ZOrderDetail = ZOrder.extend({
  discount: z.number().meta({
    description:
      'What a coupon took off the lines, in the currency of `price` (0 without one): the lines sum to `price` plus `discount`',
  }),
  couponCode: z.string().nullable().meta({
    description: 'The code of the coupon that made the discount, as it was when the order took it; null without one',
  }),
  note: z.string().meta({ description: "The seller's note; an empty string when there is none" }),
  customFieldResponses: z.array(ZCustomFieldResponse),
});
export type TOrderDetail = z.infer<typeof ZOrderDetail>;

/** A line of an order as the seller sees it: what was bought, and what it has delivered so far (keys masked). */
export const ZOrderLine = z.object({
  id: z.string(),
  /** Null once the product is deleted; the line keeps its name and price. */
  productId: z.string().nullable(),
  productName: z.string(),
  /** Seats, for a recurring product's line. */
  quantity: ZCount,
  unitPrice: z.number(),
  plan: ZOrderLinePlan,
  /** How the product delivers, as it is configured now (empty once the product is deleted). */
  deliveryMethods: z.array(ZDeliveryMethod),
  delivered: z.object({
    /** The keys assigned to this line, masked; `id` is the license's id (`GET .../licenses/{licenseId}`). */
    licenseKeys: z.array(z.object({ id: z.string(), masked: z.string(), status: z.enum(['assigned', 'revoked']) })),
    /** The product's files the buyer can download (once paid, until refunded). */
    downloadFiles: z.array(z.object({ id: z.string(), name: z.string(), size: ZCount })),
    /** The product's instructions shown to the buyer (once paid, until refunded), or null. */
    deliveryInstructions: z.string().nullable(),
    /** For a product delivered by hand: whether the seller has delivered it; null for other products. */
    manualDelivery: z.enum(['pending', 'delivered']).nullable(),
  }),
});
export type TOrderLine = z.infer<typeof ZOrderLine>;

/**
 * The order as the merchant API and the dashboard answer it: the detail, its lines, and the buyer's
 * own link to it (the order page, opened without signing in: put it in a receipt you send yourself).
 */
export const ZSellerOrderDetail = ZOrderDetail.extend({
  lines: z.array(ZOrderLine),
  orderUrl: z.string().meta({
    description: "The buyer's order page, which the link opens on its own (no sign-in): for a receipt of your own",
  }),
});
export type TSellerOrderDetail = z.infer<typeof ZSellerOrderDetail>;

/** An order reference: the database id or the public `ORD-<n>`. */
export const ZOrderRef = z.string().min(1).max(40);

const listOrdersFields = {
  storeId: ZId,
  limit: queryInt(z.number().int().min(1).max(100)).optional(),
  cursor: z.string().min(1).max(200).optional(),
  status: ZOrderStatus.optional(),
  from: z.iso.datetime({ offset: true }).optional(),
  to: z.iso.datetime({ offset: true }).optional(),
  subscriptionId: ZId.optional().meta({
    description: "One subscription's orders (its first payment, renewals and changes)",
  }),
};

function fromNotAfterTo(query: { from?: string | undefined; to?: string | undefined }): boolean {
  return !query.from || !query.to || Date.parse(query.from) <= Date.parse(query.to);
}
const FROM_AFTER_TO = { message: '`from` is after `to`', path: ['from'] };

export const ZListOrdersQuery = z.strictObject(listOrdersFields).refine(fromNotAfterTo, FROM_AFTER_TO);
export type TListOrdersQuery = z.infer<typeof ZListOrdersQuery>;

/**
 * The dashboard's list also takes `q`: one order or one buyer, matched exactly so an index serves it
 * on a store of any size (decisions.md, #28 The orders text filter): `ORD-<n>` or an order id, or a
 * buyer's e-mail (any case, as addresses are stored lower-cased). No substring search.
 */
export const ZDashboardListOrdersQuery = z
  .strictObject({
    ...listOrdersFields,
    q: z
      .string()
      .trim()
      .min(1)
      .max(320)
      .meta({ description: "An order (`ORD-<n>` or its id) or a buyer's e-mail address, matched exactly" })
      .optional(),
  })
  .refine(fromNotAfterTo, FROM_AFTER_TO);
export type TDashboardListOrdersQuery = z.infer<typeof ZDashboardListOrdersQuery>;

export const ZOrderList = z.object({
  orders: z.array(ZOrder),
  limit: ZCount,
  hasMore: z.boolean(),
  nextCursor: z.string().nullable(),
});
export type TOrderList = z.infer<typeof ZOrderList>;

export const ZGetOrderInput = z.strictObject({ storeId: ZId, orderId: ZOrderRef });

export const ZOrderNote = ZPlainText(5000);

/** The buyer's view of an order: what they bought, never who else looked at it. */
export const ZBuyerOrder = z.object({
  id: z.string(),
  orderId: z.string(),
  storeId: z.string(),
  livemode: ZLivemode,
  status: ZOrderStatus,
  productName: z.string(),
  price: z.number(),
  currency: z.string(),
  lines: z.array(z.object({ productName: z.string(), quantity: ZCount, unitPrice: z.number(), plan: ZOrderLinePlan })),
  ...orderBillingFields,
  ...orderTaxFields,
  createdAt: ZTimestamp,
  completedAt: ZTimestamp.nullable(),
});
export type TBuyerOrder = z.infer<typeof ZBuyerOrder>;

/** Buyer-facing order routes: `token` (or the svc_checkout cookie), or `email`, or a staff session. */
export const ZBuyerOrderAccess = z.strictObject({
  orderId: z.string().min(1).max(64),
  token: ZBuyerToken.optional(),
  email: z.string().max(320).optional(),
});

export const ZLicenseKeyDelivery = z.object({
  productId: z.string().nullable(),
  /** The name of the order line the key was sold with; null for a key assigned to no line. */
  productName: z.string().nullable(),
  key: z.string(),
});

export const ZDeliveryPayload = z.object({
  orderId: z.string(),
  status: ZOrderStatus,
  methods: z.array(z.enum(['licenseKeys', 'downloadFiles', 'manualDelivery', 'deliveryInstructions'])),
  licenseKeys: z.array(ZLicenseKeyDelivery).optional(),
  downloadFiles: z.array(z.object({ id: z.string(), name: z.string(), size: ZCount, url: z.string() })).optional(),
  manualDelivery: z.object({ status: z.enum(['pending', 'delivered']), content: z.string() }).optional(),
  deliveryInstructions: z.array(z.object({ productId: z.string().nullable(), text: z.string() })).optional(),
  customFields: z.array(ZCustomFieldResponse),
});
export type TDeliveryPayload = z.infer<typeof ZDeliveryPayload>;

export const ZOrderKeys = z.object({ orderId: z.string(), status: ZOrderStatus, keys: z.array(ZLicenseKeyDelivery) });

export const ZTryAssignResult = z.object({
  orderId: z.string(),
  status: ZOrderStatus,
  keyCount: ZCount,
  /** Keys the order is still owed. */
  missingKeys: ZCount,
});

export const ZUpdateOrderBody = z.strictObject({
  storeId: ZId,
  orderId: ZOrderRef,
  note: ZOrderNote.optional(),
  markDelivered: z.boolean().optional(),
});

export const ZOrderActionInput = z.strictObject({ storeId: ZId, orderId: ZOrderRef });
export const ZMarkDeliveredInput = z.strictObject({
  storeId: ZId,
  orderId: ZOrderRef,
  content: z.string().max(20_000).optional(),
});

/** One UTC day of the store's sales: orders that count as revenue (paid, not refunded) placed that day. */
export const ZStoreStatsDay = z.object({
  date: z.iso.date().meta({ description: 'The UTC day, `YYYY-MM-DD`' }),
  revenue: z.number().meta({ description: 'The prices of those orders, in the store currency' }),
  orders: ZCount,
});

/** Sales figures for the dashboard's Home: today, the last 30 days, and the 30 days one by one. */
export const ZStoreStats = z.object({
  currency: z.string().meta({ description: 'The store currency; orders placed in another currency are not counted' }),
  today: z.object({ revenue: z.number(), orders: ZCount }),
  last30Days: z.object({ revenue: z.number(), orders: ZCount }),
  daily: z
    .array(ZStoreStatsDay)
    .meta({ description: 'The last 30 UTC days, oldest first, today last; days without orders are zeros' }),
});
export type TStoreStats = z.infer<typeof ZStoreStats>;

export const ORDER_TIMELINE_TYPES = [
  'created',
  'paid',
  'delivered',
  'completed',
  'refunded',
  'cancelled',
  'expired',
] as const;

/** What happened to an order, oldest first, read from the order's own timestamps. */
export const ZOrderTimeline = z.object({
  orderId: z.string(),
  events: z.array(
    z.object({
      at: ZTimestamp,
      type: z.enum(ORDER_TIMELINE_TYPES),
      text: z.string().optional(),
    }),
  ),
});
export type TOrderTimeline = z.infer<typeof ZOrderTimeline>;
