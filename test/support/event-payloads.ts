/**
 * Event payloads that match their schemas (EVENT_PAYLOADS), for tests that write events straight
 * through the outbox: the outbox refuses a payload that does not match its event type.
 */
import type { TOrderDetail, TProduct } from '@svc/schemas';

export function productPayload(storeId: string, product: Partial<TProduct> = {}): { product: TProduct } {
  const at = new Date().toISOString();
  return {
    product: {
      id: 'p1',
      storeId,
      livemode: true,
      name: 'Product',
      slug: 'product',
      description: '',
      price: 9.99,
      currency: 'USD',
      status: 'active',
      deliveryMethods: ['downloadFiles'],
      deliveryInstructions: '',
      customFields: [],
      minQuantity: 1,
      maxQuantity: null,
      stock: null,
      images: [],
      licenseActivationLimit: null,
      licenseValidityDays: null,
      plans: [],
      taxCategory: 'standard',
      createdAt: at,
      updatedAt: at,
      ...product,
    },
  };
}

export function orderPayload(storeId: string, order: Partial<TOrderDetail> = {}): { order: TOrderDetail } {
  const at = new Date().toISOString();
  return {
    order: {
      id: 'ord_1',
      orderId: 'ORD-1',
      storeId,
      livemode: true,
      status: 'pending',
      productName: 'Product',
      price: 9.99,
      discount: 0,
      couponCode: null,
      paid: 0,
      paymentMethod: 'stripe',
      customerEmail: 'buyer@example.com',
      country: 'US',
      keyCount: 0,
      subscriptionId: null,
      billingReason: 'purchase',
      subtotal: 9.99,
      taxAmount: 0,
      taxRate: null,
      taxCountry: null,
      reverseCharge: false,
      invoiceNumber: null,
      creditNoteNumber: null,
      createdAt: at,
      completedAt: null,
      updatedAt: at,
      note: '',
      customFieldResponses: [],
      ...order,
    },
  };
}
