import {
  ZCartQuery,
  ZCartResult,
  ZCheckoutEnterInput,
  ZCheckoutInput,
  ZCheckoutResult,
  ZCheckoutSession,
  ZCheckoutStartInput,
  ZCheckoutStartResult,
  ZCreateOrderInput,
  ZCreateOrderResult,
} from '@svc/schemas';
import { z } from 'zod';
import { readCookie, setCookie } from '../../lib/cookies.js';
import { AppError } from '../../lib/errors.js';
import { buyerCountry } from '../../lib/geo.js';
import type { Context } from '../../trpc/context.js';
import { publicProcedure, router } from '../../trpc/procedures.js';
import { hydrateCart } from './cart.service.js';
import { CHECKOUT_COOKIE, checkoutSession, checkoutUrl, createOrder, orderForToken, startCheckout, type BuyerContext } from './checkout.service.js';

const theme = ['theme'];
const buyerTags = ['buyer'];
const MINUTE = 60_000;

function buyerOf(ctx: Context): BuyerContext {
  const userAgent = ctx.req.headers['user-agent'];
  return { ip: ctx.ip, userAgent: typeof userAgent === 'string' ? userAgent : undefined, country: buyerCountry(ctx.deps.config, ctx.req) };
}

async function checkout(ctx: Context, input: z.infer<typeof ZCheckoutInput>) {
  const { order, checkoutToken } = await createOrder(ctx, { ...input, store: input.shopId }, buyerOf(ctx));
  return { url: checkoutUrl(ctx.deps.config.publicUrl, order.id, checkoutToken), orderId: order.id };
}

function checkoutCookieOptions(ctx: Context) {
  return { maxAgeSeconds: 30 * 24 * 3600, secure: ctx.deps.config.isProduction, sameSite: 'Lax' as const };
}

export const checkoutRouter = router({
  cart: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/v1/cart', tags: theme, summary: 'Normalise and price a cart', protect: false } })
    .input(ZCartQuery)
    .output(ZCartResult)
    .query(({ ctx, input }) => hydrateCart(ctx, input)),

  checkout: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/v1/checkout', tags: theme, summary: 'Create a pending order from a cart; answers its checkout page', protect: false },
      idempotent: true,
    })
    .input(ZCheckoutInput)
    .output(ZCheckoutResult)
    .mutation(({ ctx, input }) => checkout(ctx, input)),

  embed: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/embed/checkout', tags: theme, summary: 'Checkout from an embed on any site (CORS open)', protect: false },
      rateLimit: { name: 'embed.checkout', max: 30, windowMs: MINUTE, bareBody: true },
      idempotent: true,
    })
    .input(ZCheckoutInput)
    .output(ZCheckoutResult)
    .mutation(({ ctx, input }) => checkout(ctx, input)),

  create: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/orders/create', tags: buyerTags, summary: 'Create a pending order; answers it with its checkout token', protect: false },
      successStatus: 201,
      rateLimit: { name: 'orders.create', max: 10, windowMs: MINUTE },
      idempotent: true,
    })
    .input(ZCreateOrderInput)
    .output(ZCreateOrderResult)
    .mutation(({ ctx, input }) => createOrder(ctx, { ...input, store: input.storeId }, buyerOf(ctx))),

  enter: publicProcedure
    .meta({ openapi: { method: 'POST', path: '/checkout/enter', tags: buyerTags, summary: 'Open an order with its checkout token; sets the svc_checkout cookie', protect: false } })
    .input(ZCheckoutEnterInput)
    .output(ZCheckoutSession)
    .mutation(async ({ ctx, input }) => {
      const order = await orderForToken(ctx.em, input.orderId, input.token);
      setCookie(ctx.res, CHECKOUT_COOKIE, `${order.id}.${input.token}`, checkoutCookieOptions(ctx));
      return checkoutSession(ctx, order);
    }),

  start: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/checkout/start', tags: buyerTags, summary: 'Choose how to pay a pending order; answers a redirect or instructions', protect: false },
      rateLimit: { name: 'checkout.start', max: 15, windowMs: MINUTE },
    })
    .input(ZCheckoutStartInput)
    .output(ZCheckoutStartResult)
    .mutation(({ ctx, input }) => startCheckout(ctx, input, buyerOf(ctx))),

  session: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/checkout/session', tags: buyerTags, summary: 'The order the svc_checkout cookie opens', protect: false } })
    .input(z.strictObject({}).optional())
    .output(ZCheckoutSession)
    .query(async ({ ctx }) => {
      const [orderId, token] = (readCookie(ctx.req, CHECKOUT_COOKIE) ?? '').split('.');
      if (!orderId || !token) throw new AppError('unauthorized', 'Open the checkout link first.');
      return checkoutSession(ctx, await orderForToken(ctx.em, orderId, token));
    }),
});
