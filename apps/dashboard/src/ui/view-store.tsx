/**
 * `View store`: the storefront in a new tab, of the dashboard's mode (test products at
 * `/s/{subdomain}?mode=test`, under the storefront's Test mode banner).
 */
import { useMode } from '../mode';

export function ViewStoreLink({ subdomain }: { subdomain: string }) {
  const mode = useMode();
  const href = `/s/${encodeURIComponent(subdomain)}${mode === 'test' ? '?mode=test' : ''}`;
  return (
    <p>
      <a href={href} target="_blank" rel="noopener">
        View store
      </a>{' '}
      <span className="muted">(opens the storefront in a new tab)</span>
    </p>
  );
}
