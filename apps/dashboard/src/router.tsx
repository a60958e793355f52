/**
 * The dashboard's routes (TanStack Router, code-based). Search params are typed here, so filters
 * and cursors live in the URL and a view can be shared and reloaded; every screen's component is
 * loaded lazily (the shell's JavaScript stays small), and every route has an error boundary.
 */
import {
  createRootRoute,
  createRoute,
  createRouter,
  lazyRouteComponent,
  Outlet,
  redirect,
} from '@tanstack/react-router';
import { queryClient, whenSignedOut } from './api';
import { ordersListQuery } from './screens/orders/orders-query';
import { requireSession, signedOut } from './session';
import { RouteError, NotFound } from './shell/RouteError';

/** A search param that is a non-empty string, or nothing. */
function text(value: unknown, max = 200): string | undefined {
  return typeof value === 'string' && value.length > 0 && value.length <= max ? value : undefined;
}
function oneOf<T extends string>(value: unknown, allowed: readonly T[]): T | undefined {
  return allowed.includes(value as T) ? (value as T) : undefined;
}

// The API's statuses (@svc/schemas ORDER_STATUSES), repeated here so the shell does not load zod; a test compares them.
export const ORDER_STATUSES = [
  'pending',
  'paid',
  'processing',
  'completed',
  'refunded',
  'cancelled',
  'expired',
] as const;
export type OrderStatusFilter = (typeof ORDER_STATUSES)[number];

export interface OrdersSearch {
  status?: OrderStatusFilter;
  q?: string;
  from?: string;
  to?: string;
  cursor?: string;
}
export interface PageSearch {
  cursor?: string;
  q?: string;
}
// The API's license and delivery statuses (@svc/schemas LICENSE_STATUSES, DELIVERY_STATUSES), repeated for the same reason.
export const LICENSE_STATUSES = ['active', 'expired', 'disabled'] as const;
export interface LicensesSearch {
  productId?: string;
  status?: (typeof LICENSE_STATUSES)[number];
  cursor?: string;
}
export const DELIVERY_STATUSES = ['pending', 'success', 'failed', 'queued', 'skipped'] as const;
export interface DeliveriesSearch {
  status?: (typeof DELIVERY_STATUSES)[number];
  cursor?: string;
}
export interface EventsSearch {
  type?: string;
  from?: string;
  to?: string;
  cursor?: string;
}

const rootRoute = createRootRoute({
  component: Outlet,
  errorComponent: RouteError,
  notFoundComponent: NotFound,
});

// Signed-out pages.
const signInRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: 'sign-in',
  validateSearch: (search): { redirect?: string } => ({ redirect: text(search.redirect, 2000) }),
  component: lazyRouteComponent(() => import('./screens/auth/SignIn'), 'SignIn'),
});
const registerRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: 'register',
  component: lazyRouteComponent(() => import('./screens/auth/Register'), 'Register'),
});
const forgotRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: 'forgot-password',
  component: lazyRouteComponent(() => import('./screens/auth/ForgotPassword'), 'ForgotPassword'),
});
const resetRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: 'reset-password',
  validateSearch: (search): { token?: string } => ({ token: text(search.token) }),
  component: lazyRouteComponent(() => import('./screens/auth/ResetPassword'), 'ResetPassword'),
});

// Everything else needs a session; without one, sign-in and then back here.
const appRoute = createRoute({
  getParentRoute: () => rootRoute,
  id: 'app',
  beforeLoad: ({ location }) => {
    // The screens' chunks start loading while the session is checked, not after: they hold no
    // data (a signed-out visitor only fetched JavaScript it will not run), and the first screen
    // then waits for the slower of the two instead of both in turn.
    for (const route of router.getMatchedRoutes(location.pathname)[0]) void router.loadRouteChunk(route);
    return requireSession(location.href);
  },
  component: Outlet,
  errorComponent: RouteError,
});
const indexRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/',
  component: lazyRouteComponent(() => import('./screens/stores/StoreIndex'), 'StoreIndex'),
});
const newStoreRoute = createRoute({
  getParentRoute: () => appRoute,
  path: 'stores/new',
  component: lazyRouteComponent(() => import('./screens/stores/NewStore'), 'NewStore'),
});
const storeRoute = createRoute({
  getParentRoute: () => appRoute,
  path: 'stores/$storeId',
  component: lazyRouteComponent(() => import('./shell/StoreShell'), 'StoreShell'),
  errorComponent: RouteError,
});

const pageSearch = (search: Record<string, unknown>): PageSearch => ({
  cursor: text(search.cursor),
  q: text(search.q),
});
const ordersSearch = (search: Record<string, unknown>): OrdersSearch => ({
  status: oneOf(search.status, ORDER_STATUSES),
  q: text(search.q),
  from: text(search.from, 40),
  to: text(search.to, 40),
  cursor: text(search.cursor),
});

export const homeRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: '/',
  component: lazyRouteComponent(() => import('./screens/home/Home'), 'Home'),
  errorComponent: RouteError,
});
export const ordersRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'orders',
  validateSearch: ordersSearch,
  loaderDeps: ({ search }) => search,
  // The list is asked for as soon as the session is known, while the shell's and the screen's
  // chunks load (the router fetches them beside the loaders), not once the screen has rendered;
  // the screen finds it in the cache under the same key. Not awaited: the screen shows its own
  // loading state and errors.
  loader: ({ params, deps }) => {
    void queryClient.prefetchQuery(ordersListQuery(params.storeId, deps));
  },
  component: lazyRouteComponent(() => import('./screens/orders/Orders'), 'Orders'),
  errorComponent: RouteError,
});
export const orderRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'orders/$orderId',
  component: lazyRouteComponent(() => import('./screens/orders/OrderPage'), 'OrderPage'),
  errorComponent: RouteError,
});
export const productsRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'products',
  validateSearch: pageSearch,
  component: lazyRouteComponent(() => import('./screens/products/Products'), 'Products'),
  errorComponent: RouteError,
});
export const newProductRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'products/new',
  component: lazyRouteComponent(() => import('./screens/products/ProductForm'), 'NewProduct'),
  errorComponent: RouteError,
});
export const productRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'products/$productId',
  component: lazyRouteComponent(() => import('./screens/products/ProductPage'), 'ProductPage'),
  errorComponent: RouteError,
});
export const couponsRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'coupons',
  validateSearch: pageSearch,
  component: lazyRouteComponent(() => import('./screens/coupons/Coupons'), 'Coupons'),
  errorComponent: RouteError,
});
export const blacklistRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'blacklist',
  validateSearch: pageSearch,
  component: lazyRouteComponent(() => import('./screens/blacklist/Blacklist'), 'Blacklist'),
  errorComponent: RouteError,
});
export const customersRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'customers',
  validateSearch: pageSearch,
  component: lazyRouteComponent(() => import('./screens/customers/Customers'), 'Customers'),
  errorComponent: RouteError,
});
export const ticketsRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'tickets',
  validateSearch: pageSearch,
  component: lazyRouteComponent(() => import('./screens/tickets/Tickets'), 'Tickets'),
  errorComponent: RouteError,
});
export const ticketRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'tickets/$ticketId',
  component: lazyRouteComponent(() => import('./screens/tickets/TicketPage'), 'TicketPage'),
  errorComponent: RouteError,
});
export const licensesRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'licenses',
  validateSearch: (search): LicensesSearch => ({
    productId: text(search.productId, 32),
    status: oneOf(search.status, LICENSE_STATUSES),
    cursor: text(search.cursor),
  }),
  component: lazyRouteComponent(() => import('./screens/licenses/Licenses'), 'Licenses'),
  errorComponent: RouteError,
});
export const licenseRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'licenses/$licenseId',
  component: lazyRouteComponent(() => import('./screens/licenses/LicensePage'), 'LicensePage'),
  errorComponent: RouteError,
});
export const webhooksRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'webhooks',
  component: lazyRouteComponent(() => import('./screens/webhooks/Webhooks'), 'Webhooks'),
  errorComponent: RouteError,
});
export const webhookRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'webhooks/$webhookId',
  validateSearch: (search): DeliveriesSearch => ({
    status: oneOf(search.status, DELIVERY_STATUSES),
    cursor: text(search.cursor),
  }),
  component: lazyRouteComponent(() => import('./screens/webhooks/WebhookPage'), 'WebhookPage'),
  errorComponent: RouteError,
});
export const eventsRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'events',
  validateSearch: (search): EventsSearch => ({
    type: text(search.type, 50),
    from: text(search.from, 40),
    to: text(search.to, 40),
    cursor: text(search.cursor),
  }),
  component: lazyRouteComponent(() => import('./screens/events/Events'), 'Events'),
  errorComponent: RouteError,
});
export const eventRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'events/$eventId',
  component: lazyRouteComponent(() => import('./screens/events/EventPage'), 'EventPage'),
  errorComponent: RouteError,
});
export const developersRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'developers',
  component: lazyRouteComponent(() => import('./screens/developers/Developers'), 'Developers'),
  errorComponent: RouteError,
});
export const apiKeysRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'api-keys',
  component: lazyRouteComponent(() => import('./screens/api-keys/ApiKeys'), 'ApiKeys'),
  errorComponent: RouteError,
});
export const staffRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'staff',
  component: lazyRouteComponent(() => import('./screens/staff/Staff'), 'Staff'),
  errorComponent: RouteError,
});
export const settingsRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'settings',
  component: lazyRouteComponent(() => import('./screens/settings/Settings'), 'Settings'),
  errorComponent: RouteError,
});

const routeTree = rootRoute.addChildren([
  signInRoute,
  registerRoute,
  forgotRoute,
  resetRoute,
  appRoute.addChildren([
    indexRoute,
    newStoreRoute,
    storeRoute.addChildren([
      homeRoute,
      ordersRoute,
      orderRoute,
      productsRoute,
      newProductRoute,
      productRoute,
      couponsRoute,
      blacklistRoute,
      customersRoute,
      ticketsRoute,
      ticketRoute,
      licensesRoute,
      licenseRoute,
      webhooksRoute,
      webhookRoute,
      eventsRoute,
      eventRoute,
      developersRoute,
      apiKeysRoute,
      staffRoute,
      settingsRoute,
    ]),
  ]),
]);

export const router = createRouter({
  routeTree,
  basepath: '/dashboard',
  defaultPreload: 'intent',
  defaultErrorComponent: RouteError,
  scrollRestoration: true,
});

declare module '@tanstack/react-router' {
  interface Register {
    router: typeof router;
  }
}

// A call answered 401 (the session expired or was ended elsewhere): sign in, then come back here.
whenSignedOut(() => {
  const here = router.state.location.href;
  if (router.state.location.pathname.startsWith('/sign-in')) return;
  signedOut();
  void router.navigate({ to: '/sign-in', search: { redirect: here } });
});

export { redirect };
