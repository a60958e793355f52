import {
  ZCartQuery,
  ZCartResult,
  ZCheckoutBillingInput,
  ZCheckoutEnterInput,
  ZCheckoutInput,
  ZCheckoutResult,
  ZCheckoutSession,
  ZCheckoutStartInput,
  ZCheckoutStartResult,
  ZCreateOrderInput,
  ZCreateOrderResult,
} from '@svc/schemas';
import type { TErrorCode } from '@svc/schemas';
import { z } from 'zod';
import { AppError, invalidField } from '../../lib/errors.js';
import { buyerCountry } from '../../lib/geo.js';
import type { Context } from '../../modules/request/context.js';
import { replayable } from '../../trpc/idempotency.middleware.js';
import { publicProcedure, router } from '../../trpc/procedures.js';
import { testModeAccess } from '../../modules/access/test-mode.js';
import { hydrateCart } from '../../modules/catalog/cart.service.js';
import { findSellingStore } from '../../modules/stores/selling-store.js';
import { storeReturnUrl } from '../../modules/stores/origins.js';
import { setCheckoutCookie } from '../../modules/orders/checkout-cookie.js';
import { orderForToken } from '../../modules/orders/order-lookup.js';
import {
  checkoutSession,
  checkoutUrl,
  createOrder,
  startCheckout,
  updateCheckoutBilling,
  type BuyerContext,
} from '../../flows/place-order.js';

const theme = ['theme'];
const buyerTags = ['buyer'];
const MINUTE = 60_000;

function buyerOf(ctx: Context): BuyerContext {
  return {
    ip: ctx.caller.ip,
    userAgent: ctx.caller.userAgent,
    country: buyerCountry(ctx.caller),
    testMode: testModeAccess(ctx),
  };
}

/** What creating an order can refuse (checkout, embed, orders/create). */
const ORDER_ERRORS: TErrorCode[] = [
  'not_found',
  // A credential (test key, preview token) that does not open the store's test mode.
  'unauthorized',
  'store_banned',
  'cart_empty',
  'mixed_modes',
  'out_of_stock',
  'product_unavailable',
  'coupon_invalid',
  'blacklisted',
];
/** A checkout token that opens no order is 403; an unknown order 404. */
const TOKEN_ERRORS: TErrorCode[] = ['not_found', 'store_forbidden'];

type CheckoutInput = z.infer<typeof ZCheckoutInput>;

/**
 * The theme's `returnUrl`, checked against the store's origins before any order exists: the
 * checkout, pay and order pages link the store's name there (http/pages.ts checks it again).
 */
async function returnAddress(ctx: Context, input: CheckoutInput): Promise<string | undefined> {
  if (input.returnUrl === undefined) return undefined;
  const store = await findSellingStore(ctx, input.shopId);
  const address = storeReturnUrl(ctx.deps.config, store, input.returnUrl);
  if (!address)
    throw invalidField(
      'returnUrl',
      "The return address must be an http(s) address on one of the store's allowed origins.",
    );
  return address;
}

async function checkout(ctx: Context, input: CheckoutInput) {
  const back = await returnAddress(ctx, input);
  const { shopId, cart, email, coupon, customFields, country, taxId, billingName, billingAddress } = input;
  const { order, checkoutToken } = await createOrder(
    ctx,
    { store: shopId, cart, email, coupon, customFields, country, taxId, billingName, billingAddress },
    buyerOf(ctx),
  );
  const url = checkoutUrl(ctx.deps.config.publicUrl, order.id, checkoutToken);
  return { url: back ? `${url}&return=${encodeURIComponent(back)}` : url, orderId: order.id };
}

export const checkoutRouter = router({
  cart: publicProcedure
    .meta({
      openapi: { method: 'GET', path: '/v1/cart', tags: theme, summary: 'Normalise and price a cart' },
      errors: ['not_found', 'store_banned', 'mixed_modes', 'unauthorized'],
    })
    .input(ZCartQuery)
    .output(ZCartResult)
    .query(({ ctx, input }) => hydrateCart(ctx, input, testModeAccess(ctx), () => buyerCountry(ctx.caller))),

  checkout: publicProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/v1/checkout',
        tags: theme,
        summary: 'Create a pending order from a cart; answers its checkout page',
      },
      idempotency: { storeField: 'shopId' },
      errors: ORDER_ERRORS,
    })
    .input(ZCheckoutInput)
    .output(ZCheckoutResult)
    .mutation(replayable(({ ctx, input }: { ctx: Context; input: CheckoutInput }) => checkout(ctx, input))),

  embed: publicProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/embed/checkout',
        tags: theme,
        summary: 'Checkout from an embed on any site (CORS open)',
      },
      rateLimit: { name: 'embed.checkout', max: 30, windowMs: MINUTE, bareBody: true },
      idempotency: { storeField: 'shopId' },
      errors: ORDER_ERRORS,
    })
    .input(ZCheckoutInput)
    .output(ZCheckoutResult)
    .mutation(replayable(({ ctx, input }: { ctx: Context; input: CheckoutInput }) => checkout(ctx, input))),

  create: publicProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/orders/create',
        tags: buyerTags,
        summary: 'Create a pending order; answers it with its checkout token',
      },
      successStatus: 201,
      rateLimit: { name: 'orders.create', max: 10, windowMs: MINUTE },
      idempotency: { storeField: 'storeId' },
      errors: ORDER_ERRORS,
    })
    .input(ZCreateOrderInput)
    .output(ZCreateOrderResult)
    .mutation(
      replayable(({ ctx, input }: { ctx: Context; input: z.infer<typeof ZCreateOrderInput> }) =>
        createOrder(ctx, { ...input, store: input.storeId }, buyerOf(ctx)),
      ),
    ),

  enter: publicProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/checkout/enter',
        tags: buyerTags,
        summary: 'Open an order with its checkout token; sets the svc_checkout cookie',
      },
      errors: TOKEN_ERRORS,
    })
    .input(ZCheckoutEnterInput)
    .output(ZCheckoutSession)
    .mutation(async ({ ctx, input }) => {
      const order = await orderForToken(ctx, input.orderId, input.token);
      setCheckoutCookie(ctx.answer, ctx.deps.config, { orderId: order.id, token: input.token });
      return checkoutSession(ctx, order);
    }),

  start: publicProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/checkout/start',
        tags: buyerTags,
        summary: 'Choose how to pay a pending order; answers a redirect or instructions',
      },
      rateLimit: { name: 'checkout.start', max: 15, windowMs: MINUTE },
      errors: [...TOKEN_ERRORS, 'order_not_pending', 'blacklisted', 'coupon_invalid'],
    })
    .input(ZCheckoutStartInput)
    .output(ZCheckoutStartResult)
    .mutation(({ ctx, input }) => startCheckout(ctx, input, buyerOf(ctx))),

  billing: publicProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/checkout/billing',
        tags: buyerTags,
        summary: "Set a pending order's billing country, VAT id, name and address; answers the session with its tax",
      },
      rateLimit: { name: 'checkout.billing', max: 30, windowMs: MINUTE },
      errors: [...TOKEN_ERRORS, 'order_not_pending'],
    })
    .input(ZCheckoutBillingInput)
    .output(ZCheckoutSession)
    .mutation(({ ctx, input }) => updateCheckoutBilling(ctx, input)),

  session: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/checkout/session',
        tags: buyerTags,
        summary: 'The order the svc_checkout cookie opens',
      },
      errors: ['unauthorized', ...TOKEN_ERRORS],
    })
    .input(z.strictObject({}).optional())
    .output(ZCheckoutSession)
    .query(async ({ ctx }) => {
      const cookie = ctx.caller.credentials.checkout;
      if (!cookie) throw new AppError('unauthorized', 'Open the checkout link first.');
      return checkoutSession(ctx, await orderForToken(ctx, cookie.orderId, cookie.token));
    }),
});
