/**
 * The SDK's public types tell the truth (issue 27, item 2), held at type level (tsc checks this
 * file; vitest runs it): every event narrows its `data` by `event` with no cast, in webhooks and
 * in the events API alike; the order's "none" fields are what the interface fixes and the others
 * are null; statuses, delivery methods and event names are unions, never `string`.
 */
import { describe, expectTypeOf, it } from 'vitest';
import type {
  TDeliveryPayload,
  TEventBody,
  TEventName,
  TMerchantLicense,
  TSubscription,
  TOrder,
  TOrderDetail,
  TProduct,
  TWebhookEvent,
} from '../../schemas/src/index.js';
import {
  createMerchantClient,
  type CustomFieldType,
  type Delivery,
  type DeliveryMethod,
  type EventList,
  type License,
  type LicenseStatus,
  type MerchantLicense,
  type Order,
  type OrderDetail,
  type OrderDetails,
  type OrderStatus,
  type OrderSummary,
  type Product,
  type ProductStatus,
  type StoredEvent,
  type Webhook,
  type WebhookDelivery,
  type WebhookEvent,
  type WebhookEventDataMap,
  type WebhookEventName,
} from './index.js';

/** Every event's `data`, reached by narrowing on `event` alone; an event left out fails to compile. */
function dataOf(event: WebhookEvent): void {
  switch (event.event) {
    case 'order.created':
    case 'order.paid':
    case 'order.completed':
    case 'order.refunded':
      expectTypeOf(event.data).toEqualTypeOf<{ order: OrderDetail }>();
      expectTypeOf(event.data.order.status).toEqualTypeOf<OrderStatus>();
      return;
    case 'product.created':
    case 'product.updated':
    case 'product.deleted':
      expectTypeOf(event.data).toEqualTypeOf<{ product: Product }>();
      expectTypeOf(event.data.product.deliveryMethods).toEqualTypeOf<DeliveryMethod[]>();
      return;
    case 'license.activated':
    case 'license.deactivated':
    case 'license.disabled':
    case 'license.enabled':
      expectTypeOf(event.data).toEqualTypeOf<{ license: MerchantLicense }>();
      return;
    case 'subscription.created':
    case 'subscription.updated':
    case 'subscription.renewed':
    case 'subscription.past_due':
    case 'subscription.canceled':
    case 'subscription.uncanceled':
    case 'subscription.paused':
    case 'subscription.resumed':
    case 'subscription.ended':
    case 'subscription.trial_will_end':
      expectTypeOf(event.data).toEqualTypeOf<{ subscription: TSubscription }>();
      return;
    case 'webhook.test':
      expectTypeOf(event.data).toEqualTypeOf<{ webhookId: string }>();
      return;
    default:
      expectTypeOf(event).toBeNever();
  }
}

describe('event types', () => {
  it('narrow data by `event` for every event, with no cast', () => {
    expectTypeOf(dataOf).parameter(0).toEqualTypeOf<WebhookEvent>();
    expectTypeOf<WebhookEvent<'order.paid'>['data']>().toEqualTypeOf<{ order: OrderDetail }>();
    expectTypeOf<WebhookEventDataMap['license.disabled']>().toEqualTypeOf<{ license: MerchantLicense }>();
  });

  it("are the server's event bodies, generated from the router (not a hand-written copy)", () => {
    expectTypeOf<WebhookEvent>().toEqualTypeOf<TEventBody>();
    expectTypeOf<WebhookEventName>().toEqualTypeOf<TEventName>();
    expectTypeOf<OrderDetail>().toEqualTypeOf<TOrderDetail>();
    expectTypeOf<Product>().toEqualTypeOf<TProduct>();
    expectTypeOf<MerchantLicense>().toEqualTypeOf<TMerchantLicense>();
  });

  it('are the same in the events API: get, list and iterate (narrowed by the `type` filter)', () => {
    const svc = createMerchantClient({ baseUrl: 'http://127.0.0.1:9', apiKey: `sk_${'a'.repeat(40)}` });
    expectTypeOf(svc.events.get).returns.resolves.toEqualTypeOf<WebhookEvent>();
    expectTypeOf<StoredEvent>().toEqualTypeOf<WebhookEvent>();
    expectTypeOf<EventList['events'][number]>().toEqualTypeOf<WebhookEvent>();
    expectTypeOf<EventList<'order.paid'>['events'][number]>().toEqualTypeOf<WebhookEvent<'order.paid'>>();
    // A generator runs nothing until it is iterated: no request is made here.
    expectTypeOf(svc.events.iterate({ storeId: 's1', type: 'product.created' })).toEqualTypeOf<
      AsyncGenerator<WebhookEvent<'product.created'>, void, undefined>
    >();
    expectTypeOf(svc.events.iterate({ storeId: 's1' })).toEqualTypeOf<AsyncGenerator<WebhookEvent, void, undefined>>();
  });
});

describe('"none" is null, except where the interface fixes a string', () => {
  it("the merchant order's paymentMethod, customerEmail, country and note stay strings ('' for none)", () => {
    expectTypeOf<Order['paymentMethod']>().toEqualTypeOf<string>();
    expectTypeOf<OrderSummary['paymentMethod']>().toEqualTypeOf<string>();
    expectTypeOf<OrderDetails['paymentMethod']>().toEqualTypeOf<string>();
    expectTypeOf<OrderDetails['customerEmail']>().toEqualTypeOf<string>();
    expectTypeOf<OrderDetails['note']>().toEqualTypeOf<string>();
    expectTypeOf<Order>().toEqualTypeOf<TOrder>();
  });

  it('elsewhere it is null', () => {
    expectTypeOf<MerchantLicense['customerEmail']>().toEqualTypeOf<string | null>();
    expectTypeOf<NonNullable<Delivery['licenseKeys']>[number]['productName']>().toEqualTypeOf<string | null>();
    expectTypeOf<Delivery>().toEqualTypeOf<TDeliveryPayload>();
    expectTypeOf<Order['completedAt']>().toEqualTypeOf<string | null>();
    expectTypeOf<Webhook['lastDeliveredAt']>().toEqualTypeOf<string | null>();
  });
});

describe('enums are unions', () => {
  it('statuses, delivery methods and event names', () => {
    expectTypeOf<OrderStatus>().toEqualTypeOf<
      'pending' | 'paid' | 'processing' | 'completed' | 'refunded' | 'cancelled' | 'expired'
    >();
    expectTypeOf<ProductStatus>().toEqualTypeOf<'active' | 'draft' | 'archived'>();
    expectTypeOf<DeliveryMethod>().toEqualTypeOf<
      'licenseKeys' | 'downloadFiles' | 'manualDelivery' | 'deliveryInstructions'
    >();
    expectTypeOf<CustomFieldType>().toEqualTypeOf<'text' | 'number' | 'email' | 'checkbox'>();
    expectTypeOf<LicenseStatus>().toEqualTypeOf<'active' | 'inactive' | 'expired' | 'disabled'>();
    expectTypeOf<License['status']>().toEqualTypeOf<LicenseStatus>();
    expectTypeOf<WebhookDelivery['status']>().toEqualTypeOf<'pending' | 'success' | 'failed' | 'queued' | 'skipped'>();
    expectTypeOf<WebhookDelivery['event']>().toEqualTypeOf<WebhookEventName>();
    expectTypeOf<Webhook['events'][number]>().toEqualTypeOf<TWebhookEvent>();
    expectTypeOf<WebhookEventName>().toEqualTypeOf<TWebhookEvent | 'webhook.test'>();
  });
});
