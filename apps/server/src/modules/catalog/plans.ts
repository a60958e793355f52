/**
 * A recurring product's plans (docs/decisions.md, "Plans"): reading them beside their products,
 * their view, and applying a create's or an update's `plans` to the product_plan rows. A product
 * with `recurring` false has no plan rows, and a read of one-time products never reads the table.
 */
import type { TPlan, TPlanInput } from '@svc/schemas';
import { AppError, invalidField } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { inputAmountToMinor, minorToAmount } from '../../lib/money.js';
import { OrderLineSchema } from '../orders/orders.entities.js';
import type { ServiceContext } from '../request/context.js';
import { ProductPlanSchema, type Product, type ProductPlan } from './catalog.entities.js';

/** What a plan's view reads: a ProductPlan, or the same fields from a raw row. */
export type PlanFields = Pick<ProductPlan, 'id' | 'interval' | 'intervalCount' | 'priceMinor' | 'trialDays' | 'active'>;

export function toPlanView(plan: PlanFields, currency: string): TPlan {
  return {
    id: plan.id,
    interval: plan.interval,
    intervalCount: plan.intervalCount,
    price: minorToAmount(plan.priceMinor, currency),
    trialDays: plan.trialDays,
    active: plan.active,
  };
}

/** The plans of the recurring ones of `products`, in order, by product id; no statement when none is recurring. */
export async function plansOf(
  ctx: Pick<ServiceContext, 'em'>,
  products: Product[],
): Promise<Map<string, ProductPlan[]>> {
  const byProduct = new Map<string, ProductPlan[]>();
  const ids = products.filter((product) => product.recurring).map((product) => product.id);
  if (ids.length === 0) return byProduct;
  const plans = await ctx.em.find(
    ProductPlanSchema,
    { product: { $in: ids } },
    { orderBy: { product: 'asc', position: 'asc', id: 'asc' } },
  );
  for (const plan of plans) {
    const list = byProduct.get(plan.product.id) ?? [];
    list.push(plan);
    byProduct.set(plan.product.id, list);
  }
  return byProduct;
}

/** The plan that prices a recurring product: its first active one. */
export function firstActive<T extends Pick<ProductPlan, 'active' | 'position'>>(plans: T[]): T | undefined {
  return [...plans].sort((a, b) => a.position - b.position).find((plan) => plan.active);
}

/** Whether any order names the product: then it stays one-time or recurring for good. */
async function hasOrders(ctx: Pick<ServiceContext, 'em'>, productId: string): Promise<boolean> {
  return (await ctx.em.findOne(OrderLineSchema, { productId }, { fields: ['id'] })) !== null;
}

/**
 * Applies `input` (a create's or an update's `plans`) to the product and its plans, `existing`
 * (its plans now, in order); returns its plans after. `[]` makes it one-time, plans make it
 * recurring; a product with orders does not change between the two (409). Plans with an `id` are
 * the product's (400 otherwise) and may change price, trial and `active`, not their period; plans
 * without one are added; plans left out are archived, never deleted. The input's order is the
 * plans' order, the archived ones after; the product's price becomes its first active plan's.
 */
export async function applyPlans(
  ctx: Pick<ServiceContext, 'em'>,
  product: Product,
  existing: ProductPlan[],
  input: TPlanInput[],
  currency: string,
  now: Date,
  created: boolean,
): Promise<ProductPlan[]> {
  const recurring = input.length > 0;
  // A product created just now has no orders: only an update can switch a sold product.
  if (!created && recurring !== product.recurring) {
    if (await hasOrders(ctx, product.id)) {
      throw new AppError(
        'conflict',
        'This product has orders: it stays one-time or recurring. Create a new product to sell it the other way.',
      );
    }
  }
  if (!recurring) {
    // One-time: a product without orders has sold none of its plans, so they go.
    for (const plan of existing) ctx.em.remove(plan);
    product.recurring = false;
    return [];
  }
  const byId = new Map(existing.map((plan) => [plan.id, plan]));
  const kept = new Set<string>();
  const after: ProductPlan[] = [];
  input.forEach((given, index) => {
    const priceMinor = inputAmountToMinor(given.price, currency, `plans.${index}.price`);
    if (given.id !== undefined) {
      const plan = byId.get(given.id);
      if (!plan) throw invalidField(`plans.${index}.id`, 'No plan of this product has this id.');
      if (plan.interval !== given.interval || plan.intervalCount !== given.intervalCount) {
        throw invalidField(
          `plans.${index}.interval`,
          "A plan's billing period can't change: archive it and add a new plan instead.",
        );
      }
      plan.priceMinor = priceMinor;
      plan.trialDays = given.trialDays;
      plan.active = given.active;
      plan.position = index;
      plan.updatedAt = now;
      kept.add(plan.id);
      after.push(plan);
      return;
    }
    after.push(
      ctx.em.create(ProductPlanSchema, {
        id: newId(),
        product: product.id,
        livemode: product.livemode,
        position: index,
        interval: given.interval,
        intervalCount: given.intervalCount,
        priceMinor,
        trialDays: given.trialDays,
        active: given.active,
        createdAt: now,
        updatedAt: now,
      }),
    );
  });
  for (const plan of existing) {
    if (kept.has(plan.id)) continue;
    plan.active = false;
    plan.position = after.length;
    plan.updatedAt = now;
    after.push(plan);
  }
  product.recurring = true;
  product.priceMinor = firstActive(after)!.priceMinor;
  return after;
}
