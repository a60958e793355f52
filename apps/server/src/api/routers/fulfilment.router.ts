import { ZBuyerOrderAccess, ZDeliveryPayload, ZOrderKeys, ZTryAssignResult } from '@svc/schemas';
import type { TErrorCode } from '@svc/schemas';
import { buyerProcedure, router } from '../../trpc/procedures.js';
import {
  buyerOrderAccess,
  deliveryPayload,
  orderKeys,
  tryAssignForBuyer,
} from '../../modules/fulfilment/delivery.service.js';

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
