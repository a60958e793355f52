/**
 * The API's resources as plain TypeScript: the SDK does not depend on zod or @svc/schemas.
 * They mirror the response schemas in packages/schemas (named in each comment); timestamps
 * are ISO 8601 strings, amounts JSON numbers in the store's currency.
 */

/** `ORDER_STATUSES` in packages/schemas/src/orders.ts. */
export type OrderStatus = 'pending' | 'paid' | 'processing' | 'completed' | 'refunded' | 'cancelled' | 'expired';

/** `ZOrder` in packages/schemas/src/orders.ts. */
export interface Order {
  id: string;
  /** The public order number, `ORD-<n>`. */
  orderId: string;
  storeId: string;
  status: OrderStatus;
  productName: string;
  price: number;
  paid: number;
  paymentMethod: string;
  customerEmail: string;
  country: string;
  keyCount: number;
  createdAt: string;
  completedAt: string | null;
  updatedAt: string;
}

/** `ZOrderDetail` in packages/schemas/src/orders.ts. */
export interface OrderDetail extends Order {
  note: string;
  customFieldResponses: Array<{ name: string; value: string }>;
}

/** `DELIVERY_METHODS` in packages/schemas/src/catalog.ts. */
export type DeliveryMethod = 'licenseKeys' | 'downloadFiles' | 'manualDelivery' | 'deliveryInstructions';

/** `PRODUCT_STATUSES` in packages/schemas/src/catalog.ts. */
export type ProductStatus = 'active' | 'draft' | 'archived';

/** `CUSTOM_FIELD_TYPES` in packages/schemas/src/catalog.ts. */
export type CustomFieldType = 'text' | 'number' | 'email' | 'checkbox';

/** `ZProduct` in packages/schemas/src/catalog.ts: the seller's view. */
export interface Product {
  id: string;
  storeId: string;
  name: string;
  description: string;
  price: number;
  currency: string;
  status: ProductStatus;
  deliveryMethods: DeliveryMethod[];
  deliveryInstructions: string;
  customFields: Array<{ name: string; type: CustomFieldType; required: boolean }>;
  minQuantity: number;
  maxQuantity: number | null;
  /** License API: instances one license may have at once; null: unlimited. */
  licenseActivationLimit: number | null;
  /** License API: days a license is valid from its assignment; null: never expires. */
  licenseValidityDays: number | null;
  /** Available license keys, or null when the product is not limited by keys. */
  stock: number | null;
  createdAt: string;
  updatedAt: string;
}

/** `LICENSE_STATUSES` in packages/schemas/src/licenses.ts. */
export type LicenseStatus = 'active' | 'expired' | 'disabled';

/** `ZLicense` in packages/schemas/src/licenses.ts: what the License API shows the merchant's software. */
export interface License {
  id: string;
  productId: string;
  status: LicenseStatus;
  /** Instances one license may have at once; null: unlimited. */
  activationLimit: number | null;
  /** Instances active now. */
  activationUsage: number;
  expiresAt: string | null;
  createdAt: string;
}

/** `ZLicenseInstance` in packages/schemas/src/licenses.ts. */
export interface LicenseInstance {
  id: string;
  name: string;
  createdAt: string;
}

/** `ZMerchantLicense` in packages/schemas/src/licenses.ts: the seller's view, and the `license.*` events' data. */
export interface MerchantLicense extends License {
  /** The order's public number, `ORD-<n>`. */
  orderId: string;
  customerEmail: string;
  /** Eight dots, then the key's last four characters when it has more than eight; never the key, nor its length. */
  masked: string;
  instances: LicenseInstance[];
}
