/**
 * The buyer signed in to a store's customer area, read from the request's svc_customer session:
 * the customer area, delivery and tickets all start here.
 */
import { sha256Hex } from '../../lib/crypto.js';
import { AppError } from '../../lib/errors.js';
import type { Context, ServiceContext } from '../request/context.js';
import { ownOrigin, storeOrigins } from '../stores/origins.js';
import type { Store } from '../stores/stores.entities.js';
import { CustomerSessionSchema, type Customer } from './customers.entities.js';

/**
 * A request that names an Origin must come from the customer's store or from this service
 * itself: one store's theme cannot read, or end, another's buyers.
 */
export function assertStoreOrigin(ctx: ServiceContext & Pick<Context, 'caller'>, store: Store): void {
  const origin = ctx.caller.origin;
  if (origin && origin !== ownOrigin(ctx.deps.config) && !storeOrigins(ctx.deps.config, store).includes(origin)) {
    throw new AppError('store_forbidden', 'This origin does not belong to the store.');
  }
}

/** The signed-in customer, or 401; from an origin of another store, 403 (`assertStoreOrigin`). */
export async function authenticateCustomer(ctx: ServiceContext & Pick<Context, 'caller'>): Promise<Customer> {
  const token = ctx.caller.credentials.customerToken;
  if (!token) throw new AppError('unauthorized', 'Sign in with the code sent to your e-mail.');
  const session = await ctx.em.findOne(
    CustomerSessionSchema,
    { idHash: sha256Hex(token) },
    { populate: ['customer.store'] },
  );
  if (!session || session.expiresAt.getTime() <= ctx.clock.now().getTime()) {
    throw new AppError('unauthorized', 'The session has expired; sign in again.');
  }
  const customer = session.customer.getEntity();
  const store = customer.store.getEntity();
  // A banned store's customer area closes for sessions already open too, not only for new sign-ins.
  if (store.banned) throw new AppError('store_banned', 'This store is closed.');
  assertStoreOrigin(ctx, store);
  return customer;
}
