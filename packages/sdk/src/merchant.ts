/**
 * The merchant client: server-side code holding an `sk_live_` or `sk_test_` API key (its `mode`). Orders (read, update, mark paid, refund,
 * walk every page), the tax report, webhook endpoints (every operation, deliveries, retry, replay), licenses, subscriptions,
 * coupons, products and their key stock, the store itself (name and look), the store's events
 * (what a reconciliation of missed webhooks walks), and deleting the store's test data (a test key).
 *
 * ```ts
 * const svc = createMerchantClient({ baseUrl: 'https://svc.example', apiKey: process.env.SVC_API_KEY! });
 * for await (const order of svc.orders.iterate({ storeId, status: 'paid' })) console.log(order.orderId);
 * ```
 */
import { createDownload } from './download.js';
import type { Subscription } from './models.js';
import { walkPages } from './paging.js';
import type { WebhookEvent, WebhookEventName } from './webhooks-events.js';
import {
  createTransport,
  type ClientOptions,
  type ProcedureInput as In,
  type ProcedureOutput as Out,
  type RequestOptions,
} from './transport.js';

export interface MerchantClientOptions extends ClientOptions {
  /**
   * A merchant API key (`sk_live_…` or `sk_test_…`), created in the dashboard; never ship it to a
   * browser. A test key reads and writes only the store's test objects (its `mode`).
   */
  apiKey: string;
}

/** The objects a key reads and writes: `live`, or `test` for an `sk_test_` key (test mode). */
export type MerchantMode = 'live' | 'test';

export type OrderList = Out<'orders.list'>;
export type OrderListParams = In<'orders.list'>;
export type OrderSummary = OrderList['orders'][number];
/** One order as the seller reads it: the detail, its `lines` (what each delivered, keys masked) and the buyer's `orderUrl`. */
export type OrderDetails = Out<'orders.get'>;
export type OrderLine = OrderDetails['lines'][number];
export type OrderUpdateParams = In<'orders.update'>;
export type Webhook = Out<'webhooks.get'>;
export type WebhookWithSecret = Out<'webhooks.create'>;
export type WebhookCreateParams = In<'webhooks.create'>;
export type WebhookUpdateParams = In<'webhooks.update'>;
export type WebhookDeliveryList = Out<'webhooks.deliveries'>;
export type WebhookDeliveryListParams = In<'webhooks.deliveries'>;
export type WebhookDelivery = WebhookDeliveryList['deliveries'][number];
export type WebhookReplayParams = In<'webhooks.replay'>;

export type LicenseListParams = In<'licenses.list'>;
export type LicenseList = Out<'licenses.list'>;
export type StoreLicense = Out<'licenses.get'>;

export type SubscriptionListParams = In<'subscriptions.list'>;
export type SubscriptionList = Out<'subscriptions.list'>;
/** `atPeriodEnd` (default true: it runs to the period end; false: it ends now) and `reason`. */
export type SubscriptionCancelParams = In<'subscriptions.cancel'>;
/** `resumesAt`, after the current period end: it resumes by itself then. */
export type SubscriptionPauseParams = In<'subscriptions.pause'>;
/** `planId` (of the same product), `quantity` (seats) and `prorate` (default true: now; false: at the next renewal). */
export type SubscriptionUpdateParams = In<'subscriptions.update'>;
/** `planId` and `quantity` as `update` takes them: what that change would charge now, without making it. */
export type SubscriptionPreviewUpdateParams = In<'subscriptions.previewUpdate'>;
/** What a prorated change would charge now (`amountDue`) and bill afterwards (`amount`, `nextChargeAt`). */
export type SubscriptionUpdatePreview = Out<'subscriptions.previewUpdate'>;
/** `to`: the test clock's new time (after its `clockTime`, at most 2 years later). */
export type SubscriptionAdvanceParams = In<'subscriptions.advance'>;
/** What advancing a test clock did: the subscription, the orders it created, the event types it emitted. */
export type SubscriptionAdvance = Out<'subscriptions.advance'>;

/**
 * `from` (inclusive) and `to` (exclusive): instants with an offset (`2026-04-01T00:00:00Z`), at most
 * 400 days apart. The SDK answers JSON; the same rows as CSV are `format=csv` on the REST path.
 */
export type TaxReportParams = Omit<In<'reports.tax'>, 'format'>;
/** Per country, rate, reverse charge and currency: `taxable` and `tax` of the period's invoices less its credit notes; `totals` per currency. */
export type TaxReport = Out<'reports.tax'>;
export type TaxReportRow = TaxReport['rows'][number];

export type Product = Out<'catalog.get'>;
export type ProductPage = Out<'catalog.list'>;
export type ProductListParams = In<'catalog.list'>;
export type ProductCreateParams = In<'catalog.create'>;
export type ProductUpdateParams = In<'catalog.update'>;
/** One of a product's images: WebP renditions at up to two widths (`variants`), narrowest first. */
export type ProductImage = Product['images'][number];
export type ProductImageOrderParams = In<'catalog.reorderImages'>;
export type ProductImageList = Out<'catalog.reorderImages'>;
export type LicenseKeyImportParams = In<'catalog.importKeys'>;
export type LicenseKeyImportResult = Out<'catalog.importKeys'>;
export type LicenseKeyListParams = In<'catalog.keys'>;
export type LicenseKeyList = Out<'catalog.keys'>;

/** Identifies one product of a store. */
export interface ProductRef {
  storeId: string;
  productId: string;
}

/** The events list's filters; with `type`, the answer's events are typed as that event. */
export type EventListParams<E extends WebhookEventName = WebhookEventName> = Omit<In<'events.list'>, 'type'> & {
  type?: E;
};
/** One page of events, each discriminated on `event` (narrow `data` with `if (e.event === 'order.paid')`). */
export type EventList<E extends WebhookEventName = WebhookEventName> = Omit<Out<'events.list'>, 'events'> & {
  events: Array<WebhookEvent<E>>;
};
/** One event as its webhook deliveries carry it: the same type as `constructEvent`'s answer. */
export type StoredEvent<E extends WebhookEventName = WebhookEventName> = WebhookEvent<E>;
export type Coupon = Out<'coupons.get'>;
export type CouponList = Out<'coupons.list'>;
export type CouponCreateParams = In<'coupons.create'>;
export type CouponUpdateParams = In<'coupons.update'>;

/** The store as a merchant key reads it: name, currency, its look (description, accentColor, logoUrl), origins, settings. */
export type MerchantStore = Out<'stores.merchantGet'>;
/** `name`, `description` (plain text) and `accentColor` (`#rrggbb`, null for the default); what is left out stays. */
export type StoreUpdateParams = In<'stores.merchantUpdate'>;

/** A job deleting a store's test data: `status` (queued, running, succeeded, failed) and the rows `deleted` by table. */
export type TestDataJob = Out<'testData.merchantGet'>;

/** Identifies one coupon of a store. */
export interface CouponRef {
  storeId: string;
  couponId: string;
}

/** Identifies one license (a sold license key) of a store. */
export interface LicenseRef {
  storeId: string;
  licenseId: string;
}

/** Identifies one subscription of a store. */
export interface SubscriptionRef {
  storeId: string;
  subscriptionId: string;
}

/** Identifies one webhook endpoint of a store. */
export interface WebhookRef {
  storeId: string;
  webhookId: string;
}

export type MerchantClient = ReturnType<typeof createMerchantClient>;

const API_KEY = /^sk_(?:live_|test_)?[A-Za-z0-9]{20,}$/;

export function createMerchantClient(options: MerchantClientOptions) {
  if (typeof options.apiKey !== 'string' || options.apiKey !== options.apiKey.trim() || !API_KEY.test(options.apiKey)) {
    throw new TypeError(
      'apiKey must be a merchant API key (sk_live_ or sk_test_ followed by letters and digits, no whitespace).',
    );
  }
  // Keys issued before modes (`sk_` and the rest) are live.
  const mode: MerchantMode = options.apiKey.startsWith('sk_test_') ? 'test' : 'live';
  const transport = createTransport({ ...options, headers: { authorization: `Bearer ${options.apiKey}` } });
  const read = { type: 'query', retry: 'safe' } as const;
  const update = { type: 'mutation', retry: 'safe' } as const;
  const once = { type: 'mutation', retry: 'rate-limit-only' } as const;
  const download = createDownload({ ...options, headers: { authorization: `Bearer ${options.apiKey}` } });
  const orderPath = (params: { storeId: string; orderId: string }, document: string) =>
    `/merchant/v1/stores/${encodeURIComponent(params.storeId)}/orders/${encodeURIComponent(params.orderId)}/${document}`;

  const orders = {
    /** One page of the store's orders, newest first (`GET /merchant/v1/stores/{storeId}/orders`). */
    list: (params: OrderListParams, opts?: RequestOptions): Promise<OrderList> =>
      transport.call('orders.list', params, read, opts),
    /** One order with its note, custom-field answers, lines (what each delivered, keys masked) and the buyer's `orderUrl`. */
    get: (params: { storeId: string; orderId: string }, opts?: RequestOptions): Promise<OrderDetails> =>
      transport.call('orders.get', params, read, opts),
    /** Set the note or mark the manual delivery done. */
    update: (params: OrderUpdateParams, opts?: RequestOptions): Promise<OrderDetails> =>
      transport.call('orders.update', params, update, opts),
    /**
     * Settles a manual payment for the order's full price (scope order:update): the order is paid and
     * fulfilled as a payment would, `order.paid` is sent. Only a pending order: otherwise 400 `order_not_pending`.
     */
    markPaid: (params: { storeId: string; orderId: string }, opts?: RequestOptions): Promise<OrderDetails> =>
      transport.call('orders.markPaid', params, once, opts),
    /**
     * Refunds a paid order (scope order:refund): a Stripe payment is refunded at Stripe first (502 `gateway_error`,
     * nothing changed, when Stripe refuses), its keys and licenses are disabled, `order.refunded` is sent.
     * Repeating it answers the refunded order.
     */
    refund: (params: { storeId: string; orderId: string }, opts?: RequestOptions): Promise<OrderDetails> =>
      transport.call('orders.refund', params, update, opts),
    /**
     * The order's invoice as PDF bytes (scope order:read; the order by id or ORD-<n>): only an order
     * paid while the store charged tax has one (`invoiceNumber`); 404 `not_found` otherwise.
     */
    invoice: (params: { storeId: string; orderId: string }, opts?: RequestOptions): Promise<Uint8Array> =>
      download(orderPath(params, 'invoice'), 'orders.invoice', opts),
    /** The credit note of a refunded invoiced order as PDF bytes (`creditNoteNumber`); 404 `not_found` otherwise. */
    creditNote: (params: { storeId: string; orderId: string }, opts?: RequestOptions): Promise<Uint8Array> =>
      download(orderPath(params, 'credit-note'), 'orders.creditNote', opts),
    /** Every order matching the filters, across all pages (`limit` is the page size, default 100). */
    iterate: (
      params: Omit<OrderListParams, 'cursor'>,
      opts?: RequestOptions,
    ): AsyncGenerator<OrderSummary, void, undefined> =>
      walkPages(
        (cursor) => orders.list({ limit: 100, ...params, ...(cursor === undefined ? {} : { cursor }) }, opts),
        (page) => page.orders,
      ),
  };

  const webhooks = {
    list: (params: { storeId: string }, opts?: RequestOptions): Promise<Out<'webhooks.list'>> =>
      transport.call('webhooks.list', params, read, opts),
    get: (params: WebhookRef, opts?: RequestOptions): Promise<Webhook> =>
      transport.call('webhooks.get', params, read, opts),
    /** Creates an endpoint; the answer holds its signing `secret`, shown this once. */
    create: (params: WebhookCreateParams, opts?: RequestOptions): Promise<WebhookWithSecret> =>
      transport.call('webhooks.create', params, once, opts),
    update: (params: WebhookUpdateParams, opts?: RequestOptions): Promise<Webhook> =>
      transport.call('webhooks.update', params, update, opts),
    delete: (params: WebhookRef, opts?: RequestOptions): Promise<void> =>
      transport.call('webhooks.delete', params, once, opts),
    /** A new signing secret (returned once); signatures made with the old one stop verifying at once. */
    rotate: (params: WebhookRef, opts?: RequestOptions): Promise<WebhookWithSecret> =>
      transport.call('webhooks.rotate', params, once, opts),
    /** Sends a `webhook.test` event now and answers its delivery. */
    test: (params: WebhookRef, opts?: RequestOptions): Promise<Out<'webhooks.test'>> =>
      transport.call('webhooks.test', params, once, opts),
    /** One page of the endpoint's delivery log, newest first. */
    deliveries: (params: WebhookDeliveryListParams, opts?: RequestOptions): Promise<WebhookDeliveryList> =>
      transport.call('webhooks.deliveries', params, read, opts),
    /** Every delivery matching the filters, across all pages. */
    iterateDeliveries: (
      params: Omit<WebhookDeliveryListParams, 'cursor'>,
      opts?: RequestOptions,
    ): AsyncGenerator<WebhookDelivery, void, undefined> =>
      walkPages(
        (cursor) => webhooks.deliveries({ limit: 100, ...params, ...(cursor === undefined ? {} : { cursor }) }, opts),
        (page) => page.deliveries,
      ),
    /** Sends that delivery's event again, as a new attempt. */
    retry: (params: WebhookRef & { deliveryId: string }, opts?: RequestOptions): Promise<Out<'webhooks.retry'>> =>
      transport.call('webhooks.retry', params, once, opts),
    /** Sends again every event of a time range (optionally only those that failed). */
    replay: (params: WebhookReplayParams, opts?: RequestOptions): Promise<Out<'webhooks.replay'>> =>
      transport.call('webhooks.replay', params, once, opts),
  };

  const licenses = {
    /** One page of the store's licenses (sold license keys), newest first; filters `productId`, `status`. */
    list: (params: LicenseListParams, opts?: RequestOptions): Promise<LicenseList> =>
      transport.call('licenses.list', params, read, opts),
    /** One license with its active instances (never the key: `masked` shows at most its last four characters). */
    get: (params: LicenseRef, opts?: RequestOptions): Promise<StoreLicense> =>
      transport.call('licenses.get', params, read, opts),
    /** Every license matching the filters, across all pages. */
    iterate: (
      params: Omit<LicenseListParams, 'cursor'>,
      opts?: RequestOptions,
    ): AsyncGenerator<StoreLicense, void, undefined> =>
      walkPages(
        (cursor) => licenses.list({ limit: 100, ...params, ...(cursor === undefined ? {} : { cursor }) }, opts),
        (page) => page.licenses,
      ),
    /** Disables the license: validation answers `disabled` until it is enabled again. */
    disable: (params: LicenseRef, opts?: RequestOptions): Promise<StoreLicense> =>
      transport.call('licenses.disable', params, update, opts),
    /** Enables a license the seller disabled (a refunded order's license stays disabled: 409). */
    enable: (params: LicenseRef, opts?: RequestOptions): Promise<StoreLicense> =>
      transport.call('licenses.enable', params, update, opts),
    /** Removes one instance; the software on it no longer validates with it. */
    removeInstance: (params: LicenseRef & { instanceId: string }, opts?: RequestOptions): Promise<void> =>
      transport.call('licenses.removeInstance', params, once, opts),
  };

  const subscriptions = {
    /** One page of the store's subscriptions, newest first; filters `status`, `productId`, `customerEmail`. */
    list: (params: SubscriptionListParams, opts?: RequestOptions): Promise<SubscriptionList> =>
      transport.call('subscriptions.list', params, read, opts),
    /** Every subscription matching the filters, across all pages. */
    iterate: (
      params: Omit<SubscriptionListParams, 'cursor'>,
      opts?: RequestOptions,
    ): AsyncGenerator<Subscription, void, undefined> =>
      walkPages(
        (cursor) => subscriptions.list({ limit: 100, ...params, ...(cursor === undefined ? {} : { cursor }) }, opts),
        (page) => page.subscriptions,
      ),
    /** One subscription: its status, current period, seats and what the next renewal charges. */
    get: (params: SubscriptionRef, opts?: RequestOptions): Promise<Subscription> =>
      transport.call('subscriptions.get', params, read, opts),
    /**
     * Cancels at the period end (default) or now (`atPeriodEnd: false`); a move the status does not
     * allow (already set to cancel, already ended) is 409 `invalid_transition`.
     */
    cancel: (params: SubscriptionCancelParams, opts?: RequestOptions): Promise<Subscription> =>
      transport.call('subscriptions.cancel', params, once, opts),
    /** Pauses from the current period's end, until `resumesAt` (after that end) if given; 409 `invalid_transition` when it cannot. */
    pause: (params: SubscriptionPauseParams, opts?: RequestOptions): Promise<Subscription> =>
      transport.call('subscriptions.pause', params, once, opts),
    /**
     * Changes the plan or the seats. Prorated (default): now, the difference charged on the saved
     * method (402 `payment_failed` when declined: nothing changes) or credited; `prorate: false`:
     * at the next renewal (`pendingUpdate`).
     */
    update: (params: SubscriptionUpdateParams, opts?: RequestOptions): Promise<Subscription> =>
      transport.call('subscriptions.update', params, once, opts),
    /**
     * What `update` with the same `planId` and `quantity` (prorated) would charge now, computed by
     * the server as the change computes it; changes nothing. 409 / 400 as `update` would answer.
     */
    previewUpdate: (
      params: SubscriptionPreviewUpdateParams,
      opts?: RequestOptions,
    ): Promise<SubscriptionUpdatePreview> => transport.call('subscriptions.previewUpdate', params, read, opts),
    /** Undoes a scheduled cancel or pause, or resumes a paused subscription now (charging its new period). */
    resume: (params: SubscriptionRef, opts?: RequestOptions): Promise<Subscription> =>
      transport.call('subscriptions.resume', params, once, opts),
    /**
     * Test mode: moves a test subscription's clock to `to` and runs everything due on the way
     * (renewals on the saved test card, dunning, notices, scheduled cancels and pauses). A live key is
     * 403 `test_key_required`.
     */
    advance: (params: SubscriptionAdvanceParams, opts?: RequestOptions): Promise<SubscriptionAdvance> =>
      transport.call('subscriptions.advance', params, once, opts),
  };

  const coupons = {
    /** The store's coupons (scope coupon:read). */
    list: (params: { storeId: string }, opts?: RequestOptions): Promise<CouponList> =>
      transport.call('coupons.list', params, read, opts),
    get: (params: CouponRef, opts?: RequestOptions): Promise<Coupon> =>
      transport.call('coupons.get', params, read, opts),
    /** Creates a coupon (scope coupon:write); a code the store already has is 409. */
    create: (params: CouponCreateParams, opts?: RequestOptions): Promise<Coupon> =>
      transport.call('coupons.create', params, once, opts),
    update: (params: CouponUpdateParams, opts?: RequestOptions): Promise<Coupon> =>
      transport.call('coupons.update', params, update, opts),
    /** Deletes a coupon; orders that used it keep their discount. */
    delete: (params: CouponRef, opts?: RequestOptions): Promise<void> =>
      transport.call('coupons.delete', params, once, opts),
  };

  /**
   * The store itself (scopes store:read, store:write). Its logo is a multipart upload, not a
   * procedure: POST the file (PNG, JPEG or WebP, at most 1 MB) as the part `file` to
   * `/api/merchant/v1/stores/{storeId}/logo` (415 for another type, 413 when larger); DELETE that
   * address removes it. The answer's `logoUrl` is where the storefront serves it.
   */
  const stores = {
    /** The store: name, subdomain, currency, description, accentColor, logoUrl, origins, settings. */
    get: (params: { storeId: string }, opts?: RequestOptions): Promise<MerchantStore> =>
      transport.call('stores.merchantGet', params, read, opts),
    /** Renames the store or changes its look; `accentColor: null` goes back to the default colour. */
    update: (params: StoreUpdateParams, opts?: RequestOptions): Promise<MerchantStore> =>
      transport.call('stores.merchantUpdate', params, update, opts),
  };

  /**
   * The store's test data (test mode; a test key, `sk_test_...`: a live key is 403
   * `test_key_required`). Deleting runs in the background: the answer (202) is the job; read it
   * with `get` until its `status` is `succeeded` or `failed`. Live objects are never touched.
   */
  const testData = {
    /** Deletes every test object of the store (scope product:write); while a job waits or runs, answers that one. */
    delete: (params: { storeId: string }, opts?: RequestOptions): Promise<TestDataJob> =>
      transport.call('testData.merchantDelete', params, update, opts),
    /** A deletion job: its status and what it has deleted so far (scope product:read). */
    get: (params: { storeId: string; jobId: string }, opts?: RequestOptions): Promise<TestDataJob> =>
      transport.call('testData.merchantGet', params, read, opts),
  };

  const reports = {
    /**
     * The tax report (scope order:read): per tax country, line rate, reverse charge and currency, the
     * taxable amount and tax of the invoices paid in `[from, to)` less the credit notes issued in it,
     * and the invoices and credit notes counted; what a one-stop-shop return needs.
     */
    tax: (params: TaxReportParams, opts?: RequestOptions): Promise<TaxReport> =>
      transport.call('reports.tax', params, read, opts),
  };

  const events = {
    /** One page of the store's events, newest first (scope event:read); filters `type`, `from`, `to`. Kept 30 days. */
    list: <E extends WebhookEventName = WebhookEventName>(
      params: EventListParams<E>,
      opts?: RequestOptions,
    ): Promise<EventList<E>> => transport.call('events.list', params, read, opts) as Promise<EventList<E>>,
    /** One event, exactly as its webhook deliveries carry it (`{ id, event, createdAt, storeId, livemode, data }`). */
    get: (params: { storeId: string; eventId: string }, opts?: RequestOptions): Promise<StoredEvent> =>
      transport.call('events.get', params, read, opts),
    /** Every event matching the filters, across all pages, newest first: what a reconciliation walks. */
    iterate: <E extends WebhookEventName = WebhookEventName>(
      params: Omit<EventListParams<E>, 'cursor'>,
      opts?: RequestOptions,
    ): AsyncGenerator<StoredEvent<E>, void, undefined> =>
      walkPages(
        (cursor) => events.list<E>({ limit: 100, ...params, ...(cursor === undefined ? {} : { cursor }) }, opts),
        (page) => page.events,
      ),
  };

  const products = {
    /** One page of the store's products, newest first, with their stock (scope product:read); filter `status`. */
    list: (params: ProductListParams, opts?: RequestOptions): Promise<ProductPage> =>
      transport.call('catalog.list', params, read, opts),
    /** One product; `stock` is its available key count (null when it is not delivered by keys). */
    get: (params: ProductRef, opts?: RequestOptions): Promise<Product> =>
      transport.call('catalog.get', params, read, opts),
    /** Creates a product (scope product:write). */
    create: (params: ProductCreateParams, opts?: RequestOptions): Promise<Product> =>
      transport.call('catalog.create', params, once, opts),
    update: (params: ProductUpdateParams, opts?: RequestOptions): Promise<Product> =>
      transport.call('catalog.update', params, update, opts),
    /** Archives the product: it leaves the storefront; orders keep naming it. */
    archive: (params: ProductRef, opts?: RequestOptions): Promise<void> =>
      transport.call('catalog.delete', params, once, opts),
    /** Every product matching the filter, across all pages. */
    iterate: (
      params: Omit<ProductListParams, 'cursor'>,
      opts?: RequestOptions,
    ): AsyncGenerator<Product, void, undefined> =>
      walkPages(
        (cursor) => products.list({ limit: 100, ...params, ...(cursor === undefined ? {} : { cursor }) }, opts),
        (page) => page.products,
      ),
  };

  /**
   * A product's images (scope product:write). Adding one is a multipart upload, not a procedure:
   * POST the file as the part `file` to `/api/merchant/v1/stores/{storeId}/products/{productId}/images`.
   */
  const productImages = {
    /** Removes one image; the storefront stops showing it and its address answers 404. */
    remove: (params: ProductRef & { imageId: string }, opts?: RequestOptions): Promise<void> =>
      transport.call('catalog.deleteImage', params, once, opts),
    /** Puts the product's images in a new order: `imageIds` names each of them once. */
    reorder: (params: ProductImageOrderParams, opts?: RequestOptions): Promise<ProductImageList> =>
      transport.call('catalog.reorderImages', params, update, opts),
  };

  const licenseKeys = {
    /**
     * Adds 1 to 10,000 keys to a product's stock (scope product:write); duplicates, within the call
     * or against stock, are dropped and counted. Orders waiting for keys are filled at once. Not
     * retried (a repeat would only count duplicates, but says nothing of the first call).
     */
    add: (params: LicenseKeyImportParams, opts?: RequestOptions): Promise<LicenseKeyImportResult> =>
      transport.call('catalog.importKeys', params, once, opts),
    /** One page of a product's keys, masked (never the key), with the stock counts. */
    list: (params: LicenseKeyListParams, opts?: RequestOptions): Promise<LicenseKeyList> =>
      transport.call('catalog.keys', params, read, opts),
    /** Every key matching the filter, across all pages. */
    iterate: (
      params: Omit<LicenseKeyListParams, 'cursor'>,
      opts?: RequestOptions,
    ): AsyncGenerator<LicenseKeyList['licenseKeys'][number], void, undefined> =>
      walkPages(
        (cursor) => licenseKeys.list({ limit: 100, ...params, ...(cursor === undefined ? {} : { cursor }) }, opts),
        (page) => page.licenseKeys,
      ),
  };

  return {
    /** The key's mode: `test` for an `sk_test_` key, which sees only the store's test objects; `live` otherwise. */
    mode,
    stores,
    orders,
    reports,
    webhooks,
    licenses,
    subscriptions,
    coupons,
    events,
    products,
    productImages,
    licenseKeys,
    testData,
  };
}
