/**
 * The frame of every store screen, Medusa Admin's: a sidebar with the store switcher (`Store`), the
 * `Test mode` switch, the `Main` navigation and, at its foot, who is signed in, `Account` and `Sign out`; the
 * screen beside it. On a phone the sidebar folds behind a `Menu` button in a top bar: it opens as a
 * drawer (a modal dialog: focus moves in and returns to the button; Escape, a tap outside or
 * choosing a link closes it). Skip link first, so the keyboard reaches the content at once. While
 * test mode is on, a `Test mode` status above the screen says so on every screen.
 */
import { useMutation, useQuery } from '@tanstack/react-query';
import { Link, Outlet, useNavigate, useRouter } from '@tanstack/react-router';
import { useEffect, useId, useState } from 'react';
import { Button, Dialog, Modal, ModalOverlay, Switch } from 'react-aria-components';
import { trpc } from '../api';
import { buttonClass } from '../ui/button';
import { setMode, useMode } from '../mode';
import { sessionQuery, signedOut } from '../session';
import { storesQuery, useStore, useStoreId } from '../store';

const NAV = [
  { to: '/stores/$storeId', label: 'Home', exact: true },
  { to: '/stores/$storeId/orders', label: 'Orders' },
  { to: '/stores/$storeId/subscriptions', label: 'Subscriptions' },
  { to: '/stores/$storeId/products', label: 'Products' },
  { to: '/stores/$storeId/coupons', label: 'Coupons' },
  { to: '/stores/$storeId/blacklist', label: 'Blacklist' },
  { to: '/stores/$storeId/customers', label: 'Customers' },
  { to: '/stores/$storeId/tax', label: 'Tax' },
  { to: '/stores/$storeId/tickets', label: 'Tickets' },
  { to: '/stores/$storeId/licenses', label: 'Licenses' },
  { to: '/stores/$storeId/webhooks', label: 'Webhooks' },
  { to: '/stores/$storeId/events', label: 'Events' },
  { to: '/stores/$storeId/developers', label: 'Developers' },
  { to: '/stores/$storeId/api-keys', label: 'API keys' },
  { to: '/stores/$storeId/staff', label: 'Staff' },
  { to: '/stores/$storeId/settings', label: 'Settings' },
] as const;

function StoreSwitcher({ onNavigate }: { onNavigate: () => void }) {
  const storeId = useStoreId();
  const navigate = useNavigate();
  const stores = useQuery(storesQuery);
  // The sidebar is drawn twice (beside the screen, hidden on a phone, and in the phone's drawer): ids of its own.
  const id = useId();
  return (
    <div className="flex flex-col gap-1">
      <label htmlFor={id} className="text-xs font-medium tracking-wide text-muted uppercase">
        Store
      </label>
      <select
        id={id}
        className="w-full"
        value={storeId}
        onChange={(event) => {
          const next = event.target.value;
          onNavigate();
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
    <Switch
      className="group inline-flex cursor-pointer items-center gap-2 text-sm"
      isSelected={mode === 'test'}
      onChange={(on) => setMode(on ? 'test' : 'live')}
    >
      <span
        aria-hidden="true"
        className="relative inline-block h-5.5 w-10 rounded-full border-2 border-muted bg-bg transition-colors group-data-focus-visible:outline-3 group-data-focus-visible:outline-offset-2 group-data-focus-visible:outline-focus group-data-selected:border-warning group-data-selected:bg-warning motion-reduce:transition-none"
      >
        <span className="absolute top-0.5 left-0.5 size-3.5 rounded-full bg-muted transition-[left] group-data-selected:left-5 group-data-selected:bg-warning-soft motion-reduce:transition-none" />
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
    <div role="status" className="border-b-2 border-warning bg-warning-soft px-4 py-2 text-sm text-warning md:px-8">
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
    <button
      type="button"
      className={buttonClass('secondary', 'w-full')}
      onClick={() => signOut.mutate(undefined)}
      disabled={signOut.isPending}
    >
      Sign out
    </button>
  );
}

/** What the sidebar holds, at 1280 beside the screen and on a phone in the drawer. */
function Sidebar({ onNavigate }: { onNavigate: () => void }) {
  const storeId = useStoreId();
  const session = useQuery(sessionQuery);
  return (
    <div className="flex h-full min-h-0 flex-col gap-4 p-4">
      <Link
        to="/stores/$storeId"
        params={{ storeId }}
        onClick={onNavigate}
        className="text-xl font-bold tracking-tight text-fg no-underline hover:no-underline"
      >
        svc
      </Link>
      <StoreSwitcher onNavigate={onNavigate} />
      <TestModeSwitch />
      <nav aria-label="Main" className="-mx-2 min-h-0 flex-1 overflow-y-auto">
        <ul className="m-0 flex list-none flex-col gap-0.5 p-0">
          {NAV.map((item) => (
            <li key={item.label}>
              <Link
                to={item.to}
                params={{ storeId }}
                onClick={onNavigate}
                activeOptions={{ exact: 'exact' in item, includeSearch: false }}
                className="block rounded-md px-3 py-1.5 text-sm text-fg no-underline hover:bg-bg hover:no-underline aria-[current=page]:bg-accent-soft aria-[current=page]:font-semibold aria-[current=page]:text-accent"
                activeProps={{ 'aria-current': 'page' }}
              >
                {item.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <div className="flex flex-col gap-2 border-t border-line pt-4">
        <span className="truncate text-sm text-muted" title={session.data?.user.email}>
          {session.data?.user.email}
        </span>
        <Link to="/account" onClick={onNavigate} className={buttonClass('secondary', 'w-full')}>
          Account
        </Link>
        <SignOut />
      </div>
    </div>
  );
}

const WIDE = '(min-width: 768px)';

/** The phone's `Menu` button and the drawer it opens. */
function PhoneMenu() {
  const [open, setOpen] = useState(false);
  // Widened past the phone layout while open: the sidebar shows, the drawer goes.
  useEffect(() => {
    const wide = window.matchMedia(WIDE);
    const close = () => wide.matches && setOpen(false);
    wide.addEventListener('change', close);
    return () => wide.removeEventListener('change', close);
  }, []);
  return (
    <>
      <Button className={buttonClass('secondary')} aria-expanded={open} onPress={() => setOpen(true)}>
        Menu
      </Button>
      <ModalOverlay
        isDismissable
        isOpen={open}
        onOpenChange={setOpen}
        className="fixed inset-0 z-40 bg-scrim md:hidden"
      >
        <Modal className="h-full w-72 max-w-[85vw] border-r border-line bg-surface shadow-md outline-none">
          <Dialog aria-label="Navigation" className="h-full outline-none">
            <Sidebar onNavigate={() => setOpen(false)} />
          </Dialog>
        </Modal>
      </ModalOverlay>
    </>
  );
}

export function StoreShell() {
  const storeId = useStoreId();
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
    <div className="min-h-screen bg-bg md:grid md:grid-cols-[15rem_minmax(0,1fr)]">
      <a href="#main" className="absolute -left-[9999px] z-50 rounded-md bg-bg p-2 focus:top-2 focus:left-4">
        Skip to content
      </a>
      <div className="sticky top-0 hidden h-screen border-r border-line bg-surface md:block">
        <Sidebar onNavigate={() => undefined} />
      </div>
      <div className="flex min-w-0 flex-col">
        <header className="sticky top-0 z-30 flex items-center gap-3 border-b border-line bg-surface px-4 py-2 md:hidden">
          <PhoneMenu />
          <Link
            to="/stores/$storeId"
            params={{ storeId }}
            className="font-bold tracking-tight text-fg no-underline hover:no-underline"
          >
            svc
          </Link>
          <span className="min-w-0 truncate text-sm text-muted">{store?.name}</span>
        </header>
        <TestModeBanner />
        <main id="main" className="min-w-0 flex-1 px-4 py-6 focus:outline-none md:px-8 md:py-8" tabIndex={-1}>
          <div className="mx-auto w-full max-w-6xl min-w-0">
            <Outlet />
          </div>
        </main>
      </div>
    </div>
  );
}
