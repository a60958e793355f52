/**
 * Proof of a manual payment: the buyer uploads it for a pending order paid by the
 * `manual` method; the seller looks at it on the dashboard and approves with mark-paid.
 * The merchant API never returns it.
 */
import type { Readable } from 'node:stream';
import { AppError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { FileTooLargeError } from '../../lib/storage.js';
import type { ServiceContext } from '../request/context.js';
import { StoredFileSchema } from '../catalog/catalog.entities.js';
import { findStoreOrder, lockOrder, orderForToken } from '../orders/orders.service.js';

export const PROOF_MAX_BYTES = 10 * 1024 * 1024;

export async function uploadPaymentProof(
  ctx: ServiceContext,
  input: { orderId: string; token: string; name: string; contentType: string; stream: Readable },
): Promise<{ orderId: string; proof: { name: string; size: number; contentType: string } }> {
  const opened = await orderForToken(ctx.em, input.orderId, input.token);
  // Past the checkout lifetime the order is as good as expired (the job may not have run yet).
  const awaiting = (order: { status: string; createdAt: Date }) =>
    order.status === 'pending' &&
    order.createdAt.getTime() + ctx.deps.config.checkoutLifetimeMs > ctx.clock.now().getTime();
  if (!awaiting(opened)) throw new AppError('order_not_pending', 'This order is no longer awaiting payment.');
  if (opened.paymentMethod !== 'manual')
    throw new AppError('conflict', 'Choose manual payment (POST /api/checkout/start) before sending a proof.');
  const id = newId();
  const storageKey = `${opened.store.id}/proofs/${id}`;
  let stored;
  try {
    stored = await ctx.deps.storage.write(
      storageKey,
      input.stream,
      Math.min(PROOF_MAX_BYTES, ctx.deps.config.fileMaxBytes),
    );
  } catch (error) {
    if (error instanceof FileTooLargeError)
      throw new AppError('payload_too_large', `A proof may be at most ${error.maxBytes} bytes.`);
    throw error;
  }
  try {
    return await ctx.em.transactional(async (em) => {
      const order = await lockOrder(em, opened.id);
      if (!awaiting(order)) throw new AppError('order_not_pending', 'This order is no longer awaiting payment.');
      const file = em.create(StoredFileSchema, {
        id,
        store: order.store.id,
        product: null,
        name: input.name.split(/[\\/]/).pop()?.slice(0, 255) || 'proof',
        contentType: input.contentType.slice(0, 100) || 'application/octet-stream',
        size: stored.size,
        sha256: stored.sha256,
        storageKey,
        createdAt: ctx.clock.now(),
      });
      order.paymentProofFileId = file.id;
      order.updatedAt = ctx.clock.now();
      return { orderId: order.id, proof: { name: file.name, size: file.size, contentType: file.contentType } };
    });
  } catch (error) {
    await ctx.deps.storage.remove(storageKey);
    throw error;
  }
}

/** The proof of an order of the store, for the dashboard. */
export async function paymentProofOf(ctx: ServiceContext, storeId: string, orderId: string) {
  const order = await findStoreOrder(ctx.em, storeId, orderId);
  const file = order.paymentProofFileId
    ? await ctx.em.findOne(StoredFileSchema, { id: order.paymentProofFileId, store: storeId })
    : null;
  if (!file) throw new AppError('not_found', 'This order has no payment proof.');
  return file;
}
