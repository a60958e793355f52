/**
 * How every catalog service finds a product: a (not deleted) one of the store and mode named, 404
 * otherwise. A file of its own so the products' service and the key store share it without
 * importing each other.
 */
import { AppError } from '../../lib/errors.js';
import type { ServiceContext } from '../request/context.js';
import { ProductSchema, type Product } from './catalog.entities.js';

/** A product (not deleted) of the store and mode (test mode: docs/architecture.md), or 404. */
export async function findProduct(
  ctx: Pick<ServiceContext, 'em'>,
  storeId: string,
  livemode: boolean,
  productId: string,
): Promise<Product> {
  const product = await ctx.em.findOne(ProductSchema, { id: productId, store: storeId, livemode, deletedAt: null });
  if (!product) throw new AppError('not_found', 'Product not found.');
  return product;
}
