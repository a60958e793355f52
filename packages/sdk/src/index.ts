/**
 * @svc/sdk — typed clients for merchants, theme builders and customer pages, typed errors,
 * and webhook verification. No runtime dependencies (the tRPC client is bundled in), no Node
 * built-ins: it runs in Node 20+, browsers and edge runtimes alike. The API types are
 * generated from the service's router at build time (src/generated/api.ts).
 */
export { createMerchantClient } from './merchant.js';
export type {
  MerchantClient,
  MerchantClientOptions,
  MerchantStore,
  StoreUpdateParams,
  OrderList,
  OrderListParams,
  OrderSummary,
  OrderDetails,
  OrderLine,
  OrderUpdateParams,
  TaxReport,
  TaxReportParams,
  TaxReportRow,
  Webhook,
  WebhookWithSecret,
  WebhookCreateParams,
  WebhookUpdateParams,
  WebhookDelivery,
  WebhookDeliveryList,
  WebhookDeliveryListParams,
  WebhookReplayParams,
  WebhookRef,
  LicenseList,
  LicenseListParams,
  LicenseRef,
  StoreLicense,
  SubscriptionList,
  SubscriptionListParams,
  SubscriptionCancelParams,
  SubscriptionPauseParams,
  SubscriptionUpdateParams,
  SubscriptionPreviewUpdateParams,
  SubscriptionUpdatePreview,
  SubscriptionAdvanceParams,
  SubscriptionAdvance,
  SubscriptionRef,
  Coupon,
  CouponList,
  CouponCreateParams,
  CouponUpdateParams,
  CouponRef,
  EventList,
  EventListParams,
  StoredEvent,
  ProductPage,
  ProductListParams,
  ProductCreateParams,
  ProductUpdateParams,
  ProductRef,
  LicenseKeyImportParams,
  LicenseKeyImportResult,
  LicenseKeyListParams,
  LicenseKeyList,
} from './merchant.js';
export { createCustomerClient } from './customer.js';
export type {
  CustomerClient,
  CustomerClientOptions,
  Customer,
  CustomerOrder,
  CustomerOrderList,
  CustomerOrderSummary,
} from './customer.js';
export type { ProcedurePath, ProcedureInput, ProcedureOutput } from './transport.js';
export type { ApiProcedures } from './generated/api.js';
export type { Subscription, SubscriptionStatus } from './models.js';
export { ERROR_CODES } from './error-codes.js';
// The theme, license and webhook entry points, each with the errors and models it carries
// (src/subpaths/): the root exports all of them, so each list is written once.
export * from './subpaths/theme.js';
export * from './subpaths/licenses.js';
export * from './subpaths/webhooks.js';
