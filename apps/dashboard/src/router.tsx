/**
 * The dashboard's routes (TanStack Router, code-based). Search params are typed, so filters and
 * cursors live in the URL and a view can be shared and reloaded; each screen's folder declares its
 * own (`search.ts`) and this file imports them. Every screen's component is loaded lazily (the
 * shell's JavaScript stays small), and every route has an error boundary.
 *
 * The router sits above the screens: a screen reaches its route by id through the registered
 * router's types (`getRouteApi('/app/stores/$storeId/orders')`, `useSearch({ from })`, `Link`'s
 * typed `to`), never by importing this file, so no import runs back up from a screen to here.
 */
import { createRootRoute, createRoute, createRouter, lazyRouteComponent, Outlet } from '@tanstack/react-router';
import { queryClient, whenEnrolmentRequired, whenSignedOut } from './api';
import { validateConfirmEmailSearch, validateResetPasswordSearch, validateSignInSearch } from './screens/auth/search';
import { validateEventsSearch } from './screens/events/search';
import { validateLicensesSearch } from './screens/licenses/search';
import { ordersListQuery } from './screens/orders/orders-query';
import { validateOrdersSearch } from './screens/orders/search';
import { validateSubscriptionsSearch } from './screens/subscriptions/search';
import { validateTaxSearch } from './screens/tax/search';
import { subscriptionsListQuery } from './screens/subscriptions/subscriptions-query';
import { validateDeliveriesSearch } from './screens/webhooks/search';
import { validatePageSearch } from './search-params';
import { requireSession, signedOut } from './session';
import { RouteError, NotFound } from './shell/RouteError';

const rootRoute = createRootRoute({
  component: Outlet,
  errorComponent: RouteError,
  notFoundComponent: NotFound,
});

// Signed-out pages.
const signInRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: 'sign-in',
  validateSearch: validateSignInSearch,
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
  validateSearch: validateResetPasswordSearch,
  component: lazyRouteComponent(() => import('./screens/auth/ResetPassword'), 'ResetPassword'),
});

// The link mailed to a new e-mail address: its token is the credential, signed in or not.
const confirmEmailRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: 'confirm-email',
  validateSearch: validateConfirmEmailSearch,
  component: lazyRouteComponent(() => import('./screens/account/ConfirmEmail'), 'ConfirmEmail'),
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
const accountRoute = createRoute({
  getParentRoute: () => appRoute,
  path: 'account',
  component: lazyRouteComponent(() => import('./screens/account/Account'), 'Account'),
  errorComponent: RouteError,
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

const homeRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: '/',
  component: lazyRouteComponent(() => import('./screens/home/Home'), 'Home'),
  errorComponent: RouteError,
});
const ordersRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'orders',
  validateSearch: validateOrdersSearch,
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
const orderRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'orders/$orderId',
  component: lazyRouteComponent(() => import('./screens/orders/OrderPage'), 'OrderPage'),
  errorComponent: RouteError,
});
const subscriptionsRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'subscriptions',
  validateSearch: validateSubscriptionsSearch,
  loaderDeps: ({ search }) => search,
  // Asked for beside the chunks, as the Orders list is (above).
  loader: ({ params, deps }) => {
    void queryClient.prefetchQuery(subscriptionsListQuery(params.storeId, deps));
  },
  component: lazyRouteComponent(() => import('./screens/subscriptions/Subscriptions'), 'Subscriptions'),
  errorComponent: RouteError,
});
const subscriptionRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'subscriptions/$subscriptionId',
  component: lazyRouteComponent(() => import('./screens/subscriptions/SubscriptionPage'), 'SubscriptionPage'),
  errorComponent: RouteError,
});
const productsRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'products',
  validateSearch: validatePageSearch,
  component: lazyRouteComponent(() => import('./screens/products/Products'), 'Products'),
  errorComponent: RouteError,
});
const newProductRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'products/new',
  component: lazyRouteComponent(() => import('./screens/products/ProductForm'), 'NewProduct'),
  errorComponent: RouteError,
});
const productRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'products/$productId',
  component: lazyRouteComponent(() => import('./screens/products/ProductPage'), 'ProductPage'),
  errorComponent: RouteError,
});
const couponsRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'coupons',
  validateSearch: validatePageSearch,
  component: lazyRouteComponent(() => import('./screens/coupons/Coupons'), 'Coupons'),
  errorComponent: RouteError,
});
const blacklistRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'blacklist',
  validateSearch: validatePageSearch,
  component: lazyRouteComponent(() => import('./screens/blacklist/Blacklist'), 'Blacklist'),
  errorComponent: RouteError,
});
const customersRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'customers',
  validateSearch: validatePageSearch,
  component: lazyRouteComponent(() => import('./screens/customers/Customers'), 'Customers'),
  errorComponent: RouteError,
});
const taxRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'tax',
  validateSearch: validateTaxSearch,
  component: lazyRouteComponent(() => import('./screens/tax/Tax'), 'Tax'),
  errorComponent: RouteError,
});
const ticketsRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'tickets',
  validateSearch: validatePageSearch,
  component: lazyRouteComponent(() => import('./screens/tickets/Tickets'), 'Tickets'),
  errorComponent: RouteError,
});
const ticketRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'tickets/$ticketId',
  component: lazyRouteComponent(() => import('./screens/tickets/TicketPage'), 'TicketPage'),
  errorComponent: RouteError,
});
const licensesRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'licenses',
  validateSearch: validateLicensesSearch,
  component: lazyRouteComponent(() => import('./screens/licenses/Licenses'), 'Licenses'),
  errorComponent: RouteError,
});
const licenseRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'licenses/$licenseId',
  component: lazyRouteComponent(() => import('./screens/licenses/LicensePage'), 'LicensePage'),
  errorComponent: RouteError,
});
const webhooksRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'webhooks',
  component: lazyRouteComponent(() => import('./screens/webhooks/Webhooks'), 'Webhooks'),
  errorComponent: RouteError,
});
const webhookRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'webhooks/$webhookId',
  validateSearch: validateDeliveriesSearch,
  component: lazyRouteComponent(() => import('./screens/webhooks/WebhookPage'), 'WebhookPage'),
  errorComponent: RouteError,
});
const eventsRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'events',
  validateSearch: validateEventsSearch,
  component: lazyRouteComponent(() => import('./screens/events/Events'), 'Events'),
  errorComponent: RouteError,
});
const eventRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'events/$eventId',
  component: lazyRouteComponent(() => import('./screens/events/EventPage'), 'EventPage'),
  errorComponent: RouteError,
});
const developersRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'developers',
  component: lazyRouteComponent(() => import('./screens/developers/Developers'), 'Developers'),
  errorComponent: RouteError,
});
const apiKeysRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'api-keys',
  component: lazyRouteComponent(() => import('./screens/api-keys/ApiKeys'), 'ApiKeys'),
  errorComponent: RouteError,
});
const staffRoute = createRoute({
  getParentRoute: () => storeRoute,
  path: 'staff',
  component: lazyRouteComponent(() => import('./screens/staff/Staff'), 'Staff'),
  errorComponent: RouteError,
});
const settingsRoute = createRoute({
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
  confirmEmailRoute,
  appRoute.addChildren([
    indexRoute,
    newStoreRoute,
    accountRoute,
    storeRoute.addChildren([
      homeRoute,
      ordersRoute,
      orderRoute,
      subscriptionsRoute,
      subscriptionRoute,
      productsRoute,
      newProductRoute,
      productRoute,
      couponsRoute,
      blacklistRoute,
      customersRoute,
      taxRoute,
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

// A store whose owner requires two-factor sign-in refused this member: the Account page says
// which store and why, and sets it up.
whenEnrolmentRequired(() => {
  if (router.state.location.pathname.startsWith('/account')) return;
  void router.navigate({ to: '/account' });
});
