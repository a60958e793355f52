/**
 * A new store's setup checklist (the dashboard's Home; docs/decisions.md, "Onboarding checklist"):
 * which of the five first steps the seller has done. It reads four modules (stores, catalog,
 * orders, api-keys), so it is a flow; each step is one indexed existence read, never a count, so
 * a store with a million orders answers as fast as a new one.
 */
import { ONBOARDING_STEPS, type TOnboardingStepId, type TStoreOnboarding } from '@svc/schemas';
import { anyApiKeyFor } from '../modules/api-keys/api-keys.repo.js';
import { anyProductOf } from '../modules/catalog/catalog.repo.js';
import { anyPaidTestOrder } from '../modules/orders/orders.repo.js';
import type { ServiceContext } from '../modules/request/context.js';
import { StoreSchema } from '../modules/stores/stores.entities.js';

/**
 * The store's setup steps, in the checklist's order, and whether all are done. Whatever the
 * caller's mode: a test purchase is a test-mode order, a product or a key of either mode counts.
 * Transactions: none; four statements in turn (the store's row holds two marks), each its own
 * read: a step done between two of them shows on the next call.
 */
export async function storeOnboarding(ctx: ServiceContext, input: { storeId: string }): Promise<TStoreOnboarding> {
  const { storeId } = input;
  const store = await ctx.em.findOneOrFail(StoreSchema, { id: storeId });
  const done: Record<TOnboardingStepId, boolean> = {
    add_product: await anyProductOf(ctx.em, storeId),
    payment_methods: store.paymentMethodsChosenAt != null,
    view_store: store.firstPreviewedAt != null,
    test_purchase: await anyPaidTestOrder(ctx.em, storeId),
    api_key: await anyApiKeyFor(ctx.em, storeId),
  };
  const steps = ONBOARDING_STEPS.map((id) => ({ id, done: done[id] }));
  return { steps, complete: steps.every((step) => step.done) };
}
