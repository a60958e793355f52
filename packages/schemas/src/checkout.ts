/** The theme cart, checkout and public order creation. */
import { z } from 'zod';
import { ZBuyerToken, ZCount, ZEmail, ZId, ZTimestamp, ZLivemode } from './common.js';
import { CUSTOM_FIELD_TYPES, ZPlan, ZPlanInterval } from './catalog.js';
import { orderBillingFields, ZOrderLinePlan, ZOrderStatus } from './orders.js';
import { jsonQuery } from './query.js';
import { ZPaymentMethod } from './stores.js';
import { billingInputFields, orderTaxFields, ZTaxBehavior } from './tax.js';

/** What the cart says of tax before the checkout (the order's own fields, less its numbers). */
const cartTaxFields = {
  taxBehavior: ZTaxBehavior,
  taxRate: orderTaxFields.taxRate,
  taxCountry: orderTaxFields.taxCountry,
  reverseCharge: orderTaxFields.reverseCharge,
};

/** A cart line: which product and how many. Prices never come from the client. */
export const ZCartLine = z.strictObject({
  productId: z.string().min(1).max(64),
  /** A recurring product's plan (its first active plan when left out); a one-time product takes none. */
  planId: ZId.optional(),
  /** How many; a recurring product's seats, 1..100. */
  quantity: z.number().int().min(1).max(10_000),
});
export type TCartLine = z.infer<typeof ZCartLine>;
export const ZCart = z.array(ZCartLine).max(100);

export const ZCartQuery = z.strictObject({
  storeId: z.string().min(1).max(63),
  cart: jsonQuery(ZCart, 20_000, 'The cart as JSON: `[{"productId":"...","quantity":1}]`'),
  country: billingInputFields.country.meta({
    description: "The buyer's billing country, for the tax line (the request's own country when left out)",
  }),
  taxId: billingInputFields.taxId,
});

export const CART_REMOVAL_REASONS = ['unknown_product', 'unavailable', 'out_of_stock'] as const;
export const ZCartResult = z.object({
  storeId: z.string(),
  currency: z.string(),
  lines: z.array(
    z.object({
      productId: z.string(),
      /** The plan of a recurring product's line; null for a one-time product. */
      planId: z.string().nullable(),
      /** The plans the line may be switched to (the product's active ones, in order); `[]` for a one-time product. */
      plans: z.array(ZPlan),
      name: z.string(),
      quantity: ZCount,
      unitPrice: z.number(),
      lineTotal: z.number(),
      stock: ZCount.nullable(),
    }),
  ),
  removed: z.array(z.object({ productId: z.string(), reason: z.enum(CART_REMOVAL_REASONS) })),
  adjusted: z.array(
    z.object({
      productId: z.string(),
      requested: ZCount,
      quantity: ZCount,
      reason: z.enum(['min_quantity', 'max_quantity', 'stock']),
    }),
  ),
  subtotal: z.number(),
  /** What a coupon would take off is not known here (it is applied at checkout): `total` is `subtotal` plus any tax added on top. */
  taxAmount: z.number(),
  total: z.number(),
  ...cartTaxFields,
  itemCount: ZCount,
});
export type TCartResult = z.infer<typeof ZCartResult>;

const ZCustomFieldAnswers = z.record(z.string().max(50), z.union([z.string().max(2000), z.number(), z.boolean()]));

/** `/api/v1/checkout` and `/api/embed/checkout`. */
export const ZCheckoutInput = z.strictObject({
  shopId: z.string().min(1).max(63),
  cart: ZCart,
  email: ZEmail.nullable().optional(),
  coupon: z.string().trim().min(1).max(64).optional(),
  customFields: ZCustomFieldAnswers.optional(),
  ...billingInputFields,
  returnUrl: z.string().max(2048).optional().meta({
    description:
      "Where the buyer goes back to from the checkout, pay and order pages (the store's name in their header links there): an http(s) address on one of the store's allowed origins, else 400",
  }),
});
export const ZCheckoutResult = z.object({ url: z.string(), orderId: z.string() });

/** `/api/orders/create`. */
export const ZCreateOrderInput = z.strictObject({
  storeId: z.string().min(1).max(63),
  cart: ZCart,
  email: ZEmail,
  coupon: z.string().trim().min(1).max(64).optional(),
  customFields: ZCustomFieldAnswers.optional(),
  ...billingInputFields,
});

export const ZCheckoutOrder = z.object({
  id: z.string(),
  orderId: z.string(),
  storeId: z.string(),
  livemode: ZLivemode,
  status: ZOrderStatus,
  lines: z.array(
    z.object({
      productId: z.string().nullable(),
      productName: z.string(),
      quantity: ZCount,
      unitPrice: z.number(),
      plan: ZOrderLinePlan,
    }),
  ),
  discount: z.number(),
  price: z.number(),
  currency: z.string(),
  email: z.string(),
  paymentMethod: z.string(),
  ...orderBillingFields,
  ...orderTaxFields,
  /** How the store's prices carry tax (`off` when it charges none): the checkout says "incl." or adds a line. */
  taxBehavior: ZTaxBehavior,
  createdAt: ZTimestamp,
  expiresAt: ZTimestamp,
});
export type TCheckoutOrder = z.infer<typeof ZCheckoutOrder>;
export const ZCreateOrderResult = z.object({ order: ZCheckoutOrder, checkoutToken: z.string() });

export const ZCheckoutEnterInput = z.strictObject({ orderId: ZId, token: ZBuyerToken });
/**
 * What the checkout page needs besides the order: the store's name, the payment methods it
 * offers here (`test` only outside production) and the custom fields of the order's products.
 */
export const ZCheckoutSession = z.object({
  order: ZCheckoutOrder,
  store: z.object({ id: z.string(), name: z.string(), subdomain: z.string() }),
  paymentMethods: z.array(ZPaymentMethod),
  customFields: z.array(z.object({ name: z.string(), type: z.enum(CUSTOM_FIELD_TYPES), required: z.boolean() })),
  answers: z.array(z.object({ name: z.string(), value: z.string() })),
  /** Whether the store e-mails the buyer a receipt with the order's link once it is paid. */
  receiptsEnabled: z.boolean(),
  /**
   * A recurring order, paid now: today's charge is `order.price` (0 during a trial); the next one,
   * `amount`, falls on `date` (the trial's end, else the first period's) and comes back every
   * `intervalCount` `interval`s. Null for a one-time order.
   */
  nextCharge: z
    .object({
      amount: z.number(),
      date: ZTimestamp,
      interval: ZPlanInterval,
      intervalCount: z.number().int().min(1).max(12),
    })
    .nullable(),
});
export type TCheckoutSession = z.infer<typeof ZCheckoutSession>;

export const ZCheckoutStartInput = z.strictObject({
  orderId: ZId,
  token: ZBuyerToken,
  paymentMethod: ZPaymentMethod,
  email: ZEmail.optional(),
  coupon: z.string().trim().min(1).max(64).optional(),
  customFields: ZCustomFieldAnswers.optional(),
  ...billingInputFields,
});
export const ZCheckoutStartResult = z.object({
  orderId: z.string(),
  paymentMethod: ZPaymentMethod,
  price: z.number(),
  currency: z.string(),
  redirectUrl: z.string().optional(),
  instructions: z.string().optional(),
});
export type TCheckoutStartResult = z.infer<typeof ZCheckoutStartResult>;

/**
 * `POST /api/checkout/billing`: the buyer's billing country, VAT id, name and address on a pending
 * order; its tax is worked out again and the checkout session answered, so the page shows the
 * tax before the buyer pays.
 */
export const ZCheckoutBillingInput = z.strictObject({
  orderId: ZId,
  token: ZBuyerToken,
  country: billingInputFields.country.unwrap(),
  taxId: billingInputFields.taxId.nullable(),
  billingName: billingInputFields.billingName,
  billingAddress: billingInputFields.billingAddress,
});
