/** The application router: every domain's procedures, one tree for /trpc and REST. */
import { apiKeysRouter } from '../modules/api-keys/api-keys.router.js';
import { customerDashboardRouter, customersRouter } from '../modules/customers/customers.router.js';
import { identityRouter } from '../modules/identity/identity.router.js';
import { ordersRouter } from '../modules/orders/orders.router.js';
import { storesRouter } from '../modules/stores/stores.router.js';
import { router } from './procedures.js';
import { pinInputCoercion } from './strict-input.js';

export const appRouter = router({
  auth: identityRouter,
  stores: storesRouter,
  apiKeys: apiKeysRouter,
  orders: ordersRouter,
  customer: customersRouter,
  customerDashboard: customerDashboardRouter,
});

pinInputCoercion(appRouter);

export type AppRouter = typeof appRouter;
