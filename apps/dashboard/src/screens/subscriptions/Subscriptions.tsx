/**
 * Subscriptions: the store's subscriptions, newest first, one keyset page per round trip
 * (subscriptions.list). The filters (status, product, the buyer's e-mail, exactly) and the page's
 * cursor live in the URL, so a view can be shared and reloaded.
 */
import { zodResolver } from '@hookform/resolvers/zod';
import { SUBSCRIPTION_STATUSES as API_STATUSES, ZListSubscriptionsQuery, ZSubscriptionStatus } from '@svc/schemas';
import { useQuery } from '@tanstack/react-query';
import { getRouteApi, Link } from '@tanstack/react-router';
import { useForm } from 'react-hook-form';
import { z } from 'zod';
import { trpc, type RouterOutputs } from '../../api';
import { useStoreId } from '../../store';
import { StatusBadge, statusLabel } from '../../ui/badge';
import { buttonClass } from '../../ui/button';
import { Loaded } from '../../ui/feedback';
import { SelectInput, TextInput } from '../../ui/fields';
import { onValid } from '../../ui/forms';
import { formatDate, formatMoney } from '../../ui/format';
import { EmptyState, PageHeader } from '../../ui/layout';
import { KeysetPager } from '../../ui/pager';
import { DataTable, type ColumnDef } from '../../ui/table';
import type { SubscriptionsSearch } from './search';
import { subscriptionsListQuery } from './subscriptions-query';
import { cadenceLabel, chargeLine } from './words';

const subscriptionsRoute = getRouteApi('/app/stores/$storeId/subscriptions');

type SubscriptionRow = RouterOutputs['subscriptions']['list']['subscriptions'][number];

// The filter form: a status or none, a product or none, and the buyer's e-mail as the API takes it.
const ZFilters = z.object({
  status: z.union([ZSubscriptionStatus, z.literal('')]),
  productId: z.string().max(32),
  email: z.union([ZListSubscriptionsQuery.shape.customerEmail.unwrap(), z.literal('')]),
});
type Filters = z.input<typeof ZFilters>;

const STATUS_OPTIONS = [
  { value: '', label: 'Any status' },
  ...API_STATUSES.map((status) => ({ value: status, label: statusLabel(status) })),
];

export function Subscriptions() {
  const storeId = useStoreId();
  const search = subscriptionsRoute.useSearch();
  const navigate = subscriptionsRoute.useNavigate();

  const list = useQuery(subscriptionsListQuery(storeId, search));
  const products = useQuery(trpc.catalog.dashboardList.queryOptions({ storeId }));
  const recurring = (products.data?.products ?? []).filter(
    (product) => product.plans.length > 0 || product.id === search.productId,
  );

  const form = useForm<Filters>({
    resolver: zodResolver(ZFilters),
    values: { status: search.status ?? '', productId: search.productId ?? '', email: search.email ?? '' },
  });
  const apply = (filters: Filters) => {
    const next: SubscriptionsSearch = {
      status: filters.status || undefined,
      productId: filters.productId || undefined,
      email: filters.email.trim().toLowerCase() || undefined,
    };
    void navigate({ search: next });
  };

  const columns: ReadonlyArray<ColumnDef<SubscriptionRow>> = [
    {
      header: 'Customer',
      cell: (row) => (
        <Link
          to="/stores/$storeId/subscriptions/$subscriptionId"
          params={{ storeId, subscriptionId: row.id }}
          className="break-all"
        >
          {row.customerEmail || row.id}
        </Link>
      ),
      wrap: true,
    },
    {
      header: 'Plan',
      cell: (row) => (
        <>
          <span className="break-words">{row.productName}</span>
          <span className="block text-sm text-muted">
            {cadenceLabel(row)}
            {row.quantity > 1 ? `, ${row.quantity} seats` : ''}
          </span>
        </>
      ),
      wrap: true,
    },
    { header: 'Status', cell: (row) => <StatusBadge kind="subscription" status={row.status} /> },
    {
      header: 'Amount',
      numeric: true,
      cell: (row) => `${formatMoney(row.amount, row.currency)} / ${cadenceLabel(row, true)}`,
    },
    { header: 'Next charge', cell: (row) => chargeLine(row, formatDate) },
  ];

  const filtered = !!(search.status || search.productId || search.email);
  return (
    <>
      <PageHeader title="Subscriptions" description="Buyers' subscriptions to your recurring products, newest first." />
      <form
        className="toolbar"
        role="search"
        aria-label="Filter subscriptions"
        noValidate
        onSubmit={onValid(form, apply)}
      >
        <SelectInput
          label="Status"
          width="sm"
          options={STATUS_OPTIONS}
          registration={form.register('status')}
          error={form.formState.errors.status}
        />
        <SelectInput
          label="Product"
          width="md"
          options={[
            { value: '', label: 'All products' },
            ...recurring.map((product) => ({ value: product.id, label: product.name })),
          ]}
          registration={form.register('productId')}
          error={form.formState.errors.productId}
        />
        <TextInput
          label="Customer e-mail"
          type="search"
          hint="The buyer's address, exactly"
          width="md"
          maxLength={320}
          registration={form.register('email')}
          error={form.formState.errors.email}
        />
        <button type="submit" className={buttonClass('primary')}>
          Apply filters
        </button>
        {filtered && (
          <Link to="." search={{}} className={buttonClass('secondary')}>
            Clear filters
          </Link>
        )}
      </form>
      <Loaded query={list} label="Loading subscriptions…">
        {(page) => (
          <>
            <DataTable
              caption="Subscriptions"
              columns={columns}
              rows={page.subscriptions}
              rowKey={(row) => row.id}
              empty={
                filtered ? (
                  <EmptyState title="No subscriptions match these filters.">
                    Clear the filters to see every subscription.
                  </EmptyState>
                ) : (
                  <EmptyState
                    title="No subscriptions yet."
                    action={
                      <Link to="/stores/$storeId/products" params={{ storeId }} className={buttonClass('secondary')}>
                        Go to products
                      </Link>
                    }
                  >
                    Give a product monthly or yearly plans: each buyer who checks out on one appears here.
                  </EmptyState>
                )
              }
            />
            <KeysetPager from="/stores/$storeId/subscriptions" cursor={search.cursor} nextCursor={page.nextCursor} />
          </>
        )}
      </Loaded>
    </>
  );
}
