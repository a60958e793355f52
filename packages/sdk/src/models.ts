/**
 * The API's resources as plain TypeScript: the SDK does not depend on zod or @svc/schemas. Each
 * is taken from the types generated from the server's router (src/generated/api.ts), so it is the
 * response schema in packages/schemas (named in each comment) field for field, and cannot drift
 * from it. Timestamps are ISO 8601 strings, amounts JSON numbers in the store's currency; a field
 * that can be absent is `null`, except where the interface document fixes a string (the order's
 * `paymentMethod`, `customerEmail`, `country` and `note`, which are '' for "none").
 */
import type { ApiProcedures } from './generated/api.js';

type Out<P extends keyof ApiProcedures> = ApiProcedures[P]['output'];
type EventData<E extends Out<'events.get'>['event']> = Extract<Out<'events.get'>, { event: E }>['data'];

/** `ZOrder` in packages/schemas/src/orders.ts: an order of the merchant list. */
export type Order = Out<'orders.list'>['orders'][number];

/** `ORDER_STATUSES` in packages/schemas/src/orders.ts. */
export type OrderStatus = Order['status'];

/** `ZOrderDetail` in packages/schemas/src/orders.ts: the order with its note and custom-field answers (the `order.*` events' data). */
export type OrderDetail = EventData<'order.paid'>['order'];

/** `ZProduct` in packages/schemas/src/catalog.ts: the seller's view (and the `product.*` events' data). */
export type Product = Out<'catalog.get'>;

/** `DELIVERY_METHODS` in packages/schemas/src/catalog.ts. */
export type DeliveryMethod = Product['deliveryMethods'][number];

/** `PRODUCT_STATUSES` in packages/schemas/src/catalog.ts. */
export type ProductStatus = Product['status'];

/** `CUSTOM_FIELD_TYPES` in packages/schemas/src/catalog.ts. */
export type CustomFieldType = Product['customFields'][number]['type'];

/** `ZLicense` in packages/schemas/src/licenses.ts: what the License API shows the merchant's software. */
export type License = Out<'licenses.validate'>['license'];

/** `LICENSE_STATUSES` in packages/schemas/src/licenses.ts. */
export type LicenseStatus = License['status'];

/** `ZMerchantLicense` in packages/schemas/src/licenses.ts: the seller's view, and the `license.*` events' data. */
export type MerchantLicense = EventData<'license.activated'>['license'];

/** `ZLicenseInstance` in packages/schemas/src/licenses.ts. */
export type LicenseInstance = MerchantLicense['instances'][number];

/** `ZSubscription` in packages/schemas/src/subscriptions.ts: a buyer's subscription as the seller reads it. */
export type Subscription = Out<'subscriptions.get'>;

/** `SUBSCRIPTION_STATUSES` in packages/schemas/src/subscriptions.ts. */
export type SubscriptionStatus = Subscription['status'];
