/**
 * What the buyer receives, and who may see it. Access, in order: the checkout token (query or
 * the svc_checkout cookie; a renewal's pay link's token too) or the order's link token
 * (`orderUrl`, orders/order-link.ts), the buyer's e-mail (a store setting can turn that off), a
 * customer session (svc_customer) of that e-mail in the order's store, a staff session with
 * viewOrders. None given: 401; given but wrong: 403; unknown order:
 * 404; not paid: 409. A refunded order shows nothing more.
 */
import type { TDeliveryMethod, TDeliveryPayload } from '@svc/schemas';
import { deriveKey, hmacHex, safeEqual } from '../../lib/crypto.js';
import { AppError } from '../../lib/errors.js';
import type { Context, ServiceContext } from '../request/context.js';
import { authenticateSession, requireMember } from '../access/guards.js';
import { LicenseKeySchema, ProductSchema, StoredFileSchema } from '../catalog/catalog.entities.js';
import { decryptLicenseKey } from '../catalog/license-key-crypto.js';
import { checkoutTokenFor } from '../orders/checkout-cookie.js';
import { opensOrderLink } from '../orders/order-link.js';
import { opensCheckout } from '../orders/order-lookup.js';
import { authenticateCustomer } from '../customers/customer-session.js';
import { OrderLineSchema, OrderSchema, type Order } from '../orders/orders.entities.js';
import { StoreSchema } from '../stores/stores.entities.js';
import { storeSettings } from '../stores/store-views.js';
import { PAID_STATUSES } from '../orders/order-lifecycle.js';
import { keysOwed, tryAssignKeys } from './fulfilment.service.js';

const FILE_LINK_TTL_SECONDS = 3600;

export interface AccessQuery {
  orderId: string;
  token?: string | undefined;
  email?: string | undefined;
}

/** The signed-in customer, or null when the cookie names no live session (it then offers nothing). */
async function customerOrNull(ctx: Context) {
  try {
    return await authenticateCustomer(ctx);
  } catch (error) {
    if (error instanceof AppError && error.appCode === 'unauthorized') return null;
    throw error;
  }
}

/**
 * The order, if this request may see what it delivers (see the module comment). A staff session
 * is checked as the route declares (an unsafe call needs its CSRF token).
 */
export async function buyerOrderAccess(ctx: Context, query: AccessQuery): Promise<Order> {
  const { credentials } = ctx.caller;
  const order = await ctx.em.findOne(OrderSchema, { id: query.orderId });
  if (!order) throw new AppError('not_found', 'Order not found.');
  const token = query.token ?? checkoutTokenFor(credentials.checkout, order.id);
  let granted = false;
  let offered = false;
  if (token) {
    offered = true;
    granted = opensCheckout(ctx.deps.config, order, token) || opensOrderLink(ctx.deps.config, order.id, token);
  }
  if (!granted && query.email) {
    offered = true;
    const store = await ctx.em.findOneOrFail(StoreSchema, { id: order.store.id });
    granted =
      storeSettings(store).emailOrderAccess &&
      order.customerEmail !== '' &&
      safeEqual(order.customerEmail, query.email.trim().toLowerCase());
  }
  if (!granted && credentials.customerToken) {
    // The customer area opens the orders of the signed-in buyer's e-mail in that store.
    const customer = await customerOrNull(ctx);
    if (customer) {
      offered = true;
      granted =
        customer.store.id === order.store.id &&
        order.customerEmail !== '' &&
        safeEqual(order.customerEmail, customer.email);
    }
  }
  if (!granted && credentials.sessionToken && !credentials.authorization) {
    // A session that is gone is no credential, unless it is the only thing offered (then: sign in again).
    const staff = await authenticateSession(ctx, ctx.call).catch((error: unknown) => {
      if (offered && error instanceof AppError && error.appCode === 'unauthorized') return null;
      throw error;
    });
    if (staff) {
      offered = true;
      await requireMember(ctx, staff.user, order.store.id, 'viewOrders');
      granted = true;
    }
  }
  if (!offered)
    throw new AppError('unauthorized', 'Open the order with its link, its e-mail address or a staff session.');
  if (!granted) throw new AppError('store_forbidden', 'These credentials do not open this order.');
  if (!PAID_STATUSES.includes(order.status) && order.status !== 'refunded') {
    throw new AppError('order_not_paid', 'This order has not been paid.');
  }
  return order;
}

function fileLinkKey(ctx: ServiceContext): Buffer {
  return deriveKey(ctx.deps.config.encryptionKey, 'file-link');
}

export function signFileLink(ctx: ServiceContext, orderId: string, fileId: string, expires: number): string {
  return hmacHex(fileLinkKey(ctx), `${orderId}.${fileId}.${expires}`);
}

async function deliveredKeys(ctx: ServiceContext, order: Order) {
  const keys = await ctx.em.find(
    LicenseKeySchema,
    { order: order.id, status: 'assigned' },
    { orderBy: { assignedAt: 'asc', id: 'asc' } },
  );
  if (keys.length === 0) return [];
  const lines = await ctx.em.find(OrderLineSchema, { order: order.id });
  return keys.map((key) => {
    const line = lines.find((l) => l.id === key.orderLineId);
    return {
      productId: line?.productId ?? null,
      productName: line?.productName ?? null,
      key: decryptLicenseKey(ctx.deps.config, key.valueEnc),
    };
  });
}

export async function deliveryPayload(ctx: ServiceContext, order: Order): Promise<TDeliveryPayload> {
  const payload: TDeliveryPayload = {
    orderId: order.id,
    status: order.status,
    methods: [],
    customFields: order.customFieldResponses,
  };
  if (order.status === 'refunded') return payload;
  const lines = await ctx.em.find(OrderLineSchema, { order: order.id }, { orderBy: { position: 'asc', id: 'asc' } });
  const productIds = lines.map((l) => l.productId).filter((id): id is string => !!id);
  const products = productIds.length ? await ctx.em.find(ProductSchema, { id: { $in: productIds } }) : [];
  const methods = new Set<TDeliveryMethod>(products.flatMap((p) => p.deliveryMethods));
  payload.methods = [...methods];
  if (methods.has('licenseKeys')) payload.licenseKeys = await deliveredKeys(ctx, order);
  if (methods.has('downloadFiles')) {
    const files = await ctx.em.find(
      StoredFileSchema,
      { product: { $in: productIds } },
      { orderBy: { createdAt: 'asc', id: 'asc' } },
    );
    const expires = Math.floor(ctx.clock.now().getTime() / 1000) + FILE_LINK_TTL_SECONDS;
    payload.downloadFiles = files.map((file) => ({
      id: file.id,
      name: file.name,
      size: file.size,
      url: `${ctx.deps.config.publicUrl}/api/orders/${order.id}/files/${file.id}?expires=${expires}&sig=${signFileLink(ctx, order.id, file.id, expires)}`,
    }));
  }
  if (methods.has('manualDelivery')) {
    payload.manualDelivery = order.deliveredAt
      ? { status: 'delivered', content: order.manualDeliveryContent }
      : { status: 'pending', content: '' };
  }
  if (methods.has('deliveryInstructions')) {
    payload.deliveryInstructions = products
      .filter((p) => p.deliveryMethods.includes('deliveryInstructions') && p.deliveryInstructions.trim() !== '')
      .map((p) => ({ productId: p.id, text: p.deliveryInstructions }));
  }
  return payload;
}

export async function orderKeys(ctx: ServiceContext, order: Order) {
  return {
    orderId: order.id,
    status: order.status,
    keys: order.status === 'refunded' ? [] : await deliveredKeys(ctx, order),
  };
}

export async function tryAssignForBuyer(ctx: ServiceContext, order: Order) {
  if (order.status === 'refunded') throw new AppError('order_not_paid', 'This order was refunded.');
  const updated = await tryAssignKeys({ ...ctx, em: ctx.em.fork() }, { orderId: order.id, now: ctx.clock.now() });
  return {
    orderId: updated.id,
    status: updated.status,
    keyCount: updated.keyCount,
    missingKeys: await keysOwed({ ...ctx, em: ctx.em.fork() }, updated),
  };
}

/** A signed, unexpired link to one of the order's files, for an order that still delivers. */
export async function fileForLink(
  ctx: ServiceContext,
  params: { orderId: string; fileId: string; expires: number; sig: string },
) {
  const now = Math.floor(ctx.clock.now().getTime() / 1000);
  if (!Number.isInteger(params.expires) || params.expires < now)
    throw new AppError('store_forbidden', 'This download link has expired; open the order again for a new one.');
  if (!safeEqual(params.sig, signFileLink(ctx, params.orderId, params.fileId, params.expires))) {
    throw new AppError('store_forbidden', 'This download link is not valid.');
  }
  const order = await ctx.em.findOne(OrderSchema, { id: params.orderId });
  if (!order || !PAID_STATUSES.includes(order.status)) throw new AppError('not_found', 'File not found.');
  const file = await ctx.em.findOne(StoredFileSchema, { id: params.fileId });
  const lines = await ctx.em.find(OrderLineSchema, { order: order.id });
  if (!file || !file.product || !lines.some((l) => l.productId === file.product!.id))
    throw new AppError('not_found', 'File not found.');
  return file;
}
