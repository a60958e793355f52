import { ZBuyerOrderAccess, ZDeliveryPayload, ZOrderKeys, ZTryAssignResult } from '@svc/schemas';
import { publicProcedure, router } from '../../trpc/procedures.js';
import { buyerOrderAccess, deliveryPayload, orderKeys, tryAssignForBuyer } from './delivery.service.js';

const tags = ['buyer'];

export const fulfilmentRouter = router({
  delivery: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/orders/{orderId}/delivery', tags, summary: 'What the buyer receives: keys, file links, instructions, manual delivery', protect: false, errorResponses: [400, 401, 403, 404, 409] } })
    .input(ZBuyerOrderAccess)
    .output(ZDeliveryPayload)
    .query(async ({ ctx, input }) => deliveryPayload(ctx, await buyerOrderAccess(ctx, input))),

  keys: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/orders/{orderId}/keys', tags, summary: 'The license keys of a paid order', protect: false, errorResponses: [400, 401, 403, 404, 409] } })
    .input(ZBuyerOrderAccess)
    .output(ZOrderKeys)
    .query(async ({ ctx, input }) => orderKeys(ctx, await buyerOrderAccess(ctx, input))),

  tryAssignKeys: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/orders/{orderId}/try-assign-keys', tags, summary: 'Assign keys an order still lacks, after a restock', protect: false, errorResponses: [400, 401, 403, 404, 409] },
      rateLimit: { name: 'orders.try-assign-keys', max: 30, windowMs: 60_000 },
    })
    .input(ZBuyerOrderAccess)
    .output(ZTryAssignResult)
    .mutation(async ({ ctx, input }) => tryAssignForBuyer(ctx, await buyerOrderAccess(ctx, input, 'mutation'))),
});
