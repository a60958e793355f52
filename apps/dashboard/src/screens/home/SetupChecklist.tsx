/**
 * `Set up your store`: a new store's five first steps on Home (stores.onboarding, five existence
 * reads on the server), each `Done` or `To do` in words, with a link to where an open step is
 * done. Gone once every step is done. Refetched whenever Home comes back into view (staleTime 0),
 * so a step done in another tab (the storefront, a test purchase) shows on return.
 */
import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import type { ReactNode } from 'react';
import { trpc, type RouterOutputs } from '../../api';
import { useStoreId } from '../../store';
import { StatusBadge } from '../../ui/badge';
import { Loaded } from '../../ui/feedback';
import { Card } from '../../ui/layout';
import { useStorefrontHref } from '../../ui/view-store';

type StepId = RouterOutputs['stores']['onboarding']['steps'][number]['id'];

const linkClass = 'text-sm font-medium whitespace-nowrap';

function StoreLink({ href, children }: { href: string; children: ReactNode }) {
  return (
    <a className={linkClass} href={href} target="_blank" rel="noopener">
      {children}
    </a>
  );
}

export function SetupChecklist({ subdomain }: { subdomain: string }) {
  const storeId = useStoreId();
  const onboarding = useQuery({ ...trpc.stores.onboarding.queryOptions({ storeId }), staleTime: 0 });
  const storefront = useStorefrontHref(subdomain);
  const testStorefront = useStorefrontHref(subdomain, 'test');
  const params = { storeId };
  const STEPS: Record<StepId, { title: string; hint: string; action: ReactNode }> = {
    add_product: {
      title: 'Add a product',
      hint: 'A file, license keys or instructions that buyers get once they pay.',
      action: (
        <Link className={linkClass} to="/stores/$storeId/products" params={params} search={{}}>
          Go to Products
        </Link>
      ),
    },
    payment_methods: {
      title: 'Choose payment methods',
      hint: 'Tick how buyers pay (the test gateway lets you try a purchase) and save.',
      action: (
        <Link className={linkClass} to="/stores/$storeId/settings" params={params}>
          Go to Settings
        </Link>
      ),
    },
    view_store: {
      title: 'View your store',
      hint: 'See your storefront as buyers do; it opens in a new tab.',
      action: <StoreLink href={storefront}>Open your storefront</StoreLink>,
    },
    test_purchase: {
      title: 'Make a test purchase',
      hint: 'Buy a test product with the test gateway: no money moves.',
      action: <StoreLink href={testStorefront}>Open test storefront</StoreLink>,
    },
    api_key: {
      title: 'Create an API key',
      hint: 'For your own site, a theme or scripts to reach the store.',
      action: (
        <Link className={linkClass} to="/stores/$storeId/api-keys" params={params}>
          Go to API keys
        </Link>
      ),
    },
  };

  // A finished store shows nothing, not even while the first answer is on its way back.
  if (onboarding.data?.complete) return null;
  return (
    <Loaded query={onboarding} label="Loading your setup steps…" lines={5}>
      {(data) => {
        const done = data.steps.filter((step) => step.done).length;
        const total = data.steps.length;
        return (
          <Card
            id="setup-heading"
            title="Set up your store"
            description={`${done} of ${total} done`}
            actions={
              // One segment per step, filled when done: the words above say the same.
              <span aria-hidden="true" className="flex gap-1">
                {data.steps.map((step) => (
                  <span
                    key={step.id}
                    className={`block h-1.5 w-6 rounded-full ${step.done ? 'bg-accent' : 'bg-line-strong'}`}
                  />
                ))}
              </span>
            }
            flush
          >
            <ol className="m-0 list-none divide-y divide-line p-0">
              {data.steps.map((step) => {
                const about = STEPS[step.id];
                return (
                  <li key={step.id} className="flex flex-wrap items-center gap-x-4 gap-y-2 px-5 py-3.5">
                    <span className="w-16 shrink-0">
                      <StatusBadge kind="step" status={step.done ? 'done' : 'to do'} />
                    </span>
                    <div className="min-w-0 flex-1 basis-48">
                      <p className={`m-0 font-medium ${step.done ? 'text-muted line-through' : ''}`}>{about.title}</p>
                      {!step.done && <p className="m-0 text-sm text-muted">{about.hint}</p>}
                    </div>
                    {/* On a phone the link wraps under the words, in line with them. */}
                    {!step.done && <span className="ml-20 sm:ml-0">{about.action}</span>}
                  </li>
                );
              })}
            </ol>
          </Card>
        );
      }}
    </Loaded>
  );
}
