/** The application router: every domain's procedures, one tree for /trpc and REST; each namespace is one router. */
import { apiKeysRouter } from './routers/api-keys.router.js';
import { blacklistRouter } from './routers/blacklist.router.js';
import { catalogRouter } from './routers/catalog.router.js';
import { checkoutRouter } from './routers/checkout.router.js';
import { couponsRouter } from './routers/coupons.router.js';
import { customerDashboardRouter, customersRouter, storeCustomersRouter } from './routers/customers.router.js';
import { eventsRouter } from './routers/events.router.js';
import { feedbackRouter } from './routers/feedback.router.js';
import { fulfilmentRouter } from './routers/fulfilment.router.js';
import { identityRouter } from './routers/identity.router.js';
import { licensesRouter } from './routers/licenses.router.js';
import { ordersRouter } from './routers/orders.router.js';
import { reportsRouter } from './routers/reports.router.js';
import { storesRouter } from './routers/stores.router.js';
import { subscriptionsRouter } from './routers/subscriptions.router.js';
import { testDataRouter } from './routers/test-data.router.js';
import { ticketsRouter } from './routers/tickets.router.js';
import { trackingRouter } from './routers/tracking.router.js';
import { webhooksRouter } from './routers/webhooks.router.js';
import { router } from '../trpc/procedures.js';
import { routeTable } from './route-table.js';
import { pinInputCoercion } from './strict-input.js';

export const appRouter = router({
  auth: identityRouter,
  stores: storesRouter,
  apiKeys: apiKeysRouter,
  orders: ordersRouter,
  reports: reportsRouter,
  customer: customersRouter,
  customerDashboard: customerDashboardRouter,
  customers: storeCustomersRouter,
  catalog: catalogRouter,
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
  subscriptions: subscriptionsRouter,
  testData: testDataRouter,
});

// Built at import: a procedure whose declaration has a gap fails here, before anything serves it.
pinInputCoercion(routeTable(appRouter));

export type AppRouter = typeof appRouter;
