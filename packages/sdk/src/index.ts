/**
 * @svc/sdk — typed client for merchants and theme builders.
 * The API clients arrive with the SDK issue; today the package has the error codes a client
 * can meet (so consumers can already switch on them), the error base class, and webhook
 * verification for merchants' own servers. No runtime dependencies, no Node built-ins: it
 * runs in Node 20+, browsers and edge runtimes alike.
 */
export { ERROR_CODES, type TErrorCode, type TErrorBody } from './error-codes.js';
export { SvcError, isSvcError, type SvcErrorOptions } from './errors.js';
export type { Order, OrderDetail, OrderStatus, Product, ProductStatus, DeliveryMethod, CustomFieldType } from './models.js';
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
  type WebhookTestEvent,
  type RawBody,
  type HeadersLike,
  type WebhookHeaders,
  type VerifyOptions,
  type VerifiedWebhook,
  type TestHeaderInput,
  type WebhookTestHeaders,
} from './webhooks.js';
