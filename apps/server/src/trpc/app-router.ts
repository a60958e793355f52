/** The application router: every domain's procedures, one tree for /trpc and REST. */
import { apiKeysRouter } from '../modules/api-keys/api-keys.router.js';
import { blacklistRouter } from '../modules/blacklist/blacklist.router.js';
import { catalogRouter } from '../modules/catalog/catalog.router.js';
import { checkoutRouter } from '../modules/checkout/checkout.router.js';
import { couponsRouter } from '../modules/coupons/coupons.router.js';
import {
  customerDashboardRouter,
  customersRouter,
  storeCustomersRouter,
} from '../modules/customers/customers.router.js';
import { eventsRouter } from '../modules/events/events.router.js';
import { feedbackRouter } from '../modules/feedback/feedback.router.js';
import { fulfilmentRouter, restockRouter } from '../modules/fulfilment/fulfilment.router.js';
import { identityRouter } from '../modules/identity/identity.router.js';
import { orderActionsRouter } from '../modules/order-actions/order-actions.router.js';
import { licensesRouter } from '../modules/licenses/licenses.router.js';
import { ordersRouter } from '../modules/orders/orders.router.js';
import { storesRouter } from '../modules/stores/stores.router.js';
import { testDataRouter } from '../modules/test-data/test-data.router.js';
import { ticketsRouter } from '../modules/tickets/tickets.router.js';
import { trackingRouter } from '../modules/tracking/tracking.router.js';
import { webhooksRouter } from '../modules/webhooks/webhooks.router.js';
import { mergeRouters, router } from './procedures.js';
import { routeTable } from './route-table.js';
import { pinInputCoercion } from './strict-input.js';

export const appRouter = router({
  auth: identityRouter,
  stores: storesRouter,
  apiKeys: apiKeysRouter,
  // Namespaces whose procedures come from two modules (the lower one cannot import the upper).
  orders: mergeRouters(ordersRouter, orderActionsRouter),
  customer: customersRouter,
  customerDashboard: customerDashboardRouter,
  customers: storeCustomersRouter,
  catalog: mergeRouters(catalogRouter, restockRouter),
  checkout: checkoutRouter,
  coupons: couponsRouter,
  events: eventsRouter,
  blacklist: blacklistRouter,
  feedback: feedbackRouter,
  tracking: trackingRouter,
  fulfilment: fulfilmentRouter,
  tickets: ticketsRouter,
  webhooks: webhooksRouter,
  licenses: licensesRouter,
  testData: testDataRouter,
});

// Built at import: a procedure whose declaration has a gap fails here, before anything serves it.
pinInputCoercion(routeTable(appRouter));

export type AppRouter = typeof appRouter;
