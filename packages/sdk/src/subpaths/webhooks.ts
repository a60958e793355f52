/**
 * `@svc/sdk/webhooks`: webhook verification alone (WebCrypto, no client), for the merchant's
 * receiver, with the event types it narrows on and the models their `data` carries.
 */
export { verifySignature, constructEvent, type VerifyOptions, type VerifiedWebhook } from '../webhooks.js';
export { generateTestHeader, type TestHeaderInput, type WebhookTestHeaders } from '../webhooks-test-header.js';
export { WebhookVerificationError, type WebhookVerificationErrorCode } from '../webhooks-errors.js';
export {
  WEBHOOK_SECRET_PREFIX,
  DEFAULT_WEBHOOK_TOLERANCE_SECONDS,
  SERVICE_SIGNATURE_HEADER,
  STANDARD_ID_HEADER,
  STANDARD_TIMESTAMP_HEADER,
  STANDARD_SIGNATURE_HEADER,
  type RawBody,
  type HeadersLike,
  type WebhookHeaders,
  type WebhookSignatureInput,
} from '../webhooks-inputs.js';
export type {
  WebhookEvent,
  WebhookEventName,
  WebhookEventDataMap,
  OrderEvent,
  ProductEvent,
  LicenseEvent,
  WebhookTestEvent,
} from '../webhooks-events.js';
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
