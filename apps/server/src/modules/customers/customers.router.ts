import {
  ZBuyerOrder,
  ZCustomer,
  ZCustomerAuthStart,
  ZCustomerAuthVerify,
  ZCustomerOrderInput,
  ZCustomerOrderList,
  ZCustomerOrdersQuery,
  ZCustomerSession,
} from '@svc/schemas';
import { z } from 'zod';
import { clearCookie, readCookie, setCookie } from '../../lib/cookies.js';
import { customerProcedure } from '../../trpc/guards.js';
import { publicProcedure, router } from '../../trpc/procedures.js';
import {
  CUSTOMER_COOKIE,
  customerCookieOptions,
  endCustomerSession,
  getCustomerOrder,
  listCustomerOrders,
  startCustomerLogin,
  toCustomerView,
  verifyCustomerLogin,
} from './customers.service.js';

const tags = ['customer'];
const themeTags = ['customer dashboard (themes)'];

export const customersRouter = router({
  start: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/customer/auth/start', tags, summary: 'E-mail a 6-digit sign-in code for a store', protect: false },
      successStatus: 204,
      rateLimit: { name: 'customer.code', max: 5, windowMs: 15 * 60_000 },
    })
    .input(ZCustomerAuthStart)
    .output(z.void())
    .mutation(({ ctx, input }) => startCustomerLogin(ctx, input)),

  verify: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/customer/auth/verify', tags, summary: 'Exchange the code for a svc_customer session', protect: false },
      rateLimit: { name: 'customer.verify', max: 20, windowMs: 15 * 60_000 },
    })
    .input(ZCustomerAuthVerify)
    .output(ZCustomerSession)
    .mutation(async ({ ctx, input }) => {
      const { customer, token } = await verifyCustomerLogin(ctx, input);
      setCookie(ctx.res, CUSTOMER_COOKIE, token, customerCookieOptions(ctx.deps.config));
      return { customer };
    }),

  logout: publicProcedure
    .meta({ openapi: { method: 'POST', path: '/customer/auth/logout', tags, summary: 'Sign the customer out', protect: false }, successStatus: 204 })
    .input(z.strictObject({}).optional())
    .output(z.void())
    .mutation(async ({ ctx }) => {
      await endCustomerSession(ctx, readCookie(ctx.req, CUSTOMER_COOKIE));
      clearCookie(ctx.res, CUSTOMER_COOKIE, customerCookieOptions(ctx.deps.config));
    }),

  orders: customerProcedure
    .meta({ openapi: { method: 'GET', path: '/customer/orders', tags, summary: "The buyer's orders in this store", protect: false }, auth: 'customer' })
    .input(ZCustomerOrdersQuery)
    .output(ZCustomerOrderList)
    .query(({ ctx, input }) => listCustomerOrders(ctx, ctx.customer, input)),

  order: customerProcedure
    .meta({ openapi: { method: 'GET', path: '/customer/orders/{orderId}', tags, summary: 'One of the buyer\'s orders', protect: false }, auth: 'customer' })
    .input(ZCustomerOrderInput)
    .output(ZBuyerOrder)
    .query(({ ctx, input }) => getCustomerOrder(ctx, ctx.customer, input.orderId)),
});

/** The same data for themes, under /api/v1/customer-dashboard/ (CORS for the store's own origins). */
export const customerDashboardRouter = router({
  orders: customerProcedure
    .meta({ openapi: { method: 'GET', path: '/v1/customer-dashboard/orders', tags: themeTags, summary: "The buyer's orders in this store", protect: false }, auth: 'customer' })
    .input(ZCustomerOrdersQuery)
    .output(ZCustomerOrderList)
    .query(({ ctx, input }) => listCustomerOrders(ctx, ctx.customer, input)),

  order: customerProcedure
    .meta({ openapi: { method: 'GET', path: '/v1/customer-dashboard/orders/{orderId}', tags: themeTags, summary: 'One of the buyer\'s orders', protect: false }, auth: 'customer' })
    .input(ZCustomerOrderInput)
    .output(ZBuyerOrder)
    .query(({ ctx, input }) => getCustomerOrder(ctx, ctx.customer, input.orderId)),

  profile: customerProcedure
    .meta({ openapi: { method: 'GET', path: '/v1/customer-dashboard/profile', tags: themeTags, summary: 'The signed-in buyer', protect: false }, auth: 'customer' })
    .input(z.strictObject({}).optional())
    .output(ZCustomer)
    .query(({ ctx }) => toCustomerView(ctx.customer)),
});
