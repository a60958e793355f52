import {
  ZBuyerOrderAccess,
  ZDeliveryPayload,
  ZImportKeysInput,
  ZImportKeysResult,
  ZMerchantImportKeysInput,
  ZOrderKeys,
  ZTryAssignResult,
} from '@svc/schemas';
import type { TErrorCode } from '@svc/schemas';
import { buyerProcedure, merchantProcedure, router, storeProcedure } from '../../trpc/procedures.js';
import { MERCHANT_PRODUCT_TAGS, MERCHANT_PRODUCTS_BASE, PRODUCT_TAGS, PRODUCTS_BASE } from './catalog.router.js';
import {
  buyerOrderAccess,
  deliveryPayload,
  orderKeys,
  tryAssignForBuyer,
} from '../../modules/fulfilment/delivery.service.js';
import { restock } from '../../modules/fulfilment/fulfilment.service.js';

const tags = ['buyer'];
/** Unpaid: 409; a staff session without viewOrders: 403 (the other credential errors come with the buyer surface). */
const errors: TErrorCode[] = ['order_not_paid', 'permission_missing'];

export const fulfilmentRouter = router({
  delivery: buyerProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/orders/{orderId}/delivery',
        tags,
        summary: 'What the buyer receives: keys, file links, instructions, manual delivery',
      },
      errors,
    })
    .input(ZBuyerOrderAccess)
    .output(ZDeliveryPayload)
    .query(async ({ ctx, input }) => deliveryPayload(ctx, await buyerOrderAccess(ctx, input))),

  keys: buyerProcedure
    .meta({
      openapi: { method: 'GET', path: '/orders/{orderId}/keys', tags, summary: 'The license keys of a paid order' },
      errors,
    })
    .input(ZBuyerOrderAccess)
    .output(ZOrderKeys)
    .query(async ({ ctx, input }) => orderKeys(ctx, await buyerOrderAccess(ctx, input))),

  tryAssignKeys: buyerProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/orders/{orderId}/try-assign-keys',
        tags,
        summary: 'Assign keys an order still lacks, after a restock',
      },
      errors,
      rateLimit: { name: 'orders.try-assign-keys', max: 30, windowMs: 60_000 },
    })
    .input(ZBuyerOrderAccess)
    .output(ZTryAssignResult)
    .mutation(async ({ ctx, input }) => tryAssignForBuyer(ctx, await buyerOrderAccess(ctx, input))),
});

/**
 * Adding keys to stock serves the orders that waited for them, so it is fulfilment's; the app
 * router merges it into the `catalog` namespace beside the product's other routes.
 */
export const restockRouter = router({
  importKeys: merchantProcedure('product:write')
    .meta({
      openapi: {
        method: 'POST',
        path: `${MERCHANT_PRODUCTS_BASE}/{productId}/license-keys`,
        tags: MERCHANT_PRODUCT_TAGS,
        summary: 'Add 1 to 10,000 license keys to stock (duplicates dropped); orders waiting for keys are filled',
      },
      errors: ['not_found', 'conflict'],
    })
    .input(ZMerchantImportKeysInput)
    .output(ZImportKeysResult)
    .mutation(({ ctx, input }) => restock(ctx, input)),
  dashboardImportKeys: storeProcedure('manageProducts')
    .meta({
      openapi: {
        method: 'POST',
        path: `${PRODUCTS_BASE}/{productId}/license-keys`,
        tags: PRODUCT_TAGS,
        summary: 'Add license keys to stock (duplicates dropped)',
      },
      errors: ['not_found'],
    })
    .input(ZImportKeysInput)
    .output(ZImportKeysResult)
    .mutation(({ ctx, input }) => restock(ctx, input)),
});
