/**
 * The frame of every store screen: a banner with the store switcher (`Store`), the `Test mode`
 * switch and `Sign out`, the `Main` navigation, and the screen. Skip link first, so the keyboard
 * reaches the content at once. While test mode is on, a `Test mode` status under the header says
 * so on every screen.
 */
import { useMutation, useQuery } from '@tanstack/react-query';
import { Link, Outlet, useNavigate, useRouter } from '@tanstack/react-router';
import { Switch } from 'react-aria-components';
import { trpc } from '../api';
import { setMode, useMode } from '../mode';
import { sessionQuery, signedOut } from '../session';
import { storesQuery, useStore, useStoreId } from '../store';

const NAV = [
  { to: '/stores/$storeId', label: 'Home', exact: true },
  { to: '/stores/$storeId/orders', label: 'Orders' },
  { to: '/stores/$storeId/products', label: 'Products' },
  { to: '/stores/$storeId/coupons', label: 'Coupons' },
  { to: '/stores/$storeId/blacklist', label: 'Blacklist' },
  { to: '/stores/$storeId/customers', label: 'Customers' },
  { to: '/stores/$storeId/tickets', label: 'Tickets' },
  { to: '/stores/$storeId/licenses', label: 'Licenses' },
  { to: '/stores/$storeId/webhooks', label: 'Webhooks' },
  { to: '/stores/$storeId/events', label: 'Events' },
  { to: '/stores/$storeId/developers', label: 'Developers' },
  { to: '/stores/$storeId/api-keys', label: 'API keys' },
  { to: '/stores/$storeId/staff', label: 'Staff' },
  { to: '/stores/$storeId/settings', label: 'Settings' },
] as const;

function StoreSwitcher() {
  const storeId = useStoreId();
  const navigate = useNavigate();
  const stores = useQuery(storesQuery);
  return (
    <div className="store-switcher">
      <label htmlFor="store-switcher">Store</label>
      <select
        id="store-switcher"
        value={storeId}
        onChange={(event) => {
          const next = event.target.value;
          if (next === '__new') void navigate({ to: '/stores/new' });
          else void navigate({ to: '/stores/$storeId', params: { storeId: next } });
        }}
      >
        {(stores.data?.stores ?? []).map((store) => (
          <option key={store.id} value={store.id}>
            {store.name}
          </option>
        ))}
        <option value="__new">New store…</option>
      </select>
    </div>
  );
}

/** The dashboard's mode (docs/architecture.md, Test mode): a switch, so Space toggles it and a screen reader says on or off. */
function TestModeSwitch() {
  const mode = useMode();
  return (
    <Switch className="mode-switch" isSelected={mode === 'test'} onChange={(on) => setMode(on ? 'test' : 'live')}>
      <span className="mode-switch-track" aria-hidden="true">
        <span className="mode-switch-thumb" />
      </span>
      Test mode
    </Switch>
  );
}

/** Shown on every store screen while test mode is on, announced when it appears. */
function TestModeBanner() {
  const mode = useMode();
  if (mode !== 'test') return null;
  return (
    <div role="status" className="mode-banner">
      <strong>Test mode</strong>{' '}
      <span>
        You are viewing test data: test products, orders, customers, licenses, webhooks and events. Nothing here touches
        your live store; turn off Test mode to see it.
      </span>
    </div>
  );
}

function SignOut() {
  const router = useRouter();
  const signOut = useMutation(
    trpc.auth.logout.mutationOptions({
      onSettled: () => {
        signedOut();
        void router.navigate({ to: '/sign-in', search: {} });
      },
    }),
  );
  return (
    <button type="button" className="button" onClick={() => signOut.mutate(undefined)} disabled={signOut.isPending}>
      Sign out
    </button>
  );
}

export function StoreShell() {
  const storeId = useStoreId();
  const session = useQuery(sessionQuery);
  const { store, stores } = useStore();
  if (stores.data && !store) {
    // Not a store of this seller (or removed from it): the API would say 403 on every screen.
    return (
      <main className="centered" id="main">
        <h1>Store not available</h1>
        <p>This store does not exist or you are not a member of it.</p>
        <Link to="/">Your stores</Link>
      </main>
    );
  }
  return (
    <div className="app">
      <a href="#main" className="skip-link">
        Skip to content
      </a>
      <header className="top">
        <div className="topbar">
          <Link to="/stores/$storeId" params={{ storeId }} className="brand">
            svc
          </Link>
          <StoreSwitcher />
          <TestModeSwitch />
          <span className="muted user">{session.data?.user.email}</span>
          <SignOut />
        </div>
        <TestModeBanner />
      </header>
      <nav aria-label="Main" className="sidebar">
        <ul>
          {NAV.map((item) => (
            <li key={item.label}>
              <Link
                to={item.to}
                params={{ storeId }}
                activeOptions={{ exact: 'exact' in item, includeSearch: false }}
                activeProps={{ 'aria-current': 'page', className: 'active' }}
              >
                {item.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" className="content" tabIndex={-1}>
        <Outlet />
      </main>
    </div>
  );
}
