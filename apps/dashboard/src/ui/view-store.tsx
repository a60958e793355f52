/**
 * `View store`: the storefront in a new tab, of the dashboard's mode. In test mode the link
 * carries a preview token (`stores.previewToken`, an hour long, fetched again every half hour):
 * the storefront shows test products to the store's seller only, and the token is what lets the
 * link work where this session's cookie is not sent (another browser, a colleague's).
 */
import { useQuery } from '@tanstack/react-query';
import { trpc } from '../api';
import { useMode } from '../mode';
import { useStoreId } from '../store';

const HALF_HOUR = 30 * 60_000;

export function ViewStoreLink({ subdomain }: { subdomain: string }) {
  const mode = useMode();
  const storeId = useStoreId();
  const preview = useQuery({
    ...trpc.stores.previewToken.queryOptions({ storeId }),
    enabled: mode === 'test' && storeId !== '',
    staleTime: HALF_HOUR,
    refetchInterval: HALF_HOUR,
  });
  const store = `/s/${encodeURIComponent(subdomain)}`;
  // Until the token is there, the test page still opens for this browser's session.
  const href = mode === 'test' ? (preview.data?.url ?? `${store}?mode=test`) : store;
  return (
    <p>
      <a href={href} target="_blank" rel="noopener">
        View store
      </a>{' '}
      <span className="muted">(opens the storefront in a new tab)</span>
    </p>
  );
}
