/**
 * `@svc/sdk/webhooks`: webhook verification alone (WebCrypto, no client), for the merchant's
 * receiver, with the event types it narrows on and the models their `data` carries.
 */
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
} from '../webhooks.js';
export type {
  Order,
  OrderDetail,
  OrderStatus,
  Product,
  ProductStatus,
  DeliveryMethod,
  CustomFieldType,
  License,
  LicenseInstance,
  LicenseStatus,
  MerchantLicense,
} from '../models.js';
export { SvcError, isSvcError, type SvcErrorOptions } from '../errors.js';
