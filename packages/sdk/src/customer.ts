/**
 * The customer client: a buyer signed in to one store with an e-mailed code, as a theme's
 * "my orders" page uses it. In a browser the session is the `svc_customer` cookie (sent with
 * `credentials: 'include'`, so the theme's origin must be one the store allows); elsewhere
 * the client keeps that cookie itself.
 *
 * ```ts
 * const me = createCustomerClient({ baseUrl: 'https://svc.example', storeId });
 * await me.auth.requestCode({ email });
 * await me.auth.verify({ email, code });   // the code from the e-mail
 * const { orders } = await me.orders.list();
 * const { subscriptions } = await me.subscriptions.list();
 * ```
 */
import { walkPages } from './paging.js';
import {
  createTransport,
  type ClientOptions,
  type ProcedureInput as In,
  type ProcedureOutput as Out,
  type RequestOptions,
} from './transport.js';

export interface CustomerClientOptions extends ClientOptions {
  /** The store the buyer signs in to. */
  storeId: string;
}

export type Customer = Out<'customer.verify'>['customer'];
export type CustomerOrderList = Out<'customer.orders'>;
export type CustomerOrder = Out<'customer.order'>;
export type CustomerOrderSummary = CustomerOrderList['orders'][number];
export type CustomerSubscriptionList = Out<'customer.subscriptions'>;
export type CustomerSubscription = Out<'customer.cancelSubscription'>;
/** Where the buyer goes next (open it in the browser). */
export type CustomerSubscriptionLink = Out<'customer.paySubscription'>;

export type CustomerClient = ReturnType<typeof createCustomerClient>;

export function createCustomerClient(options: CustomerClientOptions) {
  if (typeof options.storeId !== 'string' || options.storeId.length === 0) throw new TypeError('storeId is required.');
  const { storeId } = options;
  const inBrowser = typeof (globalThis as { document?: unknown }).document !== 'undefined';
  const transport = createTransport({ ...options, credentials: 'include', cookieJar: !inBrowser });
  const read = { type: 'query', retry: 'safe' } as const;
  const once = { type: 'mutation', retry: 'rate-limit-only' } as const;

  const orders = {
    /** One page of the buyer's orders in this store, newest first. */
    list: (params: In<'customer.orders'> = {}, opts?: RequestOptions): Promise<CustomerOrderList> =>
      transport.call('customer.orders', params, read, opts),
    /** One of the buyer's orders. */
    get: (params: { orderId: string }, opts?: RequestOptions): Promise<CustomerOrder> =>
      transport.call('customer.order', params, read, opts),
    /** Every order of the buyer, across all pages. */
    iterate: (
      params: { limit?: number } = {},
      opts?: RequestOptions,
    ): AsyncGenerator<CustomerOrderSummary, void, undefined> =>
      walkPages(
        (cursor) => orders.list({ limit: 100, ...params, ...(cursor === undefined ? {} : { cursor }) }, opts),
        (page) => page.orders,
      ),
  };

  const subscriptions = {
    /** The buyer's subscriptions in this store, newest first, each with its latest orders. */
    list: (opts?: RequestOptions): Promise<CustomerSubscriptionList> =>
      transport.call('customer.subscriptions', undefined, read, opts),
    /** Cancel at the period end (a past-due or paused one ends now); a second cancel is 409 invalid_transition. */
    cancel: (params: In<'customer.cancelSubscription'>, opts?: RequestOptions): Promise<CustomerSubscription> =>
      transport.call('customer.cancelSubscription', params, once, opts),
    /** Undo a scheduled cancel. */
    resume: (params: { subscriptionId: string }, opts?: RequestOptions): Promise<CustomerSubscription> =>
      transport.call('customer.resumeSubscription', params, once, opts),
    /** The gateway's page where the buyer saves a new card for the renewals. */
    updatePaymentMethod: (
      params: { subscriptionId: string },
      opts?: RequestOptions,
    ): Promise<CustomerSubscriptionLink> => transport.call('customer.updatePaymentMethod', params, once, opts),
    /** A past-due subscription's unpaid renewal: the address of its checkout. */
    pay: (params: { subscriptionId: string }, opts?: RequestOptions): Promise<CustomerSubscriptionLink> =>
      transport.call('customer.paySubscription', params, once, opts),
  };

  return {
    storeId,
    auth: {
      /** E-mails a 6-digit sign-in code (answers the same whether or not the address has orders). */
      requestCode: (params: { email: string; mode?: 'live' | 'test' }, opts?: RequestOptions): Promise<void> =>
        transport.call('customer.start', { storeId, ...params }, once, opts),
      /** Exchanges the code for the session. */
      verify: (
        params: { email: string; code: string; mode?: 'live' | 'test' },
        opts?: RequestOptions,
      ): Promise<Customer> =>
        transport.call('customer.verify', { storeId, ...params }, once, opts).then((answer) => answer.customer),
      /** Ends the session. */
      logout: async (opts?: RequestOptions): Promise<void> => {
        await transport.call('customer.logout', undefined, once, opts);
        transport.clearCookies();
      },
    },
    /** The signed-in buyer. */
    profile: (opts?: RequestOptions): Promise<Out<'customerDashboard.profile'>> =>
      transport.call('customerDashboard.profile', undefined, read, opts),
    orders,
    subscriptions,
  };
}
