/**
 * Restock: keys added to a product's stock (catalog's key store) serve the orders that waited for
 * them, oldest payment first (fulfilment).
 */
import { importKeys } from '../modules/catalog/key-store.js';
import { fillWaitingOrders } from '../modules/fulfilment/fulfilment.service.js';
import type { ServiceContext } from '../modules/request/context.js';

/**
 * Adds keys to stock and serves the orders that waited for them. Transactions: the import is one
 * statement; each waiting order is then served in a transaction of its own, on a fresh
 * EntityManager (one order's row lock is never held while the next is served).
 */
export async function restock(
  ctx: ServiceContext,
  input: { storeId: string; productId: string; keys: string[] },
): Promise<{ added: number; duplicates: number }> {
  const result = await importKeys(ctx, input);
  if (result.added > 0)
    await fillWaitingOrders({ ...ctx, em: ctx.em.fork() }, { productId: input.productId, now: ctx.clock.now() });
  return result;
}
