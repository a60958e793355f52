/**
 * How every catalog service finds a product: a live (not deleted) one of the store named, 404
 * otherwise. A file of its own so the products' service and the key store share it without
 * importing each other.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../lib/errors.js';
import { ProductSchema, type Product } from './catalog.entities.js';

/** A live (not deleted) product of the store, or 404. */
export async function findProduct(em: EntityManager, storeId: string, productId: string): Promise<Product> {
  const product = await em.findOne(ProductSchema, { id: productId, store: storeId, deletedAt: null });
  if (!product) throw new AppError('not_found', 'Product not found.');
  return product;
}
