/**
 * Cart normalisation, shared by the theme cart, coupons and placing an order: duplicate lines
 * merged, unknown or unpurchasable products set aside with a reason, quantities held to
 * the product's minimum, maximum and key stock, and every price from the database. A cart is of
 * one mode (test mode: docs/architecture.md): its products' mode; a cart that mixes modes is 400 mixed_modes.
 * Test products count only for a caller that may see the store's test mode (access/test-mode.ts):
 * for anyone else they are unknown products, as an id that names nothing is.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { TCartLine, TCartResult } from '@svc/schemas';
import { AppError } from '../../lib/errors.js';
import type { TestModeAccess } from '../access/test-mode.js';
import type { ServiceContext } from '../request/context.js';
import type { SellingStoreRef } from '../stores/selling-store.js';
import type { Product } from './catalog.entities.js';
import { selectCartProducts } from './catalog.repo.js';

/** What a cart line needs of its product. */
export type CartProduct = Pick<
  Product,
  | 'id'
  | 'livemode'
  | 'name'
  | 'status'
  | 'priceMinor'
  | 'minQuantity'
  | 'maxQuantity'
  | 'customFields'
  | 'deliveryMethods'
> & {
  deletedAt: Date | null;
};

export interface NormalisedLine {
  product: CartProduct;
  requested: number;
  quantity: number;
  unitPriceMinor: number;
  stock: number | null;
}

export interface NormalisedCart {
  /** The mode of the cart's products (live when it names none that exists). */
  livemode: boolean;
  lines: NormalisedLine[];
  removed: TCartResult['removed'];
  adjusted: TCartResult['adjusted'];
}

function merge(lines: TCartLine[]): Map<string, number> {
  const merged = new Map<string, number>();
  for (const line of lines) merged.set(line.productId, (merged.get(line.productId) ?? 0) + line.quantity);
  return merged;
}

/** The store's products of the cart with their key stock, in one statement (cart and checkout are hot). */
async function cartProducts(
  em: EntityManager,
  storeId: string,
  ids: string[],
): Promise<{ products: Map<string, CartProduct>; stock: Map<string, number> }> {
  const rows = await selectCartProducts(em, storeId, ids);
  const products = new Map<string, CartProduct>();
  const stock = new Map<string, number>();
  for (const row of rows) {
    products.set(row.id, {
      id: row.id,
      livemode: row.livemode,
      name: row.name,
      status: row.status,
      priceMinor: Number(row.price_minor),
      minQuantity: row.min_quantity,
      maxQuantity: row.max_quantity,
      customFields: row.custom_fields,
      deliveryMethods: row.delivery_methods,
      deletedAt: row.deleted ? new Date(0) : null,
    });
    if (row.available !== null) stock.set(row.id, Number(row.available));
  }
  return { products, stock };
}

export async function normaliseCart(
  ctx: Pick<ServiceContext, 'em'>,
  store: Pick<SellingStoreRef, 'id'>,
  lines: TCartLine[],
  testMode: TestModeAccess,
): Promise<NormalisedCart> {
  const merged = merge(lines);
  const { products: byId, stock } = await cartProducts(ctx.em, store.id, [...merged.keys()]);
  const hasTest = [...byId.values()].some((product) => !product.livemode);
  if (hasTest && !(await testMode(store.id))) {
    for (const [id, product] of byId) if (!product.livemode) byId.delete(id);
  }
  const modes = new Set([...byId.values()].map((product) => product.livemode));
  if (modes.size > 1) throw new AppError('mixed_modes', 'The cart mixes test-mode and live products.');
  const out: NormalisedCart = { livemode: modes.has(false) ? false : true, lines: [], removed: [], adjusted: [] };
  for (const [productId, requested] of merged) {
    const product = byId.get(productId);
    if (!product || product.deletedAt) {
      out.removed.push({ productId, reason: 'unknown_product' });
      continue;
    }
    if (product.status !== 'active') {
      out.removed.push({ productId, reason: 'unavailable' });
      continue;
    }
    const available = stock.get(productId) ?? null;
    let quantity = requested;
    const adjust = (to: number, reason: 'min_quantity' | 'max_quantity' | 'stock') => {
      out.adjusted.push({ productId, requested, quantity: to, reason });
      quantity = to;
    };
    if (quantity < product.minQuantity) adjust(product.minQuantity, 'min_quantity');
    if (product.maxQuantity != null && quantity > product.maxQuantity) adjust(product.maxQuantity, 'max_quantity');
    if (available !== null && quantity > available) {
      if (available < product.minQuantity) {
        out.removed.push({ productId, reason: 'out_of_stock' });
        continue;
      }
      adjust(available, 'stock');
    }
    out.lines.push({ product, requested, quantity, unitPriceMinor: product.priceMinor, stock: available });
  }
  return out;
}
