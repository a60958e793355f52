/** Every entity the ORM knows; each module adds its own here. */
import { ApiKeySchema } from '../modules/api-keys/api-keys.entities.js';
import { BlacklistEntrySchema } from '../modules/blacklist/blacklist.entities.js';
import {
  LicenseKeySchema,
  ProductPlanSchema,
  ProductSchema,
  StoredFileSchema,
} from '../modules/catalog/catalog.entities.js';
import { LicenseInstanceSchema, LicenseSigningKeySchema } from '../modules/licenses/licenses.entities.js';
import { CouponSchema } from '../modules/coupons/coupons.entities.js';
import { EventSchema } from '../modules/events/events.entities.js';
import { FeedbackSchema } from '../modules/feedback/feedback.entities.js';
import { TrackEventSchema } from '../modules/tracking/tracking.entities.js';
import { WebhookDeliverySchema, WebhookSchema } from '../modules/webhooks/webhooks.entities.js';
import { CustomerCodeSchema, CustomerSchema, CustomerSessionSchema } from '../modules/customers/customers.entities.js';
import {
  EmailChangeSchema,
  PasswordResetSchema,
  SessionSchema,
  SignInCodeSchema,
  RecoveryCodeSchema,
  UserSchema,
} from '../modules/identity/identity.entities.js';
import { OutboundEmailSchema } from '../modules/mail/mail.entities.js';
import { InvoiceCounterSchema, OrderLineSchema, OrderSchema } from '../modules/orders/orders.entities.js';
import { IdempotencyKeySchema } from '../modules/idempotency/idempotency.entities.js';
import {
  PaymentNotificationSchema,
  PaymentSchema,
  SavedPaymentMethodSchema,
  TestGatewayChargeSchema,
} from '../modules/payments/payments.entities.js';
import { StoreMemberSchema, StoreSchema } from '../modules/stores/stores.entities.js';
import { SubscriptionMrrMonthSchema, SubscriptionSchema } from '../modules/subscriptions/subscriptions.entities.js';
import { TestDataWipeSchema } from '../modules/test-data/test-data.entities.js';
import { TicketMessageSchema, TicketSchema } from '../modules/tickets/tickets.entities.js';

export const ENTITIES = [
  UserSchema,
  SessionSchema,
  PasswordResetSchema,
  SignInCodeSchema,
  RecoveryCodeSchema,
  EmailChangeSchema,
  StoreSchema,
  StoreMemberSchema,
  ApiKeySchema,
  OrderSchema,
  OrderLineSchema,
  InvoiceCounterSchema,
  SubscriptionSchema,
  SubscriptionMrrMonthSchema,
  CustomerSchema,
  CustomerCodeSchema,
  CustomerSessionSchema,
  OutboundEmailSchema,
  ProductSchema,
  ProductPlanSchema,
  LicenseKeySchema,
  LicenseInstanceSchema,
  LicenseSigningKeySchema,
  StoredFileSchema,
  EventSchema,
  CouponSchema,
  BlacklistEntrySchema,
  FeedbackSchema,
  TrackEventSchema,
  PaymentSchema,
  PaymentNotificationSchema,
  SavedPaymentMethodSchema,
  TestGatewayChargeSchema,
  IdempotencyKeySchema,
  WebhookSchema,
  WebhookDeliverySchema,
  TicketSchema,
  TicketMessageSchema,
  TestDataWipeSchema,
];
