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
  OrderList,
  OrderListParams,
  OrderSummary,
  OrderDetails,
  OrderUpdateParams,
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
export { createThemeClient } from './theme.js';
export type {
  ThemeClient,
  ThemeClientOptions,
  CartLine,
  Cart,
  Storefront,
  StorefrontProduct,
  CheckoutParams,
  CheckoutResult,
  CreateOrderParams,
  CreatedOrder,
  CouponCheck,
  StartPaymentParams,
  PaymentStart,
  Delivery,
  DeliveredKeys,
  ClientGate,
  TrackEvent,
  OrderAccess,
} from './theme.js';
export { createCustomerClient } from './customer.js';
export { createLicenseClient } from './licenses.js';
export type { LicenseClient, LicenseClientOptions, LicenseActivation, LicenseValidation, LicenseDeactivation } from './licenses.js';
export type { CustomerClient, CustomerClientOptions, Customer, CustomerOrder, CustomerOrderList, CustomerOrderSummary } from './customer.js';
export type { ClientOptions, RequestOptions, CreateRequestOptions, FetchLike, ProcedurePath, ProcedureInput, ProcedureOutput } from './transport.js';
export type { ApiProcedures } from './generated/api.js';
export {
  SvcApiError,
  SvcInvalidRequestError,
  SvcAuthenticationError,
  SvcPermissionError,
  SvcNotFoundError,
  SvcConflictError,
  SvcIdempotencyError,
  SvcRateLimitError,
  SvcConnectionError,
  type SvcErrorType,
  type SvcApiErrorIssue,
  type ConnectionErrorCode,
} from './api-errors.js';
export { ERROR_CODES, type TErrorCode, type TErrorBody } from './error-codes.js';
export { SvcError, isSvcError, type SvcErrorOptions } from './errors.js';
export type { Order, OrderDetail, OrderStatus, Product, ProductStatus, DeliveryMethod, CustomFieldType, License, LicenseInstance, LicenseStatus, MerchantLicense } from './models.js';
export {
  verifySignature,
  constructEvent,
  generateTestHeader,
  WebhookVerificationError,
  WEBHOOK_SECRET_PREFIX,
  DEFAULT_WEBHOOK_TOLERANCE_SECONDS,
  SERVICE_SIGNATURE_HEADER,
  STANDARD_ID_HEADER,
  STANDARD_TIMESTAMP_HEADER,
  STANDARD_SIGNATURE_HEADER,
  type WebhookVerificationErrorCode,
  type WebhookEvent,
  type WebhookEventName,
  type WebhookEventDataMap,
  type OrderEvent,
  type ProductEvent,
  type LicenseEvent,
  type WebhookTestEvent,
  type RawBody,
  type HeadersLike,
  type WebhookHeaders,
  type WebhookSignatureInput,
  type VerifyOptions,
  type VerifiedWebhook,
  type TestHeaderInput,
  type WebhookTestHeaders,
} from './webhooks.js';
