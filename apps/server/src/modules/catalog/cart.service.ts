/**
 * The theme cart (`GET /api/v1/cart`): the cart normalised (cart.ts) and priced for the buyer.
 */
import type { TCartResult } from '@svc/schemas';
import { ZCart } from '@svc/schemas';
import { AppError, zodIssues } from '../../lib/errors.js';
import { readJsonField } from '../../lib/input-limits.js';
import { minorToAmount } from '../../lib/money.js';
import type { TestModeAccess } from '../access/test-mode.js';
import type { ServiceContext } from '../request/context.js';
import { findSellingStoreRef, type SellingStoreRef } from '../stores/selling-store.js';
import { normaliseCart, type NormalisedCart } from './cart.js';
import { toPlanView } from './plans.js';
import { rateFraction, workOutTax, type TaxableLine, type TaxOutcome } from '../tax/tax.js';

/** The cart's lines as tax sees them (no coupon yet: the cart has none). */
export function taxableLines(lines: NormalisedCart['lines']): TaxableLine[] {
  return lines.map((line) => ({
    amountMinor: line.unitPriceMinor * line.quantity,
    category: line.product.taxCategory,
    discounted: false,
  }));
}

export function cartResult(store: SellingStoreRef, cart: NormalisedCart, tax: TaxOutcome): TCartResult {
  const subtotalMinor = cart.lines.reduce((sum, line) => sum + line.unitPriceMinor * line.quantity, 0);
  return {
    storeId: store.id,
    currency: store.currency,
    lines: cart.lines.map((line) => ({
      productId: line.product.id,
      planId: line.plan?.id ?? null,
      plans: (line.product.plans ?? [])
        .filter((plan) => plan.active)
        .sort((a, b) => a.position - b.position)
        .map((plan) => toPlanView(plan, store.currency)),
      name: line.product.name,
      quantity: line.quantity,
      unitPrice: minorToAmount(line.unitPriceMinor, store.currency),
      lineTotal: minorToAmount(line.unitPriceMinor * line.quantity, store.currency),
      stock: line.stock,
    })),
    removed: cart.removed,
    adjusted: cart.adjusted,
    subtotal: minorToAmount(subtotalMinor, store.currency),
    taxAmount: minorToAmount(tax.taxMinor, store.currency),
    total: minorToAmount(tax.totalMinor, store.currency),
    taxBehavior: tax.behavior,
    taxRate: rateFraction(tax.ratePpm),
    taxCountry: tax.country,
    reverseCharge: tax.reverseCharge,
    itemCount: cart.lines.reduce((sum, line) => sum + line.quantity, 0),
  };
}

/**
 * `GET /api/v1/cart`: the cart arrives as JSON in the query string; test products only for
 * `testMode`'s callers. The tax line is worked out for the billing country asked for, else the
 * request's own (`requestCountry`, unknown: `XX`; asked only of a store that charges tax: a lookup
 * of the IP may load the geo database), at the clock's now.
 */
export async function hydrateCart(
  ctx: ServiceContext,
  input: { storeId: string; cart: string; country?: string | undefined; taxId?: string | undefined },
  testMode: TestModeAccess,
  requestCountry: () => string,
): Promise<TCartResult> {
  const parsed = ZCart.safeParse(readJsonField('cart', input.cart));
  if (!parsed.success) {
    throw new AppError('validation_failed', 'The request is not valid.', {
      issues: zodIssues(parsed.error).map((issue) => ({
        path: issue.path ? `cart.${issue.path}` : 'cart',
        message: issue.message,
      })),
    });
  }
  // Two prepared reads and no entity: the root EntityManager's pool, without forking a unit of work.
  // Built field by field: a spread of the request's context would read its `em`, which forks one.
  const root: ServiceContext = {
    deps: ctx.deps,
    em: ctx.deps.orm.em,
    clock: ctx.clock,
    log: ctx.log,
    livemode: ctx.livemode,
  };
  const store = await findSellingStoreRef(root, input.storeId);
  const cart = await normaliseCart(root, store, parsed.data, testMode);
  const guessed = input.country ?? (store.tax.behavior === 'off' ? 'XX' : requestCountry());
  const country = guessed === 'XX' ? null : guessed;
  const tax = workOutTax(
    store.tax,
    taxableLines(cart.lines),
    0,
    { country, taxId: input.taxId ?? null },
    ctx.clock.now(),
  );
  return cartResult(store, cart, tax);
}
