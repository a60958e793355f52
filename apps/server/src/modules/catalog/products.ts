/**
 * How every catalog service finds a product: a (not deleted) one of the store and mode named, 404
 * otherwise. A file of its own so the products' service and the key store share it without
 * importing each other.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../lib/errors.js';
import { ProductSchema, type Product } from './catalog.entities.js';

/** A product (not deleted) of the store and mode (test mode: docs/architecture.md), or 404. */
export async function findProduct(
  em: EntityManager,
  storeId: string,
  livemode: boolean,
  productId: string,
): Promise<Product> {
  const product = await em.findOne(ProductSchema, { id: productId, store: storeId, livemode, deletedAt: null });
  if (!product) throw new AppError('not_found', 'Product not found.');
  return product;
}
