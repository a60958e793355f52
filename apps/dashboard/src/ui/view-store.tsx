/**
 * `View store`: the storefront in a new tab, of the dashboard's mode. In test mode the link
 * carries a preview token (`stores.previewToken`, an hour long, fetched again every half hour):
 * the storefront shows test products to the store's seller only, and the token is what lets the
 * link work where this session's cookie is not sent (another browser, a colleague's).
 */
import { useQuery } from '@tanstack/react-query';
import { trpc } from '../api';
import { useMode, type Mode } from '../mode';
import { useStoreId } from '../store';

const HALF_HOUR = 30 * 60_000;

/**
 * The storefront's address in `mode` (the dashboard's by default): in test mode the preview link
 * once its token is there; until then the test page still opens for this browser's session.
 */
export function useStorefrontHref(subdomain: string, mode?: Mode): string {
  const current = useMode();
  const shown = mode ?? current;
  const storeId = useStoreId();
  const preview = useQuery({
    ...trpc.stores.previewToken.queryOptions({ storeId }),
    enabled: shown === 'test' && storeId !== '',
    staleTime: HALF_HOUR,
    refetchInterval: HALF_HOUR,
  });
  const store = `/s/${encodeURIComponent(subdomain)}`;
  return shown === 'test' ? (preview.data?.url ?? `${store}?mode=test`) : store;
}

export function ViewStoreLink({ subdomain }: { subdomain: string }) {
  const href = useStorefrontHref(subdomain);
  return (
    <p>
      <a href={href} target="_blank" rel="noopener">
        View store
      </a>{' '}
      <span className="muted">(opens the storefront in a new tab)</span>
    </p>
  );
}
