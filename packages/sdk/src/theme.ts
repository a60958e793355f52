/**
 * The theme client: what a storefront theme calls from the buyer's browser (or its own
 * server). Public routes only, no secret: catalog, cart, checkout, embed checkout, coupons,
 * payment start, and the delivery a buyer opens with the order's checkout token.
 *
 * ```ts
 * const shop = createThemeClient({ baseUrl: 'https://svc.example', subdomain: 'acme' });
 * shop.cart.add(productId, 2); // kept in localStorage (theme-cart.ts)
 * const cart = await shop.cart.load(); // priced by the service
 * const { url } = await shop.cart.checkout();
 * location.assign(url);
 * ```
 */
import {
  browserStorage,
  cartStorageKey,
  storedCart,
  type Cart,
  type CartBilling,
  type CartLine,
  type CartStorage,
  type CheckoutParams,
  type CheckoutResult,
  type CouponCheck,
} from './theme-cart.js';
export { formatPrice, planLabel, planPriceText, trialText, yearlySaving } from './theme-plans.js';
export { cartTaxLine, type CartTaxLine } from './theme-tax.js';
import {
  createTransport,
  type ClientOptions,
  type CreateRequestOptions,
  type ProcedureInput as In,
  type ProcedureOutput as Out,
  type RequestOptions,
} from './transport.js';

/**
 * The store the theme sells for: its id, its subdomain, or both. The storefront and the
 * product listing are addressed by subdomain; everything else by id, which the client looks
 * up once (`GET /api/store/{subdomain}`) when only the subdomain is given.
 */
export type ThemeClientOptions = ClientOptions &
  ({ storeId: string; subdomain?: string | undefined } | { storeId?: undefined; subdomain: string }) & {
    /**
     * `test`: the storefront and the product listing show the store's test products (a theme
     * under development, docs/architecture.md, Test mode); carts, orders and payments take their products' mode.
     * Live by default. Test products are the seller's: pass `previewToken` too, else the store
     * answers with its live products.
     */
    mode?: 'live' | 'test' | undefined;
    /**
     * Where `shop.cart` keeps the buyer's cart: the browser's `localStorage` by default, or any
     * object with its `getItem`, `setItem` and `removeItem`. `null`, or a platform without
     * `localStorage` (a server): in memory, for as long as the client lives.
     */
    cartStorage?: CartStorage | null | undefined;
    /**
     * A preview token of the store (`svc_preview_…`, an hour long: the dashboard's `View store` in
     * test mode, or `GET /api/dashboard/stores/{storeId}/preview-token`), sent as
     * `Authorization: Bearer` with every call: it lets this client see and buy the store's test
     * products. Not a secret key: it opens nothing else. A theme's own server may pass a test key
     * (`sk_test_…`) here instead; never put a key in a browser.
     */
    previewToken?: string | undefined;
  };

export type {
  AppliedCoupon,
  Cart,
  CartBilling,
  CartCheckoutParams,
  CartLine,
  CartStorage,
  CheckoutParams,
  CheckoutResult,
  CouponCheck,
} from './theme-cart.js';
export type Storefront = Out<'catalog.storefront'>;
export type StorefrontProduct = Out<'catalog.products'>['products'][number];
export type { StorefrontPlan } from './theme-plans.js';
export type CreateOrderParams = Omit<In<'checkout.create'>, 'storeId' | 'cart'> & { cart: readonly CartLine[] };
export type CreatedOrder = Out<'checkout.create'>;
export type StartPaymentParams = In<'checkout.start'>;
export type PaymentStart = Out<'checkout.start'>;
export type Delivery = Out<'fulfilment.delivery'>;
export type DeliveredKeys = Out<'fulfilment.keys'>;
export type ClientGate = Out<'blacklist.clientGate'>;
export type TrackEvent = Omit<In<'tracking.track'>, 'storeId'>;

/** How the buyer proves the order is theirs: the checkout token, or the buyer's e-mail where the store allows it. */
export type OrderAccess = { orderId: string; token: string } | { orderId: string; email: string };

export type ThemeClient = ReturnType<typeof createThemeClient>;

export function createThemeClient(options: ThemeClientOptions) {
  if (!options.storeId && !options.subdomain) throw new TypeError('Pass the store: storeId, subdomain, or both.');
  const transport = createTransport(
    options.previewToken ? { ...options, headers: { authorization: `Bearer ${options.previewToken}` } } : options,
  );
  const read = { type: 'query', retry: 'safe' } as const;
  const safeWrite = { type: 'mutation', retry: 'safe' } as const;
  const once = { type: 'mutation', retry: 'rate-limit-only' } as const;
  const createOrder = { type: 'mutation', retry: 'safe', idempotent: true } as const;

  const subdomain = (): string => {
    if (!options.subdomain)
      throw new TypeError('This call needs the store subdomain: pass `subdomain` to createThemeClient.');
    return options.subdomain;
  };
  let knownStoreId: Promise<string> | undefined = options.storeId ? Promise.resolve(options.storeId) : undefined;
  const storeId = (opts?: RequestOptions): Promise<string> => {
    knownStoreId ??= transport.call('stores.lookup', { subdomain: subdomain() }, read, opts).then(
      (store) => store.id,
      (error: unknown) => {
        knownStoreId = undefined; // a failed lookup is tried again next time
        throw error;
      },
    );
    return knownStoreId;
  };
  const lines = (cart: readonly CartLine[]) =>
    cart.map(({ productId, planId, quantity }) =>
      planId === undefined || planId === null ? { productId, quantity } : { productId, planId, quantity },
    );
  const catalog = () =>
    options.mode === 'test' ? { subdomain: subdomain(), mode: 'test' as const } : { subdomain: subdomain() };
  const priceCart = async (
    cart: readonly CartLine[],
    opts?: RequestOptions,
    billing: CartBilling = {},
  ): Promise<Cart> =>
    transport.call(
      'checkout.cart',
      { storeId: await storeId(opts), cart: JSON.stringify(lines(cart)), ...billing },
      read,
      opts,
    );
  const checkout = async (params: CheckoutParams, opts?: CreateRequestOptions): Promise<CheckoutResult> =>
    transport.call(
      'checkout.checkout',
      { ...params, shopId: await storeId(opts), cart: lines(params.cart) },
      createOrder,
      opts,
    );
  const validateCoupon = async (
    params: { code: string; cart?: readonly CartLine[] },
    opts?: RequestOptions,
  ): Promise<CouponCheck> =>
    transport.call(
      'coupons.validate',
      { storeId: await storeId(opts), code: params.code, ...(params.cart ? { cart: lines(params.cart) } : {}) },
      safeWrite,
      opts,
    );
  // One cart per store and mode: by id when the client has it, else by subdomain (all a static theme knows).
  const cart = storedCart(
    () => (options.cartStorage === undefined ? browserStorage() : (options.cartStorage ?? undefined)),
    cartStorageKey(options.storeId ?? options.subdomain, options.mode ?? 'live'),
    { price: (cart, billing, opts) => priceCart(cart, opts, billing), validateCoupon, checkout },
  );

  return {
    /** The products this client shows: `live`, or `test` (the store's test products). */
    mode: options.mode ?? 'live',
    /** The store's id (looked up by subdomain the first time when only that was given). */
    storeId: (opts?: RequestOptions): Promise<string> => storeId(opts),
    /** The store (name, currency) and its active products. */
    storefront: async (opts?: RequestOptions): Promise<Storefront> =>
      transport.call('catalog.storefront', catalog(), read, opts),
    /** The store's active products. */
    products: async (opts?: RequestOptions): Promise<StorefrontProduct[]> =>
      (await transport.call('catalog.products', catalog(), read, opts)).products,
    /**
     * The buyer's cart, kept in `localStorage` (one per store and mode) and priced by the service:
     * `get` prices any lines; the rest work on the stored cart.
     */
    cart: {
      /**
       * The cart as the store will sell it: duplicate lines merged, unknown or unavailable
       * products dropped (`removed`), quantities clamped (`adjusted`), prices and subtotal; with
       * `billing`, its tax line for that country and VAT id (else for the request's own country).
       */
      get: priceCart,
      ...cart,
    },
    /**
     * Opens a pending order for the cart and answers the hosted checkout `url` to send the buyer
     * to. Sent with an Idempotency-Key, so a retried call never makes a second order.
     */
    checkout,
    /** As `checkout`, for the embeddable checkout (CORS open to every origin). */
    embedCheckout: async (params: CheckoutParams, opts?: CreateRequestOptions): Promise<CheckoutResult> =>
      transport.call(
        'checkout.embed',
        { ...params, shopId: await storeId(opts), cart: lines(params.cart) },
        createOrder,
        opts,
      ),
    /** Creates a pending order and answers it with its `checkoutToken`, for themes running their own checkout. */
    createOrder: async (params: CreateOrderParams, opts?: CreateRequestOptions): Promise<CreatedOrder> =>
      transport.call(
        'checkout.create',
        { ...params, storeId: await storeId(opts), cart: lines(params.cart) },
        createOrder,
        opts,
      ),
    /** Starts payment of a pending order with the chosen method: a `redirectUrl` or `instructions`. */
    startPayment: (params: StartPaymentParams, opts?: RequestOptions): Promise<PaymentStart> =>
      transport.call('checkout.start', params, once, opts),
    coupons: {
      /** Whether a code works here, and the discount it gives on `cart` when one is passed. */
      validate: validateCoupon,
    },
    /** Whether the store takes orders from this buyer (e-mail, and the caller's IP and country). */
    clientGate: async (params: { email?: string } = {}, opts?: RequestOptions): Promise<ClientGate> =>
      transport.call('blacklist.clientGate', { storeId: await storeId(opts), ...params }, safeWrite, opts),
    orders: {
      /** What a paid order delivers: keys, file links, instructions, manual-delivery state. */
      delivery: (access: OrderAccess, opts?: RequestOptions): Promise<Delivery> =>
        transport.call('fulfilment.delivery', access, read, opts),
      /** The license keys of a paid order. */
      keys: (access: OrderAccess, opts?: RequestOptions): Promise<DeliveredKeys> =>
        transport.call('fulfilment.keys', access, read, opts),
      /** Tries again to assign keys a restock may have made available. */
      tryAssignKeys: (access: OrderAccess, opts?: RequestOptions): Promise<Out<'fulfilment.tryAssignKeys'>> =>
        transport.call('fulfilment.tryAssignKeys', access, safeWrite, opts),
    },
    feedback: {
      /** One page of the store's published feedback. */
      list: async (
        params: { limit?: number; cursor?: string } = {},
        opts?: RequestOptions,
      ): Promise<Out<'feedback.list'>> =>
        transport.call('feedback.list', { storeId: await storeId(opts), ...params }, read, opts),
      /** The buyer's rating of a completed order. */
      create: (params: In<'feedback.create'>, opts?: RequestOptions): Promise<Out<'feedback.create'>> =>
        transport.call('feedback.create', params, once, opts),
    },
    /** Records a storefront event (page view, product view, add to cart, checkout start). */
    track: async (event: TrackEvent, opts?: RequestOptions): Promise<void> =>
      transport.call('tracking.track', { storeId: await storeId(opts), ...event }, once, opts),
  };
}
