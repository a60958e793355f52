/**
 * Proof of a manual payment: the buyer uploads it for a pending order paid by the
 * `manual` method; the seller looks at it on the dashboard and approves with mark-paid.
 * The merchant API never returns it.
 */
import { inTransaction } from '../request/transaction.js';
import type { Readable } from 'node:stream';
import { AppError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { FileTooLargeError } from '../../lib/storage.js';
import type { ServiceContext } from '../request/context.js';
import { StoredFileSchema } from '../catalog/catalog.entities.js';
import { findStoreOrder, lockOrder, orderForToken } from '../orders/order-lookup.js';
import { describeBytes } from '@svc/schemas';

export const PROOF_MAX_BYTES = 10 * 1024 * 1024;
/** Proofs kept per order: the newest; storing one more drops the oldest row and its file. */
export const PROOFS_KEPT = 5;

export async function uploadPaymentProof(
  ctx: ServiceContext,
  input: { orderId: string; token: string; name: string; contentType: string; stream: Readable },
): Promise<{ orderId: string; proof: { name: string; size: number; contentType: string } }> {
  const opened = await orderForToken(ctx, input.orderId, input.token);
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
      throw new AppError('payload_too_large', `The proof must be ${describeBytes(error.maxBytes)} or smaller.`);
    throw error;
  }
  let kept;
  try {
    kept = await inTransaction(ctx, async (tx) => {
      // The order's row lock serialises the proofs of one order: numbers and pruning never race.
      const order = await lockOrder(tx, opened.id);
      if (!awaiting(order)) throw new AppError('order_not_pending', 'This order is no longer awaiting payment.');
      const earlier = await tx.em.find(StoredFileSchema, { order: order.id }, { orderBy: { proofNumber: 'desc' } });
      const file = tx.em.create(StoredFileSchema, {
        id,
        store: order.store.id,
        livemode: order.livemode,
        product: null,
        order: order.id,
        proofNumber: (earlier[0]?.proofNumber ?? 0) + 1,
        name: input.name.split(/[\\/]/).pop()?.slice(0, 255) || 'proof',
        contentType: input.contentType.slice(0, 100) || 'application/octet-stream',
        size: stored.size,
        sha256: stored.sha256,
        storageKey,
        createdAt: ctx.clock.now(),
      });
      const dropped = earlier.slice(PROOFS_KEPT - 1);
      for (const old of dropped) tx.em.remove(old);
      order.paymentProofFileId = file.id;
      order.updatedAt = ctx.clock.now();
      return {
        result: { orderId: order.id, proof: { name: file.name, size: file.size, contentType: file.contentType } },
        dropped: dropped.map((old) => old.storageKey),
      };
    });
  } catch (error) {
    // Nothing committed: the new file goes, the older proofs keep their rows and files.
    await ctx.deps.storage.remove(storageKey);
    throw error;
  }
  // Only now that no row names them. A crash before this line leaves these files orphaned
  // (docs/decisions.md, #26 Payment proofs); a failure here is logged, the proof is stored.
  for (const key of kept.dropped) {
    await ctx.deps.storage
      .remove(key)
      .catch((error: unknown) => ctx.deps.log.warn({ err: error, storageKey: key }, 'pruned proof not removed'));
  }
  return kept.result;
}

/** The proof of an order of the store, for the dashboard: the newest the buyer sent. */
export async function paymentProofOf(ctx: ServiceContext, storeId: string, orderId: string) {
  const order = await findStoreOrder(ctx, { storeId, orderId });
  const file = order.paymentProofFileId
    ? await ctx.em.findOne(StoredFileSchema, { id: order.paymentProofFileId, store: storeId, livemode: order.livemode })
    : null;
  if (!file) throw new AppError('not_found', 'This order has no payment proof.');
  return file;
}
