/**
 * The customer area: sign-in with an e-mailed code (`/customer/auth/...`), and the signed-in
 * buyer's orders, built once and served twice: under /customer for the hosted pages and under
 * /v1/customer-dashboard for themes (CORS for the store's own origins, with credentials).
 */
import {
  ZBuyerOrder,
  ZCustomer,
  ZCustomerAuthStart,
  ZCustomerCancelSubscriptionInput,
  ZCustomerSubscription,
  ZCustomerSubscriptionIdInput,
  ZCustomerSubscriptionLink,
  ZCustomerSubscriptionList,
  ZCustomerAuthVerify,
  ZCustomerOrderInput,
  ZCustomerOrderList,
  ZCustomerOrdersQuery,
  ZCustomerList,
  ZCustomerSession,
  ZListCustomersQuery,
} from '@svc/schemas';
import { z } from 'zod';
import { customerProcedure, publicProcedure, router, storeProcedure } from '../../trpc/procedures.js';
import { clearCustomerCookie, setCustomerCookie } from '../../modules/customers/customer-cookie.js';
import {
  endCustomerSession,
  getCustomerOrder,
  listCustomerOrders,
  listStoreCustomers,
  startCustomerLogin,
  toCustomerView,
  verifyCustomerLogin,
} from '../../modules/customers/customers.service.js';
import {
  cancelCustomerSubscription,
  listCustomerSubscriptions,
  payPastDueUrl,
  paymentMethodUpdateUrl,
  resumeCustomerSubscription,
} from '../../flows/customer-subscriptions.js';

const tags = ['customer'];
const themeTags = ['customer dashboard (themes)'];

/** The sign-in routes are called from the store's own origins too, before there is a session. */
const customerSignIn = publicProcedure.meta({ cors: 'store-origins' });

/** The buyer's orders, the same under both prefixes. */
function customerOrderRoutes(base: '/customer' | '/v1/customer-dashboard', routeTags: string[]) {
  return {
    orders: customerProcedure
      .meta({
        openapi: {
          method: 'GET',
          path: `${base}/orders`,
          tags: routeTags,
          summary: "The buyer's orders in this store",
        },
        errors: [],
      })
      .input(ZCustomerOrdersQuery)
      .output(ZCustomerOrderList)
      .query(({ ctx, input }) => listCustomerOrders(ctx, ctx.customer, input)),
    order: customerProcedure
      .meta({
        openapi: {
          method: 'GET',
          path: `${base}/orders/{orderId}`,
          tags: routeTags,
          summary: "One of the buyer's orders",
        },
        errors: ['not_found'],
      })
      .input(ZCustomerOrderInput)
      .output(ZBuyerOrder)
      .query(({ ctx, input }) => getCustomerOrder(ctx, ctx.customer, input.orderId)),
  };
}

export const customersRouter = router({
  start: customerSignIn
    .meta({
      openapi: {
        method: 'POST',
        path: '/customer/auth/start',
        tags,
        summary: 'E-mail a 6-digit sign-in code for a store',
      },
      successStatus: 204,
      rateLimit: { name: 'customer.code', max: 5, windowMs: 15 * 60_000 },
      errors: ['not_found'],
    })
    .input(ZCustomerAuthStart)
    .output(z.void())
    .mutation(({ ctx, input }) => startCustomerLogin(ctx, input)),

  verify: customerSignIn
    .meta({
      openapi: {
        method: 'POST',
        path: '/customer/auth/verify',
        tags,
        summary: 'Exchange the code for a svc_customer session',
      },
      rateLimit: { name: 'customer.verify', max: 20, windowMs: 15 * 60_000 },
      errors: ['not_found', 'token_invalid'],
    })
    .input(ZCustomerAuthVerify)
    .output(ZCustomerSession)
    .mutation(async ({ ctx, input }) => {
      const { customer, token } = await verifyCustomerLogin(ctx, input);
      setCustomerCookie(ctx.answer, ctx.deps.config, token);
      return { customer };
    }),

  logout: customerSignIn
    .meta({
      openapi: { method: 'POST', path: '/customer/auth/logout', tags, summary: 'Sign the customer out' },
      successStatus: 204,
      // From an origin of another store (the session's store's origin rule).
      errors: ['store_forbidden'],
    })
    .input(z.strictObject({}).optional())
    .output(z.void())
    .mutation(async ({ ctx }) => {
      await endCustomerSession(ctx, ctx.caller.credentials.customerToken);
      clearCustomerCookie(ctx.answer, ctx.deps.config);
    }),

  ...customerOrderRoutes('/customer', tags),

  subscriptions: customerProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/customer/subscriptions',
        tags,
        summary: "The buyer's subscriptions in this store, newest first, each with its latest orders",
      },
      errors: [],
    })
    .input(z.strictObject({}).optional())
    .output(ZCustomerSubscriptionList)
    .query(({ ctx }) => listCustomerSubscriptions(ctx)),

  cancelSubscription: customerProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/customer/subscriptions/{subscriptionId}/cancel',
        tags,
        summary:
          'Cancel at the period end (a past-due or paused one ends now); a second cancel is 409 invalid_transition',
      },
      errors: ['not_found', 'invalid_transition'],
    })
    .input(ZCustomerCancelSubscriptionInput)
    .output(ZCustomerSubscription)
    .mutation(({ ctx, input }) => cancelCustomerSubscription(ctx, input)),

  resumeSubscription: customerProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/customer/subscriptions/{subscriptionId}/resume',
        tags,
        summary: 'Undo a scheduled cancel',
      },
      errors: ['not_found', 'invalid_transition', 'gateway_error'],
    })
    .input(ZCustomerSubscriptionIdInput)
    .output(ZCustomerSubscription)
    .mutation(({ ctx, input }) => resumeCustomerSubscription(ctx, input)),

  updatePaymentMethod: customerProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/customer/subscriptions/{subscriptionId}/payment-method',
        tags,
        summary:
          "Where to save a new card for the renewals: the gateway's own page (refused for an ended subscription)",
      },
      errors: ['not_found', 'invalid_transition', 'gateway_error'],
    })
    .input(ZCustomerSubscriptionIdInput)
    .output(ZCustomerSubscriptionLink)
    .mutation(({ ctx, input }) => paymentMethodUpdateUrl(ctx, input)),

  paySubscription: customerProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/customer/subscriptions/{subscriptionId}/pay',
        tags,
        summary: "A past-due subscription's unpaid renewal: the address of its checkout",
      },
      errors: ['not_found', 'invalid_transition'],
    })
    .input(ZCustomerSubscriptionIdInput)
    .output(ZCustomerSubscriptionLink)
    .mutation(({ ctx, input }) => payPastDueUrl(ctx, input)),
});

/** The same data for themes, under /api/v1/customer-dashboard/. */
export const customerDashboardRouter = router({
  ...customerOrderRoutes('/v1/customer-dashboard', themeTags),

  profile: customerProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/v1/customer-dashboard/profile',
        tags: themeTags,
        summary: 'The signed-in buyer',
      },
      errors: [],
    })
    .input(z.strictObject({}).optional())
    .output(ZCustomer)
    .query(({ ctx }) => toCustomerView(ctx.customer)),
});

/** The seller's view of the store's customers (the dashboard's Customers screen). */
export const storeCustomersRouter = router({
  dashboardList: storeProcedure('viewOrders')
    .meta({
      openapi: {
        method: 'GET',
        path: '/dashboard/stores/{storeId}/customers',
        tags: ['dashboard'],
        summary:
          "The store's customers (every buyer, signed in or not) by e-mail, with their paid orders, spend and last order",
      },
      errors: ['not_found'],
    })
    .input(ZListCustomersQuery)
    .output(ZCustomerList)
    .query(({ ctx, input }) => listStoreCustomers(ctx, input)),
});
