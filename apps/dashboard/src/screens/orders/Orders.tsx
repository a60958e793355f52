/**
 * Orders: the store's orders, newest first, one keyset page per round trip. The filters (status,
 * a date range, `q`: one order or one buyer) and the page's cursor live in the URL, so a view can
 * be shared and reloaded; new orders show up on their own (refetched every 10 s and on focus).
 */
import { zodResolver } from '@hookform/resolvers/zod';
import { ORDER_STATUSES as API_STATUSES, ZDashboardListOrdersQuery, ZOrderStatus } from '@svc/schemas';
import { useQuery } from '@tanstack/react-query';
import { getRouteApi, Link } from '@tanstack/react-router';
import { useForm } from 'react-hook-form';
import { z } from 'zod';
import type { RouterOutputs } from '../../api';
import { useStore, useStoreId } from '../../store';
import { StatusBadge } from '../../ui/badge';
import { Loaded } from '../../ui/feedback';
import { SelectInput, TextInput } from '../../ui/fields';
import { onValid } from '../../ui/forms';
import { formatDateTime, formatMoney } from '../../ui/format';
import { KeysetPager } from '../../ui/pager';
import { EmptyState, PageHeader } from '../../ui/layout';
import { DataTable, type ColumnDef } from '../../ui/table';
import { DAY, ordersListQuery } from './orders-query';
import type { OrdersSearch } from './search';
import { buttonClass } from '../../ui/button';

const ordersRoute = getRouteApi('/app/stores/$storeId/orders');

type OrderRow = RouterOutputs['orders']['dashboardList']['orders'][number];

// The filter form: the list's own `q`, a status or none, and a day range (the API's `from` after `to` rule, on days).
const ZFilters = z
  .object({
    status: z.union([ZOrderStatus, z.literal('')]),
    q: z.union([ZDashboardListOrdersQuery.shape.q.unwrap(), z.literal('')]),
    from: z.union([z.string().regex(DAY), z.literal('')]),
    to: z.union([z.string().regex(DAY), z.literal('')]),
  })
  .refine((f) => !f.from || !f.to || f.from <= f.to, { message: 'The start is after the end.', path: ['from'] });
type Filters = z.input<typeof ZFilters>;

const STATUS_OPTIONS = [
  { value: '', label: 'Any status' },
  ...API_STATUSES.map((status) => ({ value: status, label: status[0]!.toUpperCase() + status.slice(1) })),
];

export function Orders() {
  const storeId = useStoreId();
  const search = ordersRoute.useSearch();
  const navigate = ordersRoute.useNavigate();
  const { store } = useStore();
  const currency = store?.currency ?? 'USD';

  const list = useQuery(ordersListQuery(storeId, search));

  const form = useForm<Filters>({
    resolver: zodResolver(ZFilters),
    values: { status: search.status ?? '', q: search.q ?? '', from: search.from ?? '', to: search.to ?? '' },
  });
  const apply = (filters: Filters) => {
    const next: OrdersSearch = {
      status: filters.status || undefined,
      q: filters.q.trim() || undefined,
      from: filters.from || undefined,
      to: filters.to || undefined,
    };
    void navigate({ search: next });
  };

  const columns: ReadonlyArray<ColumnDef<OrderRow>> = [
    { header: 'Status', cell: (order) => <StatusBadge kind="order" status={order.status} /> },
    {
      header: 'Order',
      cell: (order) => (
        <Link to="/stores/$storeId/orders/$orderId" params={{ storeId, orderId: order.orderId }}>
          {order.orderId}
        </Link>
      ),
    },
    { header: 'Product', cell: (order) => order.productName },
    { header: 'Buyer', cell: (order) => order.customerEmail || '—' },
    { header: 'Total', numeric: true, cell: (order) => formatMoney(order.price, currency) },
    { header: 'Date', cell: (order) => formatDateTime(order.createdAt) },
  ];

  const filtered = !!(search.status || search.q || search.from || search.to);
  return (
    <>
      <PageHeader title="Orders" description="Every order of the store, newest first; new ones appear on their own." />
      <form className="toolbar" role="search" aria-label="Filter orders" noValidate onSubmit={onValid(form, apply)}>
        <SelectInput
          label="Status"
          width="sm"
          options={STATUS_OPTIONS}
          registration={form.register('status')}
          error={form.formState.errors.status}
        />
        <TextInput
          label="From"
          type="date"
          width="sm"
          registration={form.register('from')}
          error={form.formState.errors.from}
        />
        <TextInput
          label="To"
          type="date"
          width="sm"
          registration={form.register('to')}
          error={form.formState.errors.to}
        />
        <TextInput
          label="Order or e-mail"
          type="search"
          hint="ORD-number, order id or the buyer's e-mail, exactly"
          width="md"
          maxLength={320}
          registration={form.register('q')}
          error={form.formState.errors.q}
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
      <Loaded query={list} label="Loading orders…">
        {(page) => (
          <>
            <DataTable
              caption="Orders"
              columns={columns}
              rows={page.orders}
              rowKey={(order) => order.id}
              empty={
                filtered ? (
                  <EmptyState title="No orders match these filters.">Clear the filters to see every order.</EmptyState>
                ) : (
                  <EmptyState
                    title="No orders yet."
                    action={
                      <Link to="/stores/$storeId/products" params={{ storeId }} className={buttonClass('secondary')}>
                        Go to products
                      </Link>
                    }
                  >
                    Orders appear here as buyers check out. Share your store, or make a test purchase in Test mode.
                  </EmptyState>
                )
              }
            />
            <KeysetPager from="/stores/$storeId/orders" cursor={search.cursor} nextCursor={page.nextCursor} />
          </>
        )}
      </Loaded>
    </>
  );
}
