/**
 * Cart normalisation, shared by the theme cart, coupons and placing an order: duplicate lines
 * merged, unknown or unpurchasable products set aside with a reason, quantities held to
 * the product's minimum, maximum and key stock, and every price from the database. A cart is of
 * one mode (test mode: docs/architecture.md): its products' mode; a cart that mixes modes is 400 mixed_modes.
 * A recurring product's line names its plan (the first active one by default), its quantity is
 * seats (1..100), and it is alone in its cart (400 recurring_alone; docs/decisions.md, "Plans").
 * Test products count only for a caller that may see the store's test mode (access/test-mode.ts):
 * for anyone else they are unknown products, as an id that names nothing is.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { SEATS_MAX, type TCartLine, type TCartResult } from '@svc/schemas';
import { AppError, invalidField } from '../../lib/errors.js';
import type { TestModeAccess } from '../access/test-mode.js';
import type { ServiceContext } from '../request/context.js';
import type { SellingStoreRef } from '../stores/selling-store.js';
import type { Product } from './catalog.entities.js';
import { selectCartProducts, type PlanRow } from './catalog.repo.js';
import { firstActive } from './plans.js';

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
  | 'taxCategory'
> & {
  deletedAt: Date | null;
  /** A recurring product's plans (archived ones included); null for a one-time product. */
  plans: PlanRow[] | null;
};

export interface NormalisedLine {
  product: CartProduct;
  /** The plan of a recurring product's line; null for a one-time product. */
  plan: PlanRow | null;
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

interface MergedLine {
  productId: string;
  planId: string | undefined;
  quantity: number;
  /** The first of the lines merged into it, as the cart numbers them (for an issue's path). */
  index: number;
}

/** Lines of the same product and plan as one line. */
function merge(lines: TCartLine[]): Map<string, MergedLine> {
  const merged = new Map<string, MergedLine>();
  lines.forEach((line, index) => {
    const key = `${line.productId} ${line.planId ?? ''}`;
    const known = merged.get(key);
    if (known) known.quantity += line.quantity;
    else merged.set(key, { productId: line.productId, planId: line.planId, quantity: line.quantity, index });
  });
  return merged;
}

/**
 * The plan a line buys: none for a one-time product (a planId there is 400), else the plan named
 * (one of the product's, active) or the first active one. Its seats are 1..100; it is alone in its cart.
 */
function planOf(product: CartProduct, line: MergedLine, lineCount: number): PlanRow | null {
  if (!product.plans) {
    if (line.planId !== undefined) {
      throw invalidField(`cart.${line.index}.planId`, 'This product is sold once: its line takes no planId.');
    }
    return null;
  }
  if (lineCount > 1) {
    throw new AppError(
      'recurring_alone',
      'A subscription is checked out on its own: take the other lines out of the cart.',
    );
  }
  const plan = line.planId === undefined ? firstActive(product.plans) : product.plans.find((p) => p.id === line.planId);
  if (!plan) throw invalidField(`cart.${line.index}.planId`, "This plan is not one of the product's plans.");
  if (!plan.active) {
    throw invalidField(
      `cart.${line.index}.planId`,
      "This plan is no longer sold: choose another of the product's plans.",
    );
  }
  if (line.quantity > SEATS_MAX) {
    throw invalidField(`cart.${line.index}.quantity`, `A subscription has 1 to ${SEATS_MAX} seats.`);
  }
  return plan;
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
      taxCategory: row.tax_category,
      deletedAt: row.deleted ? new Date(0) : null,
      plans: row.plans,
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
  const { products: byId, stock } = await cartProducts(ctx.em, store.id, [
    ...new Set([...merged.values()].map((line) => line.productId)),
  ]);
  const hasTest = [...byId.values()].some((product) => !product.livemode);
  if (hasTest && !(await testMode(store.id))) {
    for (const [id, product] of byId) if (!product.livemode) byId.delete(id);
  }
  const modes = new Set([...byId.values()].map((product) => product.livemode));
  if (modes.size > 1) throw new AppError('mixed_modes', 'The cart mixes test-mode and live products.');
  const out: NormalisedCart = { livemode: modes.has(false) ? false : true, lines: [], removed: [], adjusted: [] };
  for (const line of merged.values()) {
    const { productId, quantity: requested } = line;
    const product = byId.get(productId);
    if (!product || product.deletedAt) {
      out.removed.push({ productId, reason: 'unknown_product' });
      continue;
    }
    if (product.status !== 'active') {
      out.removed.push({ productId, reason: 'unavailable' });
      continue;
    }
    const plan = planOf(product, line, merged.size);
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
    out.lines.push({
      product,
      plan,
      requested,
      quantity,
      unitPriceMinor: plan ? Number(plan.priceMinor) : product.priceMinor,
      stock: available,
    });
  }
  return out;
}
