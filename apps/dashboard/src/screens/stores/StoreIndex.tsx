import { useQuery } from '@tanstack/react-query';
import { Navigate } from '@tanstack/react-router';
import { storesQuery } from '../../store';
import { Loaded } from '../../ui/feedback';

/** /dashboard/: the seller's first store, or store creation when they have none. */
export function StoreIndex() {
  const stores = useQuery(storesQuery);
  return (
    <main id="main" className="centered">
      <Loaded query={stores} label="Loading your stores…">
        {({ stores: list }) =>
          list[0] ? (
            <Navigate to="/stores/$storeId" params={{ storeId: list[0].id }} replace />
          ) : (
            <Navigate to="/stores/new" replace />
          )
        }
      </Loaded>
    </main>
  );
}
